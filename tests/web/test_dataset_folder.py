"""The competitions' dataset cache folder (``web.datasets.private_temp_folder``) in a temporary folder
another user of the machine can write, tried as that user would.

``<temp>/parterre-datasets-<uid>`` is a name anyone can work out. Another local user who makes it first (a
folder of theirs, a folder anyone may write, a link to theirs or to nowhere) must neither get the datasets
written where they can read or swap them, nor stop every download (before: each one answered 500 for as
long as their folder stood, and a sticky ``/tmp`` does not let the site's user remove it). Oracle: the file
system (``lstat`` of the folder the site uses, the taker's folder left as it was).
"""

from __future__ import annotations

import os
import pathlib
import stat
import tempfile

import pytest

from web import datasets


@pytest.fixture
def shared_tmp(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A temporary folder like ``/tmp`` (anyone may write, sticky), as the process's ``tempfile.gettempdir()``."""
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    monkeypatch.setattr(datasets, "_FALLBACK_FOLDER", [])  # a process that made none yet
    return shared


def _take(shared: pathlib.Path, how: str) -> pathlib.Path:
    taken = shared / f"parterre-datasets-{os.getuid()}"
    theirs = shared / "theirs"
    theirs.mkdir()
    if how == "link to their folder":
        taken.symlink_to(theirs)
    elif how == "dangling link":
        taken.symlink_to(shared / "nowhere")
    elif how == "folder anyone may write":
        taken.mkdir()
        taken.chmod(0o777)
    elif how == "folder of another user":
        taken.mkdir(mode=0o700)
        os.chown(taken, 65534, 65534)
    return taken


@pytest.mark.parametrize("how", ["link to their folder", "dangling link", "folder anyone may write",
                                 "folder of another user"])
def test_a_dataset_folder_taken_by_another_user_is_left_alone_and_downloads_go_on(shared_tmp: pathlib.Path,
                                                                                   how: str) -> None:
    if how == "folder of another user" and os.geteuid() != 0:
        pytest.skip("needs root to give a folder to another uid")
    taken = _take(shared_tmp, how)
    before = sorted(os.listdir(shared_tmp / "theirs"))
    folder = datasets.private_temp_folder()
    st = folder.lstat()
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700
    assert folder.resolve() not in (taken.resolve(), (shared_tmp / "theirs").resolve())
    assert folder.parent == shared_tmp
    (folder / "competition-1-x.tar").write_bytes(b"data")  # the site writes there
    assert sorted(os.listdir(shared_tmp / "theirs")) == before
    assert datasets.private_temp_folder() == folder  # kept: one folder per process, not one per download


def test_the_usual_folder_is_used_when_it_is_the_sites_own(shared_tmp: pathlib.Path) -> None:
    folder = datasets.private_temp_folder()
    assert folder == shared_tmp / f"parterre-datasets-{os.getuid()}"
    assert stat.S_IMODE(folder.lstat().st_mode) == 0o700
    assert datasets.private_temp_folder() == folder
