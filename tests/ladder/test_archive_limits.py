"""S-9: reading an uploaded archive is bounded in memory and CPU before any member is seen.

Attack (/tmp/attack/arch): a 1 MB ``.tar.gz`` carrying a 1 GiB PAX header took 3 GiB and 82 s in the
web request, since ``tarfile`` reads an extended header whole before yielding a member; a 16 KB
archive with a 16 MiB manifest took 125 s in ``tomllib``. Oracles: the archives are built by hand
(tests/archive_bombs.py) at sizes set from the documented limits, and the costs are measured (CPU
seconds, peak memory of a child process), not taken from the code under test.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import archive_bombs as bombs
import pytest

from ladder import archive_read
from ladder import submissions as sub

TESTS = Path(__file__).resolve().parents[1]


def _refused(data: bytes) -> tuple[str, float]:
    start = time.process_time()
    with pytest.raises(sub.SubmissionError) as exc:
        sub.inspect_archive(data)
    return str(exc.value), time.process_time() - start


def test_headers_under_the_per_header_cap_cannot_add_up() -> None:
    """1990 files each behind a 40 KiB PAX header (78 MiB of headers, the members a few KiB): before,
    accepted after 7 s of CPU in tarfile's header scan; now refused within a fraction of a second."""
    reason, cpu = _refused(bombs.many_pax_headers())
    assert "headers over 4 MiB in all" in reason
    assert cpu < 1.5, cpu


def test_a_huge_pax_header_costs_neither_memory_nor_time() -> None:
    """The attack's shape at 128 MiB (a 128 KB upload), in a child: the growth of its peak RSS while the
    archive is inspected (after it was built) stays far below the header (before: about 3 x the header)."""
    code = ("import sys, time, resource; sys.path[:0] = sys.argv[1:3]; import archive_bombs as b; "
            "from ladder import submissions as s; d = b.pax_bomb(128 << 20); t = time.process_time()\n"
            "peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10\nbase = peak()\n"
            "try: s.inspect_archive(d); r = 'accepted'\nexcept s.SubmissionError as e: r = str(e)\n"
            "import json; print(json.dumps([r, time.process_time() - t, peak() - base]))")
    out = subprocess.run([sys.executable, "-c", code, str(TESTS), str(TESTS.parent)], capture_output=True,
                         text=True, timeout=120, check=True)
    reason, cpu, growth_mib = json.loads(out.stdout.strip().splitlines()[-1])
    assert "header of 134217728 bytes" in reason
    assert cpu < 0.5 and growth_mib < 32, (cpu, growth_mib)


def test_the_decompressed_stream_itself_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever slips past the per-member checks, the tar stream under tarfile stops at its cap: with the
    stream capped at 1 MiB, an archive of 2 MiB of files (under the 64 MiB file cap) is refused."""
    monkeypatch.setattr(archive_read, "MAX_STREAM_BYTES", 1 << 20)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("parterre-bot.toml", bombs.GOOD_TOML), ("bot.py", b"#" * (2 << 20))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    reason, _ = _refused(buf.getvalue())
    assert "the tar stream, headers included, is over 1 MiB" in reason


def test_gnu_sparse_members_are_refused() -> None:
    gz = bombs._Gz()
    gz.add(bombs._member(b"parterre-bot.toml", bombs.GOOD_TOML) + bombs._member(b"bot.py", b"print(0)\n"))
    gz.add(bombs._header(b"sparse", b"S", 0))
    reason, _ = _refused(gz.done())
    assert "sparse files are not allowed" in reason


def test_the_manifest_is_capped_before_tomllib_and_by_parse_manifest() -> None:
    reason, cpu = _refused(bombs.toml_bomb())
    assert "over 16 KiB" in reason and cpu < 0.5
    with pytest.raises(sub.SubmissionError, match="over 16 KiB"):
        sub.parse_manifest(bombs.GOOD_TOML.decode() + "#" * (16 << 10))


@pytest.mark.parametrize("declare", [None, 1], ids=["true count", "end record says 1"])
def test_zip_entries_are_counted_before_the_directory_is_parsed(declare: int | None) -> None:
    """90000 empty entries in a 7.5 MiB zip (its end record telling the truth, or claiming 1 entry):
    before, zipfile built 90000 ZipInfo (50 MB traced, seconds) before the count check."""
    import tracemalloc

    data = bombs.zip_many_entries(declare=declare)
    tracemalloc.start()
    try:
        reason, cpu = _refused(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "more than 2000 entries" in reason and peak < (4 << 20), peak


def test_legitimate_archives_still_pass() -> None:
    """A long path in a PAX header (tarfile's own writer), and a zip with the largest extra field and comment."""
    long = "d/" * 60 + "bot.py"  # over ustar's 100 characters: a PAX "path" record
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, data in (("parterre-bot.toml", bombs.GOOD_TOML.replace(b"bot.py", long.encode())),
                           (long, b"print(0)\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert long in sub.inspect_archive(buf.getvalue()).files
    start = time.process_time()
    archive = sub.inspect_archive(bombs.zip_huge_extra_and_comment())
    assert set(archive.files) == {"parterre-bot.toml", "bot.py"} and time.process_time() - start < 0.5
