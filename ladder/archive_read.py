"""Reading an uploaded bot archive into memory with every size bounded before it is spent (docs/faults.md S-9).

``tarfile`` reads a whole PAX extended header (or GNU long name) into memory, and parses it, before
it yields the member it describes: the caller's checks of each member's size and of the number of
entries came too late for an archive whose first header is 1 GiB (a 1 MB ``.tar.gz``: 3 GiB of
memory and 82 s in the web request). So here:

* the tar is read as a stream through :class:`CappedReader`, which counts every decompressed byte
  (headers, padding and the data of members the loop skips included) and refuses past
  :data:`MAX_STREAM_BYTES`; memory stays bounded whatever the headers claim;
* an extended header (PAX ``x``/``g``/``X``, GNU ``L``/``K``) bigger than :data:`MAX_HEADER_BYTES`,
  or past :data:`MAX_EXTENDED_BYTES` in all, is refused before its body is read, and GNU sparse
  members are refused (a bot needs none);
* a zip's members are read up to their declared size plus one byte (a member whose data is longer
  than its header says is refused after at most that many bytes, not after the whole cap).

``zipfile`` reads the central directory at once, but it lies inside the packed archive, which is
at most ``MAX_ARCHIVE_BYTES`` (8 MiB); its entries are counted (a walk of at most 2001 headers) before it
is parsed, so 90000 empty entries do not become 90000 ``ZipInfo`` objects first.
"""

from __future__ import annotations

import gzip
import io
import stat
import struct
import tarfile
import zipfile
import zlib
from typing import Any

from ladder.errors import LadderError

MAX_UNPACKED_BYTES = 64 << 20
"""Largest total of the files unpacked (64 MiB; a zip bomb stops here without being unpacked)."""
MAX_FILES = 2000
MAX_HEADER_BYTES = 64 << 10
"""Largest PAX extended header or GNU long name/link body (64 KiB; a path is at most 4 KiB)."""
MAX_EXTENDED_BYTES = 4 << 20
"""Largest total of an archive's extended headers (4 MiB; ``tarfile`` scans each with a regular
expression: 1990 headers of 40 KiB, every one under the per-header cap, took 7 s of CPU)."""
MAX_STREAM_BYTES = MAX_UNPACKED_BYTES + (8 << 20)
"""Largest decompressed tar stream, headers and padding included (the unpacked cap + 8 MiB)."""


class SubmissionError(LadderError):
    """The archive or its manifest is refused; the message says why (``ladder.submissions`` re-exports it)."""


class CappedReader(io.RawIOBase):
    """A read-only stream over ``inner`` that raises :class:`SubmissionError` once more than ``cap`` bytes
    have been read from it (counted as they are returned, so nothing past the cap is kept)."""

    def __init__(self, inner: Any, cap: int) -> None:
        self._inner, self._cap, self.count = inner, cap, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        want = self._cap + 1 - self.count if size is None or size < 0 else min(size, self._cap + 1 - self.count)
        data: bytes = self._inner.read(max(want, 0))
        self.count += len(data)
        if self.count > self._cap:
            raise SubmissionError(f"unpacked size over {MAX_UNPACKED_BYTES >> 20} MiB (the tar stream, headers "
                                  f"included, is over {self._cap >> 20} MiB)")
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


_EXTENDED = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
             tarfile.GNUTYPE_LONGLINK)


class _BoundedTarInfo(tarfile.TarInfo):
    """A ``TarInfo`` that refuses an oversized extended header before ``tarfile`` reads its body."""

    def _proc_member(self, tar: Any) -> Any:
        if self.type in _EXTENDED:
            if self.size > MAX_HEADER_BYTES:
                raise SubmissionError(f"an extended (PAX or GNU long name) header of {self.size} bytes "
                                      f"(at most {MAX_HEADER_BYTES >> 10} KiB)")
            tar.parterre_extended = getattr(tar, "parterre_extended", 0) + self.size
            if tar.parterre_extended > MAX_EXTENDED_BYTES:
                raise SubmissionError(f"extended (PAX or GNU long name) headers over {MAX_EXTENDED_BYTES >> 20} "
                                      f"MiB in all")
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise SubmissionError(f"archive entry {self.name!r}: sparse files are not allowed")
        # the type: ignore below: typeshed does not declare TarInfo's private _proc_member
        return super()._proc_member(tar)  # type: ignore[misc]


def read_tar(data: bytes, check_path: Any) -> dict[str, tuple[bytes, bool]]:
    """The files of a ``.tar.gz`` (path -> (bytes, executable)); ``check_path`` normalises a name or raises.

    Raises:
        SubmissionError: a limit is exceeded, or a link, device, FIFO or unreadable archive.
    """
    files: dict[str, tuple[bytes, bool]] = {}
    total = 0
    try:
        stream = CappedReader(gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb"), MAX_STREAM_BYTES)
        with tarfile.open(fileobj=stream, mode="r|", tarinfo=_BoundedTarInfo) as tar:
            for count, member in enumerate(tar):
                if count >= MAX_FILES:
                    raise SubmissionError(f"more than {MAX_FILES} entries in the archive")
                path = check_path(member.name)
                if member.issym() or member.islnk():
                    raise SubmissionError(f"archive entry {member.name!r}: links are not allowed "
                                          f"(it points to {member.linkname!r})")
                if member.isdir():
                    continue
                if not member.isfile():
                    raise SubmissionError(f"archive entry {member.name!r}: only files and folders are allowed")
                total += member.size
                if total > MAX_UNPACKED_BYTES:
                    raise SubmissionError(f"unpacked size over {MAX_UNPACKED_BYTES >> 20} MiB")
                if path in files:
                    raise SubmissionError(f"archive entry {member.name!r}: the path {path!r} appears twice")
                fh = tar.extractfile(member)
                content = fh.read() if fh is not None else b""
                files[path] = (content, bool(member.mode & 0o111))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise SubmissionError(f"not a readable .tar.gz archive: {exc}") from None
    except RecursionError:  # tarfile recurses once per chained extended header
        raise SubmissionError("not a readable .tar.gz archive: too many chained extended headers") from None
    return files


def _zip_entries(data: bytes, stop: int) -> int:
    """Central-directory entries of a zip, counted by walking them as ``zipfile`` will (by the directory's
    size, not by the count its end record declares, which may lie), stopping after ``stop``: at most
    ``stop`` + 1 small header reads, before ``zipfile`` builds an object per entry. 0 when the end
    record is not found or the walk leaves the directory (``zipfile`` then refuses the archive)."""
    end = len(data) - 22
    if end < 0 or data[end:end + 4] != b"PK\x05\x06":
        end = data.rfind(b"PK\x05\x06", max(0, len(data) - (1 << 16) - 22))
    if end < 0 or end + 22 > len(data):
        return 0
    size_cd = struct.unpack_from("<I", data, end + 12)[0]
    top = end - 76 if end >= 20 and data[end - 20:end - 16] == b"PK\x06\x07" else end  # zip64 record + locator
    if top >= 76 and top < end and data[top:top + 4] == b"PK\x06\x06":
        size_cd = struct.unpack_from("<Q", data, top + 40)[0]
    pos, count = top - size_cd, 0
    while pos >= 0 and pos + 46 <= top and data[pos:pos + 4] == b"PK\x01\x02" and count <= stop:
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        pos, count = pos + 46 + n + m + k, count + 1
    return count


def read_zip(data: bytes, check_path: Any) -> dict[str, tuple[bytes, bool]]:
    """The files of a ``.zip`` (as :func:`read_tar`).

    Raises:
        SubmissionError: as :func:`read_tar`; also a member whose data does not match its declared size.
    """
    files: dict[str, tuple[bytes, bool]] = {}
    if _zip_entries(data, MAX_FILES) > MAX_FILES:
        raise SubmissionError(f"more than {MAX_FILES} entries in the archive")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_FILES:
                raise SubmissionError(f"more than {MAX_FILES} entries in the archive")
            if sum(i.file_size for i in infos) > MAX_UNPACKED_BYTES:
                raise SubmissionError(f"unpacked size over {MAX_UNPACKED_BYTES >> 20} MiB")
            for info in infos:
                path = check_path(info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise SubmissionError(f"archive entry {info.filename!r}: links are not allowed")
                if info.is_dir():
                    continue
                if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                    raise SubmissionError(f"archive entry {info.filename!r}: only files and folders are allowed")
                with zf.open(info) as fh:
                    content = fh.read(info.file_size + 1)  # the sum of declared sizes is capped above
                if len(content) != info.file_size:
                    raise SubmissionError(f"archive entry {info.filename!r}: size does not match its header")
                if path in files:
                    raise SubmissionError(f"archive entry {info.filename!r}: the path {path!r} appears twice")
                files[path] = (content, bool(mode & 0o111))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, zlib.error) as exc:
        raise SubmissionError(f"not a readable .zip archive: {exc}") from None
    return files
