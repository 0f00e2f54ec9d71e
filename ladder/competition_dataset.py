"""A finished competition's dataset: every match's record and replay, compressed, with a manifest.

The results archive people download (docs/competitions.md, "The results archive"): a folder with

* ``manifest.json``: :data:`FORMAT`, the competition (its settings and frozen final table), and one
  entry per file: ``path``, ``sha256`` and ``bytes`` of the file as stored, ``match_id``,
  ``game_string`` and the ``rules_revision`` its replay was played by;
* ``matches/<match id>.json.zst``: the match as ``parterre replay export`` writes it (``match``,
  ``seats``, ``replay``), without the attempts (which worker ran what is not the competition's
  record), compressed with zstd.

``parterre replay verify FOLDER`` checks it file by file: every listed file present with its
checksum, no file left out of the manifest, and each replay re-simulated. It is written only once
the final table is frozen: before that, a deal still being played would show its seed.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import zstandard
from psycopg_pool import ConnectionPool

from ladder import competitions, read
from ladder.competition_final import final_table
from ladder.db import connection
from ladder.errors import CompetitionError

FORMAT = "parterre-dataset/1"
MANIFEST = "manifest.json"
MAX_RECORD_BYTES = 1 << 28
"""The largest record a file may decompress to (256 MiB); a file declaring more is refused unread."""


def _entry_json(record: dict[str, Any]) -> bytes:
    kept = {"match": record["match"], "seats": record["seats"], "replay": record["replay"]}
    return json.dumps(kept, sort_keys=True, default=str, ensure_ascii=False).encode()


def write_dataset(pool: ConnectionPool, competition_id: int, out: Path, *, now: datetime) -> dict[str, Any]:
    """Write the dataset of competition ``competition_id`` into the new folder ``out``; return the manifest.

    Raises:
        CompetitionError: no such competition, its final table is not frozen yet, or ``out`` exists
            and is not an empty folder.
    """
    comp = competitions.get_competition(pool, competition_id)
    if comp.status(now) != "final":
        raise CompetitionError(f"competition {competition_id} is {comp.status(now)}: its dataset is written "
                               "once the final table is frozen")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CompetitionError(f"{out} exists and is not an empty folder")
    (out / "matches").mkdir(parents=True, exist_ok=True)
    with connection(pool) as conn:
        ids = [int(r[0]) for r in conn.execute(
            "SELECT id FROM matches WHERE competition_id = %s AND status = 'finished' ORDER BY id",
            (competition_id,)).fetchall()]
    compressor = zstandard.ZstdCompressor(level=10)
    files = []
    for match_id in ids:
        record = read.export_replay(pool, match_id, hold_twins=True)
        if record["replay"] is None:  # a twin still to be played (none once the table is frozen)
            continue
        data = compressor.compress(_entry_json(record))
        path = f"matches/{match_id}.json.zst"
        (out / path).write_bytes(data)
        files.append({"path": path, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                      "match_id": match_id, "game_string": record["match"]["game_string"],
                      "rules_revision": record["replay"].get("rules_revision", 1)})
    table = [{"place": r.place, "bot_id": r.bot_id, "name": r.name, "account": r.account, "rating": r.rating,
              "low": r.low, "high": r.high, "matches": r.matches, "standing": r.standing}
             for r in final_table(pool, competition_id)]
    manifest = {"format": FORMAT, "written_at": now.isoformat(), "competition": comp.to_json(now),
                "final_table": table, "files": files}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True, default=str, ensure_ascii=False))
    return manifest


def read_dataset(folder: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any] | None, str]]]:
    """The manifest of the dataset in ``folder`` and, per listed file, ``(path, its record or None, the
    problem)``: a missing file, a checksum or size that differs, a file that does not decompress to a
    JSON object; files in ``matches/`` the manifest does not list come last, as problems.

    Raises:
        ValueError: no readable manifest of :data:`FORMAT`.
    """
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: not JSON, or bytes that are not UTF-8
        raise ValueError(f"{folder / MANIFEST}: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"),
                                                                                              list):
        raise ValueError(f"{folder / MANIFEST} is not a {FORMAT} manifest")
    out: list[tuple[str, dict[str, Any] | None, str]] = []
    listed = set()
    decompressor = zstandard.ZstdDecompressor()
    for entry in manifest["files"]:
        if not isinstance(entry, dict):
            out.append((repr(entry)[:60], None, "a manifest entry that is not an object"))
            continue
        path = str(entry.get("path", ""))
        listed.add(path)
        try:
            target = (folder / path).resolve()
            there = target.is_relative_to(folder.resolve()) and target.is_file()
        except (OSError, ValueError):  # a NUL byte, a loop of links
            there = False
        if not there:
            out.append((path, None, "missing"))
            continue
        data = target.read_bytes()
        if hashlib.sha256(data).hexdigest() != entry.get("sha256") or len(data) != entry.get("bytes"):
            out.append((path, None, "its checksum or size differs from the manifest's"))
            continue
        try:
            # a frame declares its size: past the cap it is refused unread (max_output_size bounds only frames
            # that do not declare it); a frame that does not declare it is read up to the cap and no further
            declared = zstandard.frame_content_size(data)
            if declared > MAX_RECORD_BYTES:
                raise ValueError(f"it declares {declared:,} bytes, over {MAX_RECORD_BYTES:,}")
            with decompressor.stream_reader(data) as reader:
                raw = reader.read(MAX_RECORD_BYTES + 1)
            if len(raw) > MAX_RECORD_BYTES:
                raise ValueError(f"it holds over {MAX_RECORD_BYTES:,} bytes")
            record = json.loads(raw)
        except (zstandard.ZstdError, ValueError, RecursionError) as exc:  # ValueError: JSON, UTF-8, the cap
            out.append((path, None, f"not a compressed JSON record: {type(exc).__name__}: {str(exc)[:200]}"))
            continue
        out.append((path, record if isinstance(record, dict) else None, "" if isinstance(record, dict)
                    else "not a JSON object"))
    for extra in sorted((folder / "matches").glob("*")) if (folder / "matches").is_dir() else []:
        rel = extra.relative_to(folder).as_posix()
        if rel not in listed:
            out.append((rel, None, "not listed in the manifest"))
    return manifest, out
