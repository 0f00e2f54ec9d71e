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
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{folder / MANIFEST}: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"),
                                                                                              list):
        raise ValueError(f"{folder / MANIFEST} is not a {FORMAT} manifest")
    out: list[tuple[str, dict[str, Any] | None, str]] = []
    listed = set()
    decompressor = zstandard.ZstdDecompressor()
    for entry in manifest["files"]:
        path = str(entry.get("path", ""))
        listed.add(path)
        target = (folder / path).resolve()
        if not target.is_relative_to(folder.resolve()) or not target.is_file():
            out.append((path, None, "missing"))
            continue
        data = target.read_bytes()
        if hashlib.sha256(data).hexdigest() != entry.get("sha256") or len(data) != entry.get("bytes"):
            out.append((path, None, "its checksum or size differs from the manifest's"))
            continue
        try:
            record = json.loads(decompressor.decompress(data, max_output_size=1 << 28))
        except (zstandard.ZstdError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            out.append((path, None, f"not a compressed JSON record: {exc}"))
            continue
        out.append((path, record if isinstance(record, dict) else None, "" if isinstance(record, dict)
                    else "not a JSON object"))
    for extra in sorted((folder / "matches").glob("*")) if (folder / "matches").is_dir() else []:
        rel = extra.relative_to(folder).as_posix()
        if rel not in listed:
            out.append((rel, None, "not listed in the manifest"))
    return manifest, out
