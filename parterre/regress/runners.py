"""How a deal is played: the ``Runner`` interface and the ``referee`` and ``ladder`` backends."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parterre.regress.plan import RegressPlan, rotations
from parterre.regress.spec import Ranks, RegressError

#: Time control of in-process matches (ms): generous, built-in bots never come near it.
IN_PROCESS_TIME_CONTROL = {"base_ms": 0, "increment_ms": 60_000, "cap_ms": 60_000, "margin_ms": 5_000}


#: Default time control of ladder-backed regress matches (ms).
LADDER_TIME_CONTROL = {"base_ms": 0, "increment_ms": 2000, "cap_ms": 2000, "margin_ms": 250}


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


class RefereeRunner(Runner):
    """The ``referee`` backend: a real referee on 127.0.0.1 and the built-in bots, in a background thread.

    The referee (static token store, no Redis) and one SDK bot per role run in a
    :class:`referee.testing.ThreadedReferee` (the one helper for a referee on its
    own event loop in a daemon thread); each deal's matches are started at once
    through ``MatchControl.RunMatch`` with a random service token.

    Args:
        plan: the run's plan (built-in bots only).
        run_seed: seeds the bots (seed ``"{run_seed}:{role}"``).
        time_control: per-match time control (ms); :data:`IN_PROCESS_TIME_CONTROL` by default.
        on_result: called on the referee's loop with ``(roles by seat, MatchResult)`` for every finished
            match (the benches count verdicts with it).

    Raises:
        RegressError: a registered bot in the plan, or the referee (or a bot) did not start within 30 s.
    """

    backend = "referee"

    def __init__(self, plan: RegressPlan, run_seed: str, time_control: Mapping[str, int] | None = None,
                 on_result: Callable[[Sequence[str], Any], None] | None = None) -> None:
        from referee.testing import ThreadedReferee

        for role, spec in plan.roles():
            if not spec.builtin:
                raise RegressError(f"the referee backend plays builtin bots; {role} is {spec.text!r}")
        self.plan = plan
        self.tc = dict(time_control or IN_PROCESS_TIME_CONTROL)
        self.on_result = on_result
        concurrent_matches = 2 * plan.players * 4
        bots = {
            role: spec.make(seed=f"{run_seed}:{role}", name=f"{role}", max_concurrent_matches=concurrent_matches)
            for role, spec in plan.roles()
        }
        self.ids = {role: i + 1 for i, (role, _) in enumerate(plan.roles())}
        tokens = {f"regress-{role}-{secrets.token_hex(8)}": role for role in self.ids}
        self._match_ids = itertools.count(1)
        self._referee = ThreadedReferee(
            {tok: self.ids[role] for tok, role in tokens.items()},
            bots={tok: bots[role] for tok, role in tokens.items()},
            bot_options={"initial_backoff_s": 0.05}, start_timeout_s=30.0, service_token=secrets.token_hex(16),
        )
        try:
            self._referee.start()
        except TimeoutError as exc:
            self._referee.stop()
            raise RegressError(f"the in-process referee did not start: {exc}") from exc
        except Exception as exc:
            self._referee.stop()
            raise RegressError(f"the in-process referee failed to start: {exc}") from exc

    async def _run_match(self, game_string: str, seed: str, seats: Sequence[str]) -> Ranks:
        harness = self._referee.harness
        assert harness is not None
        tc = self.tc
        match_id = next(self._match_ids)
        events = await harness.run_match_events(
            match_id, game_string, [self.ids[r] for r in seats], base_ms=tc["base_ms"],
            increment_ms=tc["increment_ms"], cap_ms=tc["cap_ms"], margin_ms=tc["margin_ms"], seed=seed,
            no_show_timeout_ms=10_000, max_duration_ms=0,
        )
        results = [e.result for e in events if e.HasField("result")]
        if not results or results[-1].status != "finished":
            status = results[-1].status if results else "no result"
            raise RegressError(f"in-process match {match_id} ({game_string}) ended {status}")
        if self.on_result is not None:
            self.on_result(seats, results[-1])
        by_seat = sorted(results[-1].seats, key=lambda s: s.seat)
        return tuple(int(s.rank) for s in by_seat)

    async def _run_deal(self, seed: str) -> list[list[Ranks]]:
        plan = self.plan
        tables = plan.tables({role: role for role, _ in plan.roles()})
        coros = [[self._run_match(plan.game_string, seed, seats) for seats in rotations(t)] for t in tables]
        flat = await asyncio.gather(*(c for row in coros for c in row))
        n = plan.players
        return [list(flat[i * n:(i + 1) * n]) for i in range(len(tables))]

    def start_deal(self, index: int, seed: str) -> concurrent.futures.Future[list[list[Ranks]]]:
        """Schedule the deal's matches on the referee's loop."""
        return self._referee.submit(self._run_deal(seed))

    def close(self) -> None:
        """Stop the bots and the referee, and join the thread."""
        self._referee.stop(timeout_s=15.0)


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
