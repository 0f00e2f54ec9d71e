"""``parterre regress``: is the candidate a regression of the baseline? (DESIGN §6; docs/regression.md)

The candidate and the baseline play the same **deals** (seeds), so the luck of
the deal cancels (:mod:`ladder.stats.paired` has the model and its
derivation):

* two players, no opponents: each deal is played twice, candidate against
  baseline in both seat orders — a game pair, fishtest's pentanomial sample;
* N players (or two with ``--opponents X``): the fixed opponents fill the
  other seats; the candidate's table and the baseline's table each play the
  deal in every cyclic seat rotation, so both bots hold every seat of the same
  deal against the same opponents.

After each deal the generalised SPRT of :class:`ladder.stats.paired.DuplicateTest`
is updated; the run stops as soon as it decides, or when the next deal would
exceed ``max_games``. Hypotheses (logistic Elo, candidate minus baseline):
``H0: elo = elo0`` and ``H1: elo = elo1``, ``elo0 < elo1``.

=====  ==================================================================
exit   meaning
=====  ==================================================================
0      H1 accepted: not a regression (the candidate is at least ``elo1``)
1      H0 accepted: a regression (the candidate is at most ``elo0``)
2      undecided when the game budget ran out
3      the run could not be made (bad arguments, no worker, a failed match)
=====  ==================================================================

Backends (how the games are played):

* ``referee`` — in this process: a real referee (gRPC on 127.0.0.1, a free
  port, a static token store) and the built-in bots as real SDK bots
  connected to it, exactly as ``referee.testing.Harness`` does. Needs neither
  PostgreSQL nor Redis. The default for ``builtin:`` specs.
* ``direct`` — in this process, no referee and no gRPC: the rules engine is
  driven like the referee drives it (chance from ``random.Random(seed)``,
  each seat given its observation and the legal actions' JSON in the
  referee's order) and the bots' ``choose`` is called directly. About twice
  as fast; for benches and tests (``--backend direct``).
* ``ladder`` — registered bots: a ``duplicate`` tournament in PostgreSQL, one
  deal at a time planned with :func:`ladder.tournaments.plan_duplicate_deal`
  and run by the Celery workers through the referee; the matches are rated
  like any other. Chosen when the bots are not ``builtin:`` specs, and only
  when a Celery worker answers a ping.

Bot specs: ``builtin:KIND[:OPT=VALUE,...]`` with KIND a key of
:data:`bots.cli.BOT_KINDS` (``builtin:greedy``, ``builtin:random``,
``builtin:handicap:p=0.3``) — or a registered bot's name or id.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import itertools
import json
import math
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ladder.stats.paired import DealResult, DuplicateTest, TrajectoryPoint, head_to_head_deal, paired_deal
from ladder.stats.sprt import EloEstimate, Sprt, SprtState

__all__ = [
    "EXIT_CODES",
    "BotSpec",
    "DirectRunner",
    "LadderRunner",
    "RefereeRunner",
    "RegressError",
    "RegressPlan",
    "RegressReport",
    "Runner",
    "deal_seed",
    "make_plan",
    "play_direct",
    "parse_spec",
    "run_regress",
]

EXIT_CODES = {SprtState.H1: 0, SprtState.H0: 1, SprtState.CONTINUE: 2}
"""Exit status of ``parterre regress`` per final SPRT state (3 = the run failed)."""
EXIT_ERROR = 3
"""Exit status when the run could not be made."""

DIRECT_KINDS = ("random", "greedy", "handicap")
"""Built-in kinds the ``direct`` backend can play (plain ``choose`` functions, no protocol tricks)."""

#: Time control of in-process matches (ms): generous, built-in bots never come near it.
IN_PROCESS_TIME_CONTROL = {"base_ms": 0, "increment_ms": 60_000, "cap_ms": 60_000, "margin_ms": 5_000}
#: Default time control of ladder-backed regress matches (ms).
LADDER_TIME_CONTROL = {"base_ms": 0, "increment_ms": 2000, "cap_ms": 2000, "margin_ms": 250}

Ranks = tuple[int, ...]
"""Competition ranks per seat of one finished match."""


class RegressError(RuntimeError):
    """The run cannot be made or cannot go on (bad spec, no worker, a match that did not finish)."""


# -- bot specs ------------------------------------------------------------------------------------


def _coerce(value: str) -> Any:
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot of a regress run.

    Attributes:
        text: the spec as given.
        kind: the built-in kind (``greedy``, ``handicap``, ...), or None for a registered bot.
        options: constructor options of a built-in bot (``{"p": 0.3}``).
        ref: a registered bot's name or id (None for a built-in).
    """

    text: str
    kind: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    ref: str | None = None

    @property
    def builtin(self) -> bool:
        """True for ``builtin:`` specs."""
        return self.kind is not None

    def make(self, seed: str | None = None, **extra: Any) -> Any:
        """Build the built-in bot (a :class:`bots.sdk.Bot`), seeded unless the spec sets ``seed``.

        Raises:
            RegressError: not a built-in, or options the kind does not take.
        """
        from bots.cli import make_bot

        if self.kind is None:
            raise RegressError(f"{self.text!r} is a registered bot, not a built-in")
        options = dict(self.options)
        if seed is not None and "seed" not in options and self.kind in DIRECT_KINDS:
            options["seed"] = seed
        options.update(extra)
        try:
            return make_bot(self.kind, **options)
        except ValueError as exc:
            raise RegressError(f"{self.text}: {exc}") from None


def parse_spec(text: str) -> BotSpec:
    """Parse a bot spec: ``builtin:KIND[:OPT=VALUE,...]`` or a registered bot's name or id.

    Values are ints or floats when they parse as such (``p=0.3``), else text.

    Raises:
        RegressError: empty spec, unknown built-in kind, or a malformed option.
    """
    from bots.cli import BOT_KINDS

    text = text.strip()
    if not text:
        raise RegressError("empty bot spec")
    if not text.startswith("builtin:"):
        return BotSpec(text=text, ref=text)
    _, _, rest = text.partition(":")
    kind, _, opts = rest.partition(":")
    if kind not in BOT_KINDS:
        raise RegressError(f"{text!r}: unknown built-in kind {kind!r}; choose one of {', '.join(BOT_KINDS)}")
    options = []
    for item in filter(None, (o.strip() for o in opts.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise RegressError(f"{text!r}: option {item!r} is not KEY=VALUE")
        options.append((key, _coerce(value)))
    return BotSpec(text=text, kind=kind, options=tuple(options))


# -- the plan ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RegressPlan:
    """What a regress run plays.

    Attributes:
        game_string: canonical game string (seat count included).
        players: seats per match.
        candidate / baseline: the two bots compared.
        opponents: the fixed opponents (empty = head to head, two players only).
    """

    game_string: str
    players: int
    candidate: BotSpec
    baseline: BotSpec
    opponents: tuple[BotSpec, ...] = ()

    @property
    def head_to_head(self) -> bool:
        """Candidate against baseline directly (two players, no opponents)."""
        return not self.opponents

    @property
    def game(self) -> str:
        """The game's registry name."""
        return self.game_string.split("(", 1)[0]

    @property
    def games_per_deal(self) -> int:
        """Matches one deal takes: 2 head to head, else 2 x players."""
        return 2 if self.head_to_head else 2 * self.players

    def roles(self) -> list[tuple[str, BotSpec]]:
        """``[("candidate", spec), ("baseline", spec), ("opponent1", spec), ...]``."""
        return [("candidate", self.candidate), ("baseline", self.baseline)] + [
            (f"opponent{i + 1}", o) for i, o in enumerate(self.opponents)
        ]

    def tables(self, ids: Mapping[str, Any]) -> list[list[Any]]:
        """Tables of a deal in rotation-0 seat order, from role -> bot id.

        Head to head: one table ``[candidate, baseline]`` (its two rotations are
        the two seat orders). Paired: ``[candidate, O1, ...]`` and ``[baseline, O1, ...]``.
        """
        opps = [ids[f"opponent{i + 1}"] for i in range(len(self.opponents))]
        if self.head_to_head:
            return [[ids["candidate"], ids["baseline"]]]
        return [[ids["candidate"], *opps], [ids["baseline"], *opps]]

    def deal_result(self, ranks: Sequence[Sequence[Ranks]]) -> DealResult:
        """The deal's sample from ``ranks[table][rotation]`` (rotation k seats ``table[k:] + table[:k]``)."""
        n = self.players
        if self.head_to_head:
            return head_to_head_deal(ranks[0][0], ranks[0][1])
        seats = [(n - k) % n for k in range(n)]  # where the table's first bot sits in rotation k
        cand = [(ranks[0][k], seats[k]) for k in range(n)]
        base = [(ranks[1][k], seats[k]) for k in range(n)]
        return paired_deal(cand, base)


def make_plan(
    game: str, candidate: str, baseline: str, opponents: Sequence[str] = (), players: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> RegressPlan:
    """Validate the arguments of a run and build its plan.

    ``players`` defaults to ``len(opponents) + 1`` (2 without opponents). With
    three or more players and no opponents given, built-in runs use
    ``builtin:greedy`` opponents.

    Raises:
        RegressError: bad spec, wrong number of opponents, a player count or
            option the game does not allow.
    """
    from games.api import GameError
    from ladder.tournaments import game_string_for

    cand, base = parse_spec(candidate), parse_spec(baseline)
    opps = [parse_spec(o) for o in opponents]
    n = players if players is not None else (len(opps) + 1 if opps else 2)
    if n < 2:
        raise RegressError("a regress run needs at least 2 players")
    if not opps and n > 2:
        if not (cand.builtin and base.builtin):
            raise RegressError(f"{n} players need {n - 1} opponents (--opponents X,Y,...)")
        opps = [parse_spec("builtin:greedy")] * (n - 1)
    if opps and len(opps) != n - 1:
        raise RegressError(f"{n} players need {n - 1} opponent(s), got {len(opps)}")
    try:
        gs = game_string_for(game, options, n)
    except (GameError, ValueError) as exc:
        raise RegressError(str(exc)) from None
    return RegressPlan(gs, n, cand, base, tuple(opps))


def deal_seed(run_seed: str, index: int) -> str:
    """The seed of deal ``index`` of a run: sha256 hex of ``"{run_seed}:{index}"`` (64 hex characters)."""
    return hashlib.sha256(f"{run_seed}:{index}".encode()).hexdigest()


# -- runners ---------------------------------------------------------------------------------------


class Runner:
    """Plays deals. ``start_deal`` returns a future of ``ranks[table][rotation]``."""

    backend = "?"

    def start_deal(self, index: int, seed: str) -> concurrent.futures.Future[list[list[Ranks]]]:
        """Start playing deal ``index`` on ``seed``."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop everything this runner started."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _LocalRequest:
    """What ``Bot.choose`` reads from a request, built without the wire (the ``direct`` backend)."""

    __slots__ = ("game", "seat", "observation", "legal_actions", "match_id")

    def __init__(self, game: str, seat: int, observation: dict[str, Any], legal: list[dict[str, Any]]) -> None:
        self.game, self.seat, self.observation, self.legal_actions = game, seat, observation, legal
        self.match_id = 0

    @property
    def num_actions(self) -> int:
        return len(self.legal_actions)


def play_direct(game_string: str, seed: str, bots: Sequence[Any]) -> Ranks:
    """Play one match without a referee: chance from ``random.Random(seed)``, as the referee does.

    Args:
        game_string: the game.
        seed: the match seed.
        bots: one bot per seat, each with ``choose(request) -> int``.

    Returns:
        The rules' ranks per seat.

    Raises:
        RegressError: a bot returned an index out of range.
    """
    import random

    from games.api import CHANCE, TERMINAL
    from games.registry import load_game

    game = load_game(game_string)
    state = game.new_initial_state()
    rng = random.Random(seed)
    name = game.name
    while True:
        player = state.current_player()
        if player == TERMINAL:
            return tuple(state.outcome().ranks)
        if player == CHANCE:
            state.apply_action(state.sample_chance(rng))
            continue
        legal = state.legal_actions()
        request = _LocalRequest(name, player, state.observation(player), [a.to_json() for a in legal])
        index = bots[player].choose(request)
        if not isinstance(index, int) or not 0 <= index < len(legal):
            raise RegressError(f"seat {player} chose {index!r}, not in 0..{len(legal) - 1}")
        state.apply_action(legal[index])


def _rotations(table: Sequence[Any]) -> list[list[Any]]:
    t = list(table)
    return [t[k:] + t[:k] for k in range(len(t))]


def _direct_deal(plan: RegressPlan, run_seed: str, index: int, seed: str) -> list[list[Ranks]]:
    """Play one deal with fresh bots seeded from ``(run_seed, role, index)``: reproducible in any process."""
    bots = {role: spec.make(seed=f"{run_seed}:{role}:{index}") for role, spec in plan.roles()}
    out = []
    for table in plan.tables({role: role for role, _ in plan.roles()}):
        out.append([play_direct(plan.game_string, seed, [bots[r] for r in seats]) for seats in _rotations(table)])
    return out


class DirectRunner(Runner):
    """The ``direct`` backend: rules engine and bots in this process (or ``jobs`` worker processes).

    Bots are built afresh for every deal, seeded from the run seed, their role
    and the deal index, so a run is reproducible whatever ``jobs`` is.

    Args:
        plan: the run's plan (built-in bots of kinds :data:`DIRECT_KINDS` only).
        run_seed: seeds the bots.
        jobs: worker processes (1 = play in this thread, when the future is created).

    Raises:
        RegressError: a registered bot or a kind the backend cannot play.
    """

    backend = "direct"

    def __init__(self, plan: RegressPlan, run_seed: str, jobs: int = 1) -> None:
        for role, spec in plan.roles():
            if spec.kind not in DIRECT_KINDS:
                raise RegressError(f"the direct backend plays builtin {', '.join(DIRECT_KINDS)}; {role} is {spec.text}")
        self.plan, self.run_seed = plan, run_seed
        self.pool = concurrent.futures.ProcessPoolExecutor(jobs) if jobs > 1 else None

    def start_deal(self, index: int, seed: str) -> concurrent.futures.Future[list[list[Ranks]]]:
        """Play the deal now (jobs = 1) or submit it to the process pool."""
        if self.pool is not None:
            return self.pool.submit(_direct_deal, self.plan, self.run_seed, index, seed)
        fut: concurrent.futures.Future[list[list[Ranks]]] = concurrent.futures.Future()
        try:
            fut.set_result(_direct_deal(self.plan, self.run_seed, index, seed))
        except BaseException as exc:  # surfaced by .result()
            fut.set_exception(exc)
        return fut

    def close(self) -> None:
        """Shut the process pool down (pending deals are cancelled)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


class RefereeRunner(Runner):
    """The ``referee`` backend: a real referee on 127.0.0.1 and the built-in bots, in a background thread.

    The referee (``referee.server.create_server`` with a static token store, no
    Redis) and one SDK bot per role run on an event loop in a daemon thread,
    like ``referee.testing.Harness``; each deal's matches are started at once
    through ``MatchControl.RunMatch`` with the service token.

    Args:
        plan: the run's plan (built-in bots only).
        run_seed: seeds the bots (seed ``"{run_seed}:{role}"``).
        time_control: per-match time control (ms); :data:`IN_PROCESS_TIME_CONTROL` by default.

    Raises:
        RegressError: a registered bot in the plan, or the referee did not start.
    """

    backend = "referee"

    def __init__(self, plan: RegressPlan, run_seed: str, time_control: Mapping[str, int] | None = None) -> None:
        for role, spec in plan.roles():
            if not spec.builtin:
                raise RegressError(f"the referee backend plays builtin bots; {role} is {spec.text!r}")
        self.plan = plan
        self.tc = dict(time_control or IN_PROCESS_TIME_CONTROL)
        concurrent_matches = 2 * plan.players * 4
        self.bots = {
            role: spec.make(seed=f"{run_seed}:{role}", name=f"{role}", max_concurrent_matches=concurrent_matches)
            for role, spec in plan.roles()
        }
        self.ids = {role: i + 1 for i, (role, _) in enumerate(plan.roles())}
        self.tokens = {f"regress-{role}-{secrets.token_hex(8)}": role for role in self.ids}
        self._match_ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._thread_main, name="regress-referee", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RegressError("the in-process referee did not start within 30 s")
        if self._error is not None:
            raise RegressError(f"the in-process referee failed to start: {self._error}") from self._error

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported by __init__ or by the futures
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        import grpc.aio

        from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
        from referee.server import create_server
        from referee.tokens import StaticTokenStore

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._service_token = secrets.token_hex(16)
        server, port = await create_server(
            "127.0.0.1:0",
            token_store=StaticTokenStore({tok: self.ids[role] for tok, role in self.tokens.items()}),
            service_token=self._service_token,
        )
        core = server.referee  # type: ignore[attr-defined]
        address = f"127.0.0.1:{port}"
        tasks = [
            asyncio.create_task(self.bots[role].arun(address, tok, initial_backoff_s=0.05))
            for tok, role in self.tokens.items()
        ]
        try:
            async with asyncio.timeout(20):
                while any(not core.registry.by_bot.get(bot_id) for bot_id in self.ids.values()):
                    await asyncio.sleep(0.01)
            async with grpc.aio.insecure_channel(address) as channel:
                self._stub = pb_grpc.MatchControlStub(channel)
                self._ready.set()
                await self._stop.wait()
        finally:
            for bot in self.bots.values():
                bot.stop()
            await asyncio.wait(tasks, timeout=2.0)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await core.stop(grace_s=0.5)

    async def _run_match(self, game_string: str, seed: str, seats: Sequence[str]) -> Ranks:
        from proto.parterre.v1 import referee_pb2 as pb
        from referee.server import SERVICE_TOKEN_HEADER

        req = pb.RunMatchRequest(
            match_id=next(self._match_ids), attempt=1, game_string=game_string, seed=seed,
            seat_bot_ids=[self.ids[r] for r in seats], time_control=pb.TimeControl(**self.tc),
            no_show_timeout_ms=10_000, max_duration_ms=0,
        )
        result = None
        async for event in self._stub.RunMatch(req, metadata=[(SERVICE_TOKEN_HEADER, self._service_token)]):
            if event.HasField("result"):
                result = event.result
        if result is None or result.status != "finished":
            status = "no result" if result is None else result.status
            raise RegressError(f"in-process match {req.match_id} ({game_string}) ended {status}")
        by_seat = sorted(result.seats, key=lambda s: s.seat)
        return tuple(int(s.rank) for s in by_seat)

    async def _run_deal(self, seed: str) -> list[list[Ranks]]:
        plan = self.plan
        tables = plan.tables({role: role for role, _ in plan.roles()})
        coros = [[self._run_match(plan.game_string, seed, seats) for seats in _rotations(t)] for t in tables]
        flat = await asyncio.gather(*(c for row in coros for c in row))
        n = plan.players
        return [list(flat[i * n:(i + 1) * n]) for i in range(len(tables))]

    def start_deal(self, index: int, seed: str) -> concurrent.futures.Future[list[list[Ranks]]]:
        """Schedule the deal's matches on the referee's loop."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(self._run_deal(seed), self._loop)

    def close(self) -> None:
        """Stop the bots and the referee, and join the thread."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(15)


class LadderRunner(Runner):
    """The ``ladder`` backend: registered bots, matches planned in PostgreSQL and run by Celery workers.

    Creates a ``duplicate`` tournament named ``regress <candidate> vs <baseline>``
    holding the run's bots; each deal is planned with
    :func:`ladder.tournaments.plan_duplicate_deal` (plan keys ``d{index}:...``)
    and its matches queued as ``parterre.run_match`` tasks; a poller thread
    reads the seats of finished matches. The matches are ordinary ladder
    matches: they are rated.

    Args:
        plan: the run's plan (registered bots only).
        pool: ladder connection pool.
        time_control: per-match time control (ms).
        poll_s: how often the database is polled.

    Raises:
        RegressError: a built-in spec, an unknown or revoked bot, or no Celery
            worker answering a ping.
    """

    backend = "ladder"

    def __init__(self, plan: RegressPlan, pool: Any, time_control: Mapping[str, int] | None = None,
                 poll_s: float = 0.3, check_workers: bool = True) -> None:
        from ladder import bots as ladder_bots
        from ladder import tournaments

        self.plan, self.pool, self.poll_s = plan, pool, poll_s
        self.tc = dict(time_control or LADDER_TIME_CONTROL)
        ids: dict[str, int] = {}
        for role, spec in plan.roles():
            if spec.builtin:
                raise RegressError(f"the ladder backend plays registered bots; {role} is {spec.text!r}")
            assert spec.ref is not None
            bot = ladder_bots.find_bot(pool, spec.ref)
            if bot is None:
                raise RegressError(f"no registered bot named or numbered {spec.ref!r}")
            if bot.revoked_at is not None:
                raise RegressError(f"bot {spec.ref!r} is revoked")
            ids[role] = int(bot.id)
        if check_workers and not self.workers_alive():
            raise RegressError(
                "no Celery worker answered a ping; start `parterre worker` (with a referee and the bots), "
                "or compare builtin: bots in-process"
            )
        self.ids = ids
        distinct = list(dict.fromkeys(ids.values()))
        try:
            self.tournament_id = tournaments.create_tournament(
                pool, name=f"regress {plan.candidate.text} vs {plan.baseline.text}", game=plan.game,
                bot_ids=distinct, player_counts=(plan.players,), rounds=1, time_control=self.tc,
                game_options=_options_of(plan.game_string), format="duplicate",
            )
        except ValueError as exc:
            raise RegressError(str(exc)) from None
        self._pending: dict[int, tuple[list[list[int]], concurrent.futures.Future[list[list[Ranks]]]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="regress-poller", daemon=True)
        self._thread.start()

    @staticmethod
    def workers_alive(timeout_s: float = 2.0) -> bool:
        """True when at least one Celery worker answers ``control.ping``."""
        from workers.app import app

        try:
            return bool(app.control.ping(timeout=timeout_s))
        except Exception:  # broker unreachable: no worker either
            return False

    def start_deal(self, index: int, seed: str) -> concurrent.futures.Future[list[list[Ranks]]]:
        """Plan the deal (idempotent) and queue its matches on the workers."""
        from ladder import tournaments
        from workers.tasks import run_match

        match_ids = tournaments.plan_duplicate_deal(
            self.pool, game_string=self.plan.game_string, tables=self.plan.tables(self.ids), deal_key=f"d{index}",
            tournament_id=self.tournament_id, time_control=self.tc, seed=seed,
        )
        fut: concurrent.futures.Future[list[list[Ranks]]] = concurrent.futures.Future()
        with self._lock:
            self._pending[index] = (match_ids, fut)
        for mid in itertools.chain.from_iterable(match_ids):
            run_match.delay(mid)
        return fut

    def _poll(self) -> None:
        from ladder.db import connection

        while not self._stop.wait(self.poll_s):
            with self._lock:
                pending = dict(self._pending)
            if not pending:
                continue
            all_ids = [m for ids, _ in pending.values() for row in ids for m in row]
            try:
                with connection(self.pool) as conn:
                    status = dict(conn.execute(
                        "SELECT id, status FROM matches WHERE id = ANY(%s::bigint[])", (all_ids,)).fetchall())
                    done = [m for m in all_ids if status.get(m) == "finished"]
                    ranks: dict[int, dict[int, int]] = {}
                    for mid, seat, rank in conn.execute(
                        "SELECT match_id, seat, rank FROM seats WHERE match_id = ANY(%s::bigint[])", (done,)
                    ).fetchall():
                        ranks.setdefault(mid, {})[seat] = rank
            except Exception as exc:  # database trouble: fail the waiting deals
                for index, (_, fut) in pending.items():
                    _settle(fut, error=RegressError(f"deal {index}: {exc}"))
                with self._lock:
                    self._pending.clear()
                continue
            for index, (ids, fut) in pending.items():
                flat = [m for row in ids for m in row]
                bad = [m for m in flat if status.get(m) in ("failed", "aborted_no_show")]
                if bad:
                    _settle(fut, error=RegressError(
                        f"deal {index}: match(es) {bad} ended {', '.join(sorted({status[m] for m in bad}))} "
                        "(are the bots connected to the referee?)"))
                elif all(status.get(m) == "finished" for m in flat):
                    _settle(fut, result=[[tuple(ranks[m][s] for s in sorted(ranks[m])) for m in row] for row in ids])
                else:
                    continue
                with self._lock:
                    self._pending.pop(index, None)

    def close(self) -> None:
        """Stop polling (matches already queued still run and are recorded)."""
        self._stop.set()
        self._thread.join(5)


def _settle(fut: concurrent.futures.Future[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    """Complete a future unless the run already cancelled it."""
    try:
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass


def _options_of(game_string: str) -> dict[str, str]:
    """Options of a canonical game string other than ``players``."""
    inner = game_string.partition("(")[2].rstrip(")")
    out = {}
    for item in filter(None, inner.split(",")):
        key, _, value = item.partition("=")
        if key != "players":
            out[key] = value
    return out


# -- the run ---------------------------------------------------------------------------------------


@dataclass
class RegressReport:
    """The outcome of a run.

    Attributes:
        plan / sprt: what was tested.
        backend: ``referee``, ``direct`` or ``ladder``.
        test: the sequential test (trajectory, distribution).
        state: final SPRT state.
        estimate: Elo difference with its 95 % interval (None before any deal).
        max_games: the budget.
        elapsed_s: wall time.
        run_seed: seed the deals were derived from.
        tournament_id: the ladder tournament (ladder backend only).
    """

    plan: RegressPlan
    sprt: Sprt
    backend: str
    test: DuplicateTest
    state: SprtState
    estimate: EloEstimate | None
    max_games: int
    elapsed_s: float
    run_seed: str
    tournament_id: int | None = None

    @property
    def exit_code(self) -> int:
        """0 (H1: not a regression), 1 (H0: regression) or 2 (undecided)."""
        return EXIT_CODES[self.state]

    @property
    def games(self) -> int:
        """Matches played and counted."""
        return self.test.games

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary with the whole trajectory."""
        est = self.estimate
        values, counts = self.test.distribution() if self.test.deals else ([], [])
        return {
            "game_string": self.plan.game_string,
            "players": self.plan.players,
            "candidate": self.plan.candidate.text,
            "baseline": self.plan.baseline.text,
            "opponents": [o.text for o in self.plan.opponents],
            "model": "pentanomial (game pairs)" if self.plan.head_to_head else "paired duplicate (N-player)",
            "elo_model": "logistic" if self.plan.head_to_head else "logistic, duplicate score",
            "elo0": self.sprt.elo0, "elo1": self.sprt.elo1, "alpha": self.sprt.alpha, "beta": self.sprt.beta,
            "bounds": [self.sprt.lower, self.sprt.upper],
            "backend": self.backend,
            "result": {SprtState.H1: "H1", SprtState.H0: "H0", SprtState.CONTINUE: "undecided"}[self.state],
            "exit_code": self.exit_code,
            "llr": self.test.trajectory[-1].llr if self.test.trajectory else 0.0,
            "elo": None if est is None else {"elo": est.elo, "low": est.low, "high": est.high, "los": est.los,
                                             "score": est.score, "confidence": est.confidence},
            "games": self.test.games, "deals": self.test.deals, "max_games": self.max_games,
            "pentanomial": list(self.test.penta) if self.plan.head_to_head else None,
            "distribution": {f"{v:.6g}": c for v, c in zip(values, counts, strict=True) if c >= 1},
            "trajectory": [[p.deals, p.games, round(p.llr, 6)] for p in self.test.trajectory],
            "elapsed_s": round(self.elapsed_s, 3),
            "run_seed": self.run_seed,
            "tournament_id": self.tournament_id,
        }


def run_regress(
    plan: RegressPlan,
    sprt: Sprt,
    runner: Runner,
    *,
    max_games: int,
    run_seed: str,
    concurrency: int = 1,
    on_deal: Callable[[TrajectoryPoint, DuplicateTest], None] | None = None,
) -> RegressReport:
    """Play deals until the SPRT decides or the next deal would exceed ``max_games``.

    Deals are started ``concurrency`` at a time but counted strictly in deal
    order, so the stopping time does not depend on which matches happen to
    finish first. Deals still running when the test decides are not counted.

    Args:
        plan: what to play.
        sprt: hypotheses and error probabilities.
        runner: the backend.
        max_games: game budget (matches); at least one deal's worth.
        run_seed: deal ``i`` is played on :func:`deal_seed(run_seed, i) <deal_seed>`.
        concurrency: deals in flight at once (>= 1).
        on_deal: called after each counted deal with its trajectory point.

    Returns:
        The report (``exit_code`` 0, 1 or 2).

    Raises:
        RegressError: the budget is below one deal, or a deal could not be played.
    """
    per_deal = plan.games_per_deal
    budget = max_games // per_deal
    if budget < 1:
        raise RegressError(f"--max-games {max_games} is less than one deal ({per_deal} games)")
    started = time.monotonic()
    test = DuplicateTest(sprt, pentanomial=plan.head_to_head)
    futures: dict[int, concurrent.futures.Future[list[list[Ranks]]]] = {}
    next_start = 0
    try:
        for index in range(budget):
            while next_start < budget and len(futures) < max(1, concurrency):
                futures[next_start] = runner.start_deal(next_start, deal_seed(run_seed, next_start))
                next_start += 1
            try:
                ranks = futures.pop(index).result()
            except RegressError:
                raise
            except Exception as exc:
                raise RegressError(f"deal {index} could not be played: {type(exc).__name__}: {exc}") from exc
            state = test.add(plan.deal_result(ranks))
            if on_deal is not None:
                on_deal(test.trajectory[-1], test)
            if state is not SprtState.CONTINUE:
                break
    finally:
        for fut in futures.values():
            fut.cancel()
    estimate = test.estimate() if test.deals else None
    return RegressReport(plan, sprt, runner.backend, test, test.state, estimate, max_games,
                         time.monotonic() - started, run_seed)


# -- text output --------------------------------------------------------------------------------


def describe(plan: RegressPlan, sprt: Sprt) -> Iterator[str]:
    """Header lines: what is compared, the model, and what each exit status means."""
    if plan.head_to_head:
        yield (f"{plan.game_string}: candidate {plan.candidate.text} vs baseline {plan.baseline.text}, "
               "each deal played in both seat orders (a game pair)")
        yield "model: pentanomial GSPRT over game pairs (fishtest), logistic Elo"
    else:
        yield (f"{plan.game_string}: candidate {plan.candidate.text} and baseline {plan.baseline.text} in the same "
               f"seats against {', '.join(o.text for o in plan.opponents)}, every seat rotation of each deal")
        yield ("model: paired duplicate GSPRT over deals; Elo = logistic Elo of the duplicate score "
               "(about half a Bradley-Terry difference, see docs/regression.md)")
    yield (f"H0: elo = {sprt.elo0:+g} (exit 1, regression)   H1: elo = {sprt.elo1:+g} (exit 0, not a regression)   "
           f"alpha {sprt.alpha:g}, beta {sprt.beta:g}, LLR bounds ({sprt.lower:+.2f}, {sprt.upper:+.2f})")


def trajectory_line(point: TrajectoryPoint, test: DuplicateTest) -> str:
    """One line of the LLR trajectory."""
    bar_w = 21
    lo, hi = test.sprt.lower, test.sprt.upper
    pos = 0 if point.llr <= lo else bar_w - 1 if point.llr >= hi else int((point.llr - lo) / (hi - lo) * (bar_w - 1))
    bar = "".join("|" if i == bar_w // 2 and i != pos else "*" if i == pos else "." for i in range(bar_w))
    return f"  deal {point.deals:5d}  games {point.games:6d}  LLR {point.llr:+7.3f}  [{bar}]"


def summary_lines(report: RegressReport) -> Iterator[str]:
    """The final lines: verdict, Elo with interval, games."""
    verdict = {
        SprtState.H1: f"H1 accepted: not a regression (elo >= {report.sprt.elo1:+g})",
        SprtState.H0: f"H0 accepted: REGRESSION (elo <= {report.sprt.elo0:+g})",
        SprtState.CONTINUE: "undecided: the game budget ran out before the test decided",
    }[report.state]
    llr = report.test.trajectory[-1].llr if report.test.trajectory else 0.0
    yield f"result: {verdict}"
    yield f"LLR {llr:+.3f} (bounds {report.sprt.lower:+.2f}, {report.sprt.upper:+.2f})"
    if report.estimate is not None:
        scale = "logistic Elo" if report.plan.head_to_head else "duplicate Elo (logistic)"
        yield f"Elo difference: {report.estimate} — {scale}, candidate minus baseline"
    if report.plan.head_to_head:
        yield f"pentanomial [LL, LD, DD+WL, WD, WW]: {report.test.penta}"
    yield (f"games played: {report.test.games} in {report.test.deals} deal(s) of {report.plan.games_per_deal}, "
           f"budget {report.max_games}; {report.elapsed_s:.1f} s, backend {report.backend}")


def print_text(report: RegressReport, out: Callable[[str], None] = print) -> None:
    """Print the summary."""
    for line in summary_lines(report):
        out(line)


def print_json(report: RegressReport, out: Callable[[str], None] = print) -> None:
    """Print the JSON summary."""
    out(json.dumps(report.to_json(), indent=1))


def auto_every(max_games: int, per_deal: int, lines: int = 40) -> int:
    """Print every k-th trajectory point so a full budget shows about ``lines`` lines."""
    return max(1, math.ceil(max_games / per_deal / lines))
