"""``parterre replay verify FOLDER`` on crafted datasets: every bad file is one FAILED line, never a
traceback or a process out of memory (docs/competitions.md, "The results archive").

Oracles: files made here by hand (a zstd frame that declares 1 GiB, a manifest entry that is not an
object, a record whose seat rows are not objects), and the process's own memory bound (RLIMIT_AS 1 GiB:
decompressing the bomb whole would exceed it).
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[2]


def _entry(folder: Path, name: str, data: bytes) -> dict[str, object]:
    (folder / "matches" / name).write_bytes(data)
    return {"path": f"matches/{name}", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
            "match_id": 1, "game_string": "floriferous(players=2)", "rules_revision": 1}


def _bomb(size: int) -> bytes:
    """A zstd frame that declares and holds ``size`` bytes of spaces (a few KiB on disk), made in chunks."""
    out = zstandard.ZstdCompressor(level=3).compressobj(size=size)
    chunk = b" " * (1 << 20)
    parts = [out.compress(chunk) for _ in range(size // len(chunk))]
    return b"".join(parts) + out.flush()


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_a_crafted_dataset_fails_file_by_file_within_its_memory(tmp_path: Path) -> None:
    folder = tmp_path / "ds"
    (folder / "matches").mkdir(parents=True)
    compress = zstandard.ZstdCompressor().compress
    files = [
        _entry(folder, "bomb.json.zst", _bomb(1 << 30)),
        5,
        _entry(folder, "seats.json.zst", compress(json.dumps({"seats": [5], "replay": {"steps": []}}).encode())),
        _entry(folder, "deep.json.zst", compress(b"[" * 200_000 + b"]" * 200_000)),
    ]
    (folder / "manifest.json").write_text(json.dumps({"format": "parterre-dataset/1", "files": files}))
    done = subprocess.run([sys.executable, "-m", "parterre.cli", "replay", "verify", str(folder)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith("FAILED: matches/bomb.json.zst: not a compressed JSON record") and "declares" in line
               for line in lines), lines
    assert any(line.startswith("FAILED: 5: a manifest entry that is not an object") for line in lines), lines
    assert any(line.startswith("FAILED: matches/seats.json.zst: ") for line in lines), lines
    assert any(line.startswith("FAILED: matches/deep.json.zst: ") for line in lines), lines
    assert lines[-1].startswith("FAILED: 0 of 4 files"), lines
