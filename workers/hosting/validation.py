"""Hosted bots on the workers: unpack a version, run it sandboxed, validate it, regression-test it.

A new version (``ladder.submissions``, status ``validating``) is taken by
``parterre.hosted_tick`` (sent by ``parterre beat``), which claims it with a
lease and runs :func:`process_version`:

1. **Validation** (unrated): in each game the manifest declares (all 2-player
   games when it declares none), ``PARTERRE_HOSTED_VALIDATION_DEALS`` deals (2)
   against the house's greedy bot. The first crash, timeout, illegal answer or
   resignation rejects the version with the verdict, the game and the bot's
   stderr (owner only); the previous active version stays active.
2. **Regression test** (when the bot has an active version): duplicate deals
   of the new version against the active one, head to head, with the
   pentanomial GSPRT of ``parterre regress`` (``ladder.stats``: the same
   loop, :meth:`~ladder.stats.paired.DuplicateTest.run`), bounds per ladder
   (:func:`hosted_settings`). The running result is stored after every deal
   (the version page shows it). H0 accepted = a regression: the version
   becomes ``failed_test`` when the owner's setting blocks it, else
   ``active``; H1 accepted or the budget used up undecided: ``active``.

Every game of both is kept as it is played, with its replay and the seat the uploaded version sat in
(:func:`keep_games`, table ``hosted_games``): the owner's version page and ``parterre bot upload
--wait`` list them and link the replays.

Every game is played by ``python -m workers.hosting.head_to_head`` (a subprocess), whose stdio
children are the sandbox keepers, ``python -m workers.hosting.sandbox`` — the same
command line the stdio adapter runs for a hosted bot's rated matches; when a side is a gRPC bot, on a
referee of the cluster as a trial instead (``workers.hosting.trial_games``: :func:`play_deals`). No
referee reachable: the version is left waiting and taken again later (:func:`process_version`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from ladder import hosted_games, hosted_logs
from ladder import submissions as sub
from ladder.errors import DatabaseUnavailableError
from ladder.stats.paired import DealResult, DuplicateTest, TrajectoryPoint, head_to_head_deal
from ladder.stats.sprt import Sprt, SprtState
from workers import metrics as worker_metrics
from workers.hosting import trial_games
from workers.hosting.logs import prune_logs_at_times
from workers.hosting.run_dirs import make_run_dir
from workers.referee_client import InfraError

log = logging.getLogger(__name__)
T = TypeVar("T", int, float)

PROJECT = Path(__file__).resolve().parents[2]


LIMIT_NAMES = ("memory_mb", "pids", "cpu_s", "wall_s", "scratch_mb", "output_mb", "stderr_kb", "cpus", "cgroup",
               "per_process_limits")
"""``workers.hosting.sandbox.Limits`` fields, and the keeper's ``--cgroup`` (a cgroup delegated to the worker's uid) and
``--per-process-limits`` (``1``: the operator accepts per-process limits where no cgroup can be had), that a worker
sets from ``PARTERRE_SANDBOX_<NAME>`` (docs/hosted.md, "The limits in each deployment")."""


SECRET_ENV = "PARTERRE_HOSTED_TOKEN_SECRET"
"""The workers' secret from which hosted versions' credentials are derived (``ladder.submissions.hosted_token``)."""


def token_secret(env: dict[str, str] | None = None) -> str | None:
    """The workers' secret for hosted credentials, or None (hosted bots then play no rated match).

    A secret shorter than :data:`ladder.submissions.TOKEN_SECRET_MIN` counts as none (logged)."""
    value = (os.environ if env is None else env).get(SECRET_ENV, "")
    if not value:
        return None
    if len(value) < sub.TOKEN_SECRET_MIN:
        log.warning("%s is shorter than %d characters: hosted bots play no rated match", SECRET_ENV,
                    sub.TOKEN_SECRET_MIN)
        return None
    return value


def publish_credential(pool: Any, version_id: int) -> bool:
    """Publish the credential of a version that just became active (and revoke its predecessors').

    Needs the token secret and ``PARTERRE_REDIS_URL``; without them the version is active but plays no
    rated match (logged). Returns whether a credential was published."""
    from workers.directory import _redis_client

    secret, url = token_secret(), os.environ.get("PARTERRE_REDIS_URL", "")
    if secret is None or not url:
        log.warning("hosted version %s is active but plays no rated match: %s and PARTERRE_REDIS_URL are needed",
                    version_id, SECRET_ENV)
        return False
    return sub.activate_credential(pool, version_id, secret, _redis_client(url))


class SandboxCapacityError(RuntimeError):
    """A match would need more sandboxed processes than a worker slot may run."""


def hosted_settings(env: dict[str, str] | None = None) -> dict[str, Any]:
    """The hosted bots' settings, from the environment.

    | variable | default | meaning |
    |---|---|---|
    | ``PARTERRE_HOSTED_DIR`` | ``/var/tmp/parterre-hosted`` | unpacked versions (by sha256) and logs |
    | ``PARTERRE_SANDBOXES_PER_SLOT`` | cores of the machine | bot processes one worker slot may run at once |
    | ``PARTERRE_SANDBOX_<LIMIT>`` (:data:`LIMIT_NAMES`, upper case) | ``workers.hosting.sandbox.Limits`` |
    each sandbox's limits; ``_CGROUP``: the cgroup delegated to the worker; ``_PER_PROCESS_LIMITS=1``: run without
    one (docs/hosted.md) |
    | ``PARTERRE_HOSTED_VALIDATION_DEALS`` | ``2`` | validation deals per game (2 games each) |
    | ``PARTERRE_HOSTED_ELO0`` / ``_ELO1`` | ``-25`` / ``0`` | the regression test's hypotheses (logistic Elo) |
    | ``PARTERRE_HOSTED_ALPHA`` / ``_BETA`` | ``0.05`` / ``0.05`` | its error probabilities |
    | ``PARTERRE_HOSTED_MAX_GAMES`` | ``400`` | its budget (games) |
    | ``PARTERRE_HOSTED_GAME`` | ``floriferous(players=2)`` | the regression test's game when the manifest names none |
    | ``PARTERRE_HOSTED_DEADLINE_MS`` | ``1000`` | time per decision |
    | ``PARTERRE_HOSTED_TOKEN_SECRET`` | none | derives the credentials (none: no rated match) |
    | ``PARTERRE_HOSTED_MAX_PENDING`` | ``3`` | versions per owner validating/testing at once (read at upload by
    ``ladder.submissions.max_pending``; 429 past it) |
    | ``PARTERRE_STDIO_NOTES_MAX`` / ``_KB`` | ``1000`` / ``256`` | per child, the adapter's notes of its stray
    output (``bots.stdio``) |
    | ``PARTERRE_HOSTED_LOGS_KEPT`` | ``200`` | rated-match logs kept per bot in the database, the newest
    (``ladder.hosted_logs.MATCH_LOGS_KEPT``; 1 to 1,000,000) |
    | ``PARTERRE_HOSTED_LOG_DAYS`` | ``14`` | the worker's own log files (``logs/`` under the folder) are deleted
    this many days after their last write (``workers.hosting.logs``; at least 1, so never a running
    match's; ``inf``: never) |

    Raises:
        ValueError: a number that does not parse or is out of its range.
    """
    e = os.environ if env is None else env
    limits = {name: e[f"PARTERRE_SANDBOX_{name.upper()}"] for name in LIMIT_NAMES
              if e.get(f"PARTERRE_SANDBOX_{name.upper()}")}
    return {
        "dir": Path(e.get("PARTERRE_HOSTED_DIR", "/var/tmp/parterre-hosted")),
        "per_slot": int(e.get("PARTERRE_SANDBOXES_PER_SLOT", str(os.cpu_count() or 1))),
        "limits": limits,
        "validation_deals": int(e.get("PARTERRE_HOSTED_VALIDATION_DEALS", "2")),
        "sprt": Sprt(float(e.get("PARTERRE_HOSTED_ELO0", "-25")), float(e.get("PARTERRE_HOSTED_ELO1", "0")),
                     float(e.get("PARTERRE_HOSTED_ALPHA", "0.05")), float(e.get("PARTERRE_HOSTED_BETA", "0.05"))),
        "max_games": int(e.get("PARTERRE_HOSTED_MAX_GAMES", "400")),
        "game": e.get("PARTERRE_HOSTED_GAME", "floriferous(players=2)"),
        "deadline_ms": int(e.get("PARTERRE_HOSTED_DEADLINE_MS", "1000")),
        "logs_kept": _within(int(e.get("PARTERRE_HOSTED_LOGS_KEPT", str(hosted_logs.MATCH_LOGS_KEPT))), 1, 1_000_000,
                             "PARTERRE_HOSTED_LOGS_KEPT"),
        "log_days": _within(float(e.get("PARTERRE_HOSTED_LOG_DAYS", "14")), 1.0, math.inf,
                            "PARTERRE_HOSTED_LOG_DAYS"),
    }


def _within(value: T, low: T, high: T, name: str) -> T:
    if not low <= value <= high:  # NaN too
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


def unpack(pool: Any, version: sub.HostedVersion, base: Path) -> Path:
    """The version's files, unpacked once under ``base/<sha256>`` (root-owned, read-only to the sandbox).

    The archive is checked again (:func:`ladder.submissions.inspect_archive`): nothing is
    written from an archive that would be refused."""
    target = base / version.sha256
    if target.exists():
        return target
    archive = sub.inspect_archive(sub.archive_bytes(pool, version.id))
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o711)
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=base))
    try:
        for rel, (content, executable) in archive.files.items():
            dest = tmp / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(content)
            dest.chmod(0o755 if executable else 0o644)
        for path in [tmp, *tmp.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        with contextlib.suppress(OSError):  # another worker unpacked it first: theirs is the same
            tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # a partial unpack never stays behind
    return target


def sandbox_command(bot_dir: Path, manifest: dict[str, Any], limits: dict[str, Any],
                    stderr_file: Path | None = None, grpc_dir: Path | None = None) -> list[str]:
    """The keeper's command line for a hosted bot (what the stdio adapter or ``workers.hosting.head_to_head`` runs).

    ``grpc_dir``: a gRPC bot's per-match socket folder (``workers.hosting.sandbox --grpc-dir``)."""
    argv = [sys.executable, "-m", "workers.hosting.sandbox", "--root", str(bot_dir), "--runtime", manifest["runtime"]]
    if stderr_file is not None:
        argv += ["--stderr-file", str(stderr_file)]
    if grpc_dir is not None:
        argv += ["--grpc-dir", str(grpc_dir)]
    for name, value in limits.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return [*argv, "--", *manifest["command"]]


def is_grpc(manifest: dict[str, Any]) -> bool:
    """Whether a version speaks gRPC (``protocol = "grpc"``) rather than the stdio line protocol."""
    return bool(manifest.get("protocol", "stdio") == "grpc")


def side_spec(bot_dir: Path, manifest: dict[str, Any], limits: dict[str, Any], stderr_file: Path) -> str:
    """A side of ``play_deals``: ``exec:`` + the keeper's command (stdio), or ``grpc:`` + it without its
    socket folder, which the runner makes per run (``workers.hosting.trial_games``)."""
    kind = "grpc:" if is_grpc(manifest) else "exec:"
    return kind + json.dumps(sandbox_command(bot_dir, manifest, limits, stderr_file))


def _games(manifest: dict[str, Any]) -> list[str]:
    from games.registry import load_game

    names = manifest.get("games") or ["floriferous", "lafleur", "flowar"]
    return [load_game(f"{n}(players=2)").game_string() for n in names]


CHILD_ENV = ("PATH", "LANG", "LC_ALL", "HOME", "TZ", "PARTERRE_ENGINES", "PARTERRE_STDIO_NOTES_MAX",
             "PARTERRE_STDIO_NOTES_KB")
"""The worker's environment variables its bot-running children inherit (``workers.hosting.head_to_head`` for validation
and the regression test; the rated seats' adapters, ``workers.hosting.seats``): none of its settings or secrets
(``PARTERRE_HOSTED_TOKEN_SECRET``, the database and broker URLs, service tokens)."""


def child_env(hosted_dir: Path | None = None) -> dict[str, str]:
    """The minimal environment of a bot-running child: :data:`CHILD_ENV` from the worker's, ``PYTHONPATH`` and
    ``PARTERRE_HOSTED_DIR`` (``hosted_dir``, else the worker's setting, where the keeper copies the SDK)."""
    env = {k: os.environ[k] for k in CHILD_ENV if k in os.environ}
    env["PYTHONPATH"] = str(PROJECT)
    directory = str(hosted_dir) if hosted_dir is not None else os.environ.get("PARTERRE_HOSTED_DIR", "")
    if directory:
        env["PARTERRE_HOSTED_DIR"] = directory
    return env


_refusals: dict[tuple[str, str], str] = {}


def sandbox_refusal(cfg: dict[str, Any] | None = None) -> str:
    """Why this worker may not run hosted bots (``""``: it may): ``python -m workers.hosting.sandbox --check`` with the
    worker's cgroup settings, run once per process and setting. A worker that cannot bound a sandbox's whole
    process tree (no cgroup, and per-process limits not accepted) refuses hosted bots rather than run them
    past the limits of docs/hosted.md: it claims no version, and a match seating one is an ``infra_error``."""
    limits = (cfg or hosted_settings())["limits"]
    key = (str(limits.get("cgroup", "")), str(limits.get("per_process_limits", "")))
    if key not in _refusals:
        argv = [sys.executable, "-m", "workers.hosting.sandbox", "--check"]
        if key[0]:
            argv += ["--cgroup", key[0]]
        if key[1]:
            argv += ["--per-process-limits", key[1]]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=child_env(), cwd=PROJECT, timeout=60)
            reason = "" if done.returncode == 0 else (done.stdout.strip() or done.stderr.strip()[-500:])
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"the sandbox check failed: {exc}"
        _refusals[key] = reason
        if reason:
            log.error("this worker refuses hosted bots: %s (docs/hosted.md, \"The limits in each deployment\")",
                      reason)
    return _refusals[key]


_runtimes_said = False


def offered_runtimes() -> list[str]:
    """The runtimes installed on this worker (``workers.hosting.runtimes.runtime_missing``): ``parterre.hosted_tick``
    claims only versions of these (another worker may run the rest), and the keeper refuses the others
    (``start_failed``, "refused: runtime ... is not installed"), rather than a missing ``java`` looking like the
    bot's crash. Each missing runtime is logged once per process."""
    global _runtimes_said
    from workers.hosting.runtimes import RUNTIMES, runtime_missing

    missing = {r: runtime_missing(r) for r in RUNTIMES}
    if not _runtimes_said and any(missing.values()):
        _runtimes_said = True
        for why in filter(None, missing.values()):
            log.warning("%s: its versions are left to other workers (docs/hosted.md, \"Runtimes\")", why)
    return [r for r in RUNTIMES if not missing[r]]


class RunnerError(RuntimeError):
    """The games' runner (``workers.hosting.head_to_head``) ended before every deal asked
    for was played, or with a non-zero status (killed, out of memory, a crash of ours): the deals it did
    not play are no evidence either way, so a validation or regression test must not pass on them."""


def play_deals(game: str, a: str, b: str, *, run_seed: str, deals: int, deadline_ms: int,
               hosted_dir: Path | None = None, seats: dict[str, Any] | None = None) -> Any:
    """Yield the deals of ``workers.hosting.head_to_head`` one by one (a generator; closing it stops the games).

    When a side is a gRPC bot (``grpc:``), the deals are played on a referee of the cluster as trials
    instead (:func:`workers.hosting.trial_games.play_trial_deals`, same deals), in this process; the
    run's folder (``$PARTERRE_HOSTED_DIR/run/games-*``: the sides' sockets, logs) is removed here when
    the generator closes. The subprocess and the keepers get :func:`child_env` only (``hosted_dir``: the
    hosted bots' folder).

    ``seats``: ``{"players": {"a": {...}, "b": {...}}, "match_id": N}`` (:func:`seat_identities`), what the
    bots are told of the games (else the runner's plausible defaults).

    Raises:
        RunnerError: the runner's output ended before ``deals`` deals, or it exited non-zero (checked only
            when the generator runs out by itself, not when the caller closes it).
        workers.referee_client.InfraError: a gRPC side's games: no referee reachable
            (``RefereeUnavailableError``), or one failed a game (not a verdict on the bot)."""
    if a.startswith("grpc:") or b.startswith("grpc:"):
        # The run's folder (sockets, logs) is this worker's; its lock keeps other workers' sweeps off it
        # (workers.hosting.run_dirs).
        base = (hosted_dir or Path(os.environ.get("PARTERRE_HOSTED_DIR", "/var/tmp/parterre-hosted"))) / "run"
        games_dir = make_run_dir(base, "games-")
        try:
            yield from trial_games.play_trial_deals(game, a, b, run_seed=run_seed, deals=deals,
                                                    deadline_ms=deadline_ms, run_dir=games_dir.path,
                                                    env=child_env(hosted_dir), cwd=PROJECT, seats=seats,
                                                    lock_fd=games_dir.lock_fd)
        finally:
            games_dir.remove()
        return
    argv = [sys.executable, "-m", "workers.hosting.head_to_head"]
    proc = subprocess.Popen(
        [*argv, "--game", game, "--run-seed", run_seed, "--deals", str(deals),
         "--a", a, "--b", b, "--deadline-ms", str(deadline_ms),
         *(["--players", json.dumps(seats["players"]), "--match-id", str(seats["match_id"])] if seats else [])],
        stdout=subprocess.PIPE, cwd=PROJECT, start_new_session=True, env=child_env(hosted_dir))
    assert proc.stdout is not None
    got = 0
    try:
        for line in proc.stdout:
            got += 1
            yield json.loads(line)
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    # Reached only when the runner's output ended by itself (a caller closing the generator stops above).
    if proc.returncode != 0 or got < deals:
        raise RunnerError(f"the games' runner ended early: exit status {proc.returncode} after {got} of "
                          f"{deals} deals (not a verdict on the bot)")


def seat_identities(pool: Any, version: sub.HostedVersion) -> dict[str, Any] | None:
    """What the bots of a validation or regression game are told, so that they cannot tell it from a rated match
    (docs/hosted.md): side ``a`` (the version under test) is its bot as the ladder names it (id, name, the version's
    number), side ``b`` another bot of the ladder (:func:`ladder.submissions.opponent_identity`), and the games get
    match ids from the ladder's own sequence range. None when the database gives nothing (defaults apply)."""
    try:
        own, other, next_match = sub.seat_identities(pool, version.bot_id)
    except Exception as exc:  # never fail a validation for want of names
        log.warning("hosted version %s: no identities for its games: %s", version.id, exc)
        return None
    return {"players": {"a": {**own, "version": str(version.number)}, "b": other}, "match_id": next_match}


def _log_tail(path: Path, limit: int = 16384) -> str:
    try:
        return path.read_bytes()[-limit:].decode("utf-8", "replace")
    except OSError:
        return ""


def keep_games(pool: Any, version: sub.HostedVersion, kind: str, first: int, game: str, deal: dict[str, Any],
               sides: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Store the two games of a deal as games ``first`` and ``first + 1`` of ``kind``
    (``ladder.submissions.save_game``), each with its replay (the runner's ``replays``), whose ``players``
    are put as they were: ``sides`` (a, b), not the identities the bots were told. Game ``k`` of a deal
    seats the uploaded version (side a) in seat ``k``."""
    replays = deal.get("replays") or [None, None]
    for k in range(2):
        replay = replays[k] if k < len(replays) else None
        if replay is not None:
            order = sides if k == 0 else sides[::-1]
            replay = {**replay, "players": [{**who, "seat": s} for s, who in enumerate(order)]}
        hosted_games.save_game(pool, version.id, kind, first + k, game=game, seed=deal["seed"], seat=k,
                      ranks=list(deal["ranks"][k]), fault=deal["faults"][k], replay=replay)


def _sides(pool: Any, version: sub.HostedVersion, other: sub.HostedVersion | None) -> tuple[dict[str, Any],
                                                                                               dict[str, Any]]:
    """Side a (the uploaded version) and side b (the house's greedy bot, or the version ``other``) as the games'
    replays name them for the owner."""
    seats = seat_identities(pool, version)
    name = str(seats["players"]["a"]["name"]) if seats else f"bot {version.bot_id}"
    a = {"bot_id": version.bot_id, "name": f"{name} (version {version.number})", "version": str(version.number)}
    if other is None:
        return a, {"bot_id": 0, "name": "house greedy (validation opponent)", "version": ""}
    return a, {"bot_id": version.bot_id, "name": f"{name} (version {other.number})", "version": str(other.number)}


def validate(pool: Any, version: sub.HostedVersion, cfg: dict[str, Any],
             work: Path) -> tuple[bool, str, str, dict[str, Any]]:
    """Validation matches against the house's greedy bot; returns (ok, reason, log, details). Each game is kept
    with its replay (:func:`keep_games`); ``details["games"][j]["n"]`` is its number there."""
    bot_dir = unpack(pool, version, cfg["dir"])
    stderr = work / f"v{version.id}-validation.log"
    spec = side_spec(bot_dir, version.manifest, cfg["limits"], stderr)
    details: dict[str, Any] = {"games": []}
    sides = _sides(pool, version, None)
    for game in _games(version.manifest):
        deals = play_deals(game, spec, "builtin:greedy", run_seed=f"validate:{version.sha256}",
                           deals=cfg["validation_deals"], deadline_ms=cfg["deadline_ms"], hosted_dir=cfg["dir"],
                           seats=seat_identities(pool, version))
        try:
            for deal in deals:
                keep_games(pool, version, "validation", len(details["games"]), game, deal, sides)
                for k, fault in enumerate(deal["faults"]):
                    # game k of a deal seats the uploaded version (side a) in seat k (wire numbering, from 0)
                    details["games"].append({"game": game, "seed": deal["seed"], "ranks": deal["ranks"][k],
                                             "seat": k, "rank": deal["ranks"][k][k], "fault": fault,
                                             "n": len(details["games"])})
                    if fault is not None and fault["side"] == "a":
                        deals.close()  # its processes are gone before the log is read
                        how = f" ({fault['detail']})" if fault.get("detail") else ""
                        return False, f"{fault['verdict']}{how}: in a validation game of {game} " \
                            f"(seed {deal['seed']})", \
                            _log_tail(stderr), details
        finally:
            deals.close()
    return True, "", _log_tail(stderr), details


def regression_test(pool: Any, version: sub.HostedVersion, previous: sub.HostedVersion, cfg: dict[str, Any],
                    work: Path) -> dict[str, Any]:
    """The SPRT of ``version`` (candidate) against ``previous`` (baseline) on duplicate deals
    (:meth:`ladder.stats.paired.DuplicateTest.run`, the one sequential test loop, as ``parterre regress``).

    Returns:
        ``{"game", "games", "deals", "llr", "lower", "upper", "elo", "elo_low", "elo_high", "state",
        "verdict"}`` with ``verdict`` one of ``pass`` (H1), ``regression`` (H0), ``undecided``.
    """
    sprt: Sprt = cfg["sprt"]
    test = DuplicateTest(sprt, pentanomial=True)
    cand = side_spec(unpack(pool, version, cfg["dir"]), version.manifest, cfg["limits"],
                     work / f"v{version.id}-test.log")
    base = side_spec(unpack(pool, previous, cfg["dir"]), previous.manifest, cfg["limits"],
                     work / f"v{previous.id}-as-baseline.log")
    game = _games(version.manifest)[0] if version.manifest.get("games") else cfg["game"]
    result: dict[str, Any] = {"game": game, "baseline": previous.number, "elo0": sprt.elo0, "elo1": sprt.elo1,
                              "alpha": sprt.alpha, "beta": sprt.beta, "max_games": cfg["max_games"],
                              "lower": sprt.lower, "upper": sprt.upper, "state": "running"}
    deals = play_deals(game, cand, base, run_seed=f"regress:{version.sha256}:{previous.sha256}",
                       deals=max(1, cfg["max_games"] // 2), deadline_ms=cfg["deadline_ms"], hosted_dir=cfg["dir"],
                       seats=seat_identities(pool, version))
    faults = 0
    sides = _sides(pool, version, previous)

    def samples() -> Iterator[DealResult]:
        nonlocal faults
        for played, deal in enumerate(deals):
            keep_games(pool, version, "regression", 2 * played, game, deal, sides)
            faults += sum(1 for f in deal["faults"] if f is not None)
            yield head_to_head_deal(deal["ranks"][0], deal["ranks"][1])

    def record(_point: TrajectoryPoint, test: DuplicateTest) -> None:
        est = test.estimate()
        result.update(games=test.games, deals=test.deals, llr=round(test.llr(), 4), elo=round(est.elo, 1),
                      elo_low=round(est.low, 1), elo_high=round(est.high, 1), faults=faults)
        sub.set_regression(pool, version.id, result)

    try:
        test.run(samples(), record)
    finally:
        deals.close()
    result["state"] = test.state.name
    result["verdict"] = {SprtState.H1: "pass", SprtState.H0: "regression"}.get(test.state, "undecided")
    sub.set_regression(pool, version.id, result)
    return result


def process_version(pool: Any, version_id: int, cfg: dict[str, Any] | None = None) -> str:
    """Validate, then regression-test, version ``version_id``; set its final status and return it."""
    cfg = cfg or hosted_settings()
    version = sub.get_version(pool, version_id)
    if version is None or version.status not in ("validating", "testing"):
        return "skipped"
    if cfg["per_slot"] < 2:
        raise SandboxCapacityError("a regression test runs two sandboxed bots: PARTERRE_SANDBOXES_PER_SLOT >= 2")
    work = cfg["dir"] / "logs"
    work.mkdir(parents=True, exist_ok=True)
    prune_logs_at_times(work, cfg)
    try:
        return _process(pool, version, cfg, work)
    except DatabaseUnavailableError:
        raise  # not the version's fault: its lease runs out and it is taken again
    except InfraError as exc:  # a gRPC bot's games found no referee (or lost it): not judged, taken again later
        delay = referee_backoff_s(version)
        log.warning("hosted version %s: its games need a referee: %s; taken again in %.0f s", version_id, exc, delay)
        sub.postpone(pool, version_id, delay)
        worker_metrics.HOSTED_VERDICTS.labels("waiting_for_referee", "no referee").inc()
        return "waiting_for_referee"
    except Exception as exc:  # anything unforeseen rejects the version instead of looping
        # Left alone it would stay validating/testing and be claimed again every lease.
        log.exception("hosted version %s: unexpected error, rejected", version_id)
        reason = f"internal error: {type(exc).__name__}: {exc}"[:1000]
        sub.set_verdict(pool, version_id, "rejected", reason=reason)
        worker_metrics.HOSTED_VERDICTS.labels("rejected", "internal error").inc()
        return "rejected"


REFEREE_BACKOFF_S = (10.0, 300.0)
"""Shortest and longest wait before a version whose games found no referee is taken again."""


def referee_backoff_s(version: sub.HostedVersion, now: datetime | None = None,
                      rng: random.Random | None = None) -> float:
    """How long a version whose games found no referee waits before it is taken again: a quarter of the time
    since its upload, within :data:`REFEREE_BACKOFF_S`, times a uniform factor in [0.5, 1] (the versions
    waiting together spread out); so the longer it waits, the less often it is tried."""
    low, high = REFEREE_BACKOFF_S
    waited = ((now or datetime.now(UTC)) - version.created_at).total_seconds()
    return min(high, max(low, waited / 4)) * (rng or random).uniform(0.5, 1.0)


def _process(pool: Any, version: sub.HostedVersion, cfg: dict[str, Any], work: Path) -> str:
    version_id = version.id
    ok, reason, stderr_log, details = validate(pool, version, cfg, work)
    if not ok:
        sub.set_verdict(pool, version_id, "rejected", reason=reason, log=stderr_log, validation=details)
        worker_metrics.HOSTED_VERDICTS.labels("rejected", reason.split(":")[0]).inc()
        return "rejected"
    previous = sub.active_version(pool, version.bot_id)
    if previous is None:
        sub.set_verdict(pool, version_id, "active", log=stderr_log, validation=details)
        publish_credential(pool, version_id)
        worker_metrics.HOSTED_VERDICTS.labels("active", "first version").inc()
        return "active"
    sub.set_verdict(pool, version_id, "testing", log=stderr_log, validation=details)
    result = regression_test(pool, version, previous, cfg, work)
    if result["verdict"] == "regression" and sub.blocks_on_regression(pool, version.bot_id):
        status, reason = "failed_test", (f"regression: SPRT accepted H0 (elo <= {result['elo0']}) after "
                                         f"{result['games']} games, LLR {result['llr']}")
    else:
        status, reason = "active", f"regression test: {result['verdict']}"
    sub.set_verdict(pool, version_id, status, reason=reason, log=stderr_log)
    if status == "active":
        publish_credential(pool, version_id)
    worker_metrics.HOSTED_VERDICTS.labels(status, result["verdict"]).inc()
    return status


SANDBOX_UID_BASE = 200_000
"""``workers.hosting.sandbox.UID_BASE``: every process with a uid from here up is a sandbox's (docs/hosted.md)."""


def sandbox_snapshot() -> dict[str, float]:
    """The sandboxes running on this machine now, read from ``/proc``: ``{"sandboxes", "processes",
    "rss_bytes", "cpu_seconds"}``; also sets the worker's gauges (operators' view)."""
    tick = os.sysconf("SC_CLK_TCK")
    page = os.sysconf("SC_PAGE_SIZE")
    uids: set[int] = set()
    procs, rss, cpu = 0, 0, 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            uid = os.stat(f"/proc/{entry}").st_uid
            if uid < SANDBOX_UID_BASE:
                continue
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        uids.add(uid)
        procs += 1
        cpu += (int(fields[11]) + int(fields[12])) / tick
        rss += int(fields[21]) * page
    worker_metrics.HOSTED_SANDBOXES.set(len(uids))
    worker_metrics.HOSTED_SANDBOX_RSS.set(rss)
    worker_metrics.HOSTED_SANDBOX_CPU.set(cpu)
    return {"sandboxes": len(uids), "processes": procs, "rss_bytes": rss, "cpu_seconds": round(cpu, 2)}
