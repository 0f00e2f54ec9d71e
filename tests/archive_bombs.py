"""Hostile archives built by hand, byte by byte where ``tarfile``/``zipfile`` would refuse to write them
(as /tmp/attack/arch/pax_bomb.py and toml_bomb.py did), scaled to just over each cap so tests stay fast.

Their sizes come from the documented limits (docs/hosted.md), written here as numbers, not read from
the code under test: 64 MiB unpacked, 2000 entries, 64 KiB per extended header, 16 KiB manifest.
"""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib

GOOD_TOML = b'runtime = "python3.11"\ncommand = ["python3.11", "bot.py"]\n'
UNPACKED_CAP = 64 << 20
HEADER_CAP = 64 << 10


def _header(name: bytes, typeflag: bytes, size: int) -> bytes:
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108], h[108:116], h[116:124] = b"0000644\0", b"0000000\0", b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148], h[156:157], h[257:263], h[263:265] = b"00000000000\0", typeflag, b"ustar\0", b"00"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def _pad(n: int) -> bytes:
    return b"\0" * ((-n) % 512)


def _pax_record(body_len: int) -> bytes:
    """One ``<len> comment=aaaa...\\n`` record of exactly ``body_len`` bytes (a comment is ignored by readers)."""
    head = f"{body_len} comment=".encode()
    return head + b"a" * (body_len - len(head) - 1) + b"\n"


def _member(name: bytes, data: bytes) -> bytes:
    return _header(name, b"0", len(data)) + data + _pad(len(data))


class _Gz:
    def __init__(self) -> None:
        self.co, self.out = zlib.compressobj(1, zlib.DEFLATED, 31), io.BytesIO()

    def add(self, chunk: bytes) -> None:
        self.out.write(self.co.compress(chunk))

    def done(self) -> bytes:
        self.add(b"\0" * 1024)
        self.out.write(self.co.flush())
        return self.out.getvalue()


def pax_bomb(body_len: int = 2 << 20) -> bytes:
    """A valid bot whose manifest is preceded by one PAX extended header of ``body_len`` bytes."""
    gz = _Gz()
    gz.add(_header(b"././@PaxHeader", b"x", body_len))
    head = f"{body_len} comment=".encode()
    gz.add(head)
    left, block = body_len - len(head) - 1, b"a" * (1 << 20)
    while left > 0:  # streamed: the builder's own memory stays small (a test measures the reader's)
        gz.add(block[:left])
        left -= len(block)
    gz.add(b"\n" + _pad(body_len))
    gz.add(_member(b"parterre-bot.toml", GOOD_TOML) + _member(b"bot.py", b"print(0)\n"))
    return gz.done()


def gnu_longname_bomb(name_len: int = 2 << 20) -> bytes:
    """A GNU ``L`` (long name) header of ``name_len`` bytes before a regular file."""
    gz = _Gz()
    gz.add(_member(b"parterre-bot.toml", GOOD_TOML) + _member(b"bot.py", b"print(0)\n"))
    gz.add(_header(b"././@LongLink", b"L", name_len))
    gz.add(b"n" * (name_len - 1) + b"\0" + _pad(name_len))
    gz.add(_member(b"x", b"x"))
    return gz.done()


def many_pax_headers(entries: int = 1990, body_len: int = 40 << 10) -> bytes:
    """``entries`` small files each behind a PAX header under the per-header cap: the members total a few
    KiB (every per-member check passes) but the headers alone are entries * body_len (78 MiB > 72 MiB)."""
    gz = _Gz()
    gz.add(_member(b"parterre-bot.toml", GOOD_TOML) + _member(b"bot.py", b"print(0)\n"))
    record = _pax_record(body_len) + _pad(body_len)
    for i in range(entries):
        gz.add(_header(b"././@PaxHeader", b"x", body_len) + record + _member(b"f%05d" % i, b"x"))
    return gz.done()


def chained_pax_headers(n: int = 3000) -> bytes:
    """``n`` PAX headers in a row before one file (``tarfile`` recurses once per header)."""
    gz = _Gz()
    gz.add(_member(b"parterre-bot.toml", GOOD_TOML) + _member(b"bot.py", b"print(0)\n"))
    record = _pax_record(512)
    for _ in range(n):
        gz.add(_header(b"././@PaxHeader", b"x", 512) + record)
    gz.add(_member(b"x", b"x"))
    return gz.done()


def toml_bomb(size: int = (16 << 10) + 64) -> bytes:
    """A valid head then an array that makes the manifest ``size`` bytes (the attack used 16 MiB)."""
    head = GOOD_TOML + b"x = ["
    body = head + b"1," * ((size - len(head) - 3) // 2) + b"1]\n"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in (("parterre-bot.toml", body), ("bot.py", b"print(0)\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_many_entries(n: int = 90000, declare: int | None = None) -> bytes:
    """``n`` empty stored entries (each under 100 bytes, so the packed archive stays under 8 MiB);
    ``declare``: the entry count the end record claims instead (``zipfile`` walks the directory by size)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("parterre-bot.toml", GOOD_TOML)
        for i in range(n):
            zf.writestr(f"{i:x}", b"")
    data = bytearray(buf.getvalue())
    if declare is not None:
        end = data.rindex(b"PK\x05\x06")
        struct.pack_into("<HH", data, end + 8, declare, declare)
    return bytes(data)


def zip_huge_extra_and_comment() -> bytes:
    """The largest extra fields (64 KiB, 16k tiny records to parse) on a member and the largest comment."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("parterre-bot.toml")
        info.extra = b"\xfe\xca\x00\x00" * 16383
        zf.writestr(info, GOOD_TOML)
        zf.writestr("bot.py", b"print(0)\n")
        zf.comment = b"c" * 65535
    return buf.getvalue()
