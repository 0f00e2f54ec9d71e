"""An in-process referee for tests and benchmarks (grpc-python examples' habit:
bind port 0, real gRPC over loopback).

Example::

    async with Harness({"tok-a": 1, "tok-b": 2}) as h:
        h.start_bot(RandomBot(), "tok-a")
        h.start_bot(RandomBot(), "tok-b")
        result = await h.run_match(1, "toy(players=2)", [1, 2])

For synchronous code (Celery tasks, blocking gRPC clients), the same referee
runs in a background thread with its own event loop::

    with ThreadedReferee({"tok-a": 1, "tok-b": 2}, bots={"tok-a": RandomBot(), "tok-b": RandomBot()}) as ref:
        run_match_against(ref.address)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import grpc
import grpc.aio

from proto.parterre.v1 import control_pb2 as control_pb
from proto.parterre.v1 import control_pb2_grpc as control_grpc
from proto.parterre.v1 import referee_pb2 as pb
from referee.cluster import ClusterConfig
from referee.core import RefereeCore
from referee.headers import SERVICE_TOKEN_HEADER
from referee.server import TlsConfig, core_of, create_server
from referee.tokens import StaticTokenStore, TokenStore

SERVICE_TOKEN = "test-service-token"

T = TypeVar("T")


class Harness:
    """A started referee on 127.0.0.1:<free port> plus bot tasks.

    Args:
        tokens: token -> bot id for a :class:`StaticTokenStore` (ignored when
            ``token_store`` is given).
        token_store: a token store to use instead.
        control: serve ``MatchControl`` on a separate port (``control_address``).
        tls: serve the bot endpoint with TLS (bots then need a secure channel).
        cluster: join a cluster of referees (referee/cluster.py).
        referee_id: the referee's id (default ``host:pid``; set it when several
            harnesses share a process and a cluster).
        service_token: the referee's service token (default :data:`SERVICE_TOKEN`;
            give a random one when the referee serves a real run, e.g. ``parterre regress``).
        **settings: :class:`referee.server.RefereeSettings` overrides.

    Attributes:
        address: ``127.0.0.1:<port>`` of the bot endpoint.
        control_address: where ``MatchControl`` is served (``address`` unless ``control``).
        core: the :class:`RefereeCore`.
        store: the token store.
    """

    def __init__(self, tokens: Mapping[str, int] | None = None, *, token_store: TokenStore | None = None,
                 control: bool = False, tls: TlsConfig | None = None, cluster: ClusterConfig | None = None,
                 referee_id: str = "", service_token: str = SERVICE_TOKEN, **settings: Any) -> None:
        self.store: Any = token_store or StaticTokenStore(tokens or {})
        self.service_token = service_token
        self.settings = settings
        if referee_id:
            self.settings["referee_id"] = referee_id
        self.control = control
        self.tls = tls
        self.cluster = cluster
        self.server: grpc.aio.Server | None = None
        self.address = ""
        self.control_address = ""
        self.core: RefereeCore | None = None
        self.bots: list[tuple[Any, asyncio.Task[Any]]] = []
        self._channel: grpc.aio.Channel | None = None

    async def __aenter__(self) -> Harness:
        self.server, port = await create_server(
            "127.0.0.1:0", token_store=self.store, service_token=self.service_token,
            control_address="127.0.0.1:0" if self.control else None, tls=self.tls, cluster=self.cluster,
            **self.settings,
        )
        self.core = core_of(self.server)
        self.address = f"127.0.0.1:{port}"
        self.control_address = f"127.0.0.1:{self.core.control_port}" if self.control else self.address
        if self.tls is not None and not self.control:
            creds = grpc.ssl_channel_credentials(root_certificates=self.tls.cert_chain)
            self._channel = grpc.aio.secure_channel(self.address, creds, options=[
                ("grpc.ssl_target_name_override", "localhost")])
        else:
            self._channel = grpc.aio.insecure_channel(self.control_address)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        for bot, _ in self.bots:
            bot.stop()
        tasks = [t for _, t in self.bots]
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=2.0)
            for t in pending:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._channel is not None:
            await self._channel.close()
        assert self.core is not None
        await self.core.stop(grace_s=0.5)

    def start_bot(self, bot: Any, token: str, **kwargs: Any) -> asyncio.Task[Any]:
        """Run ``bot.arun(address, token, **kwargs)`` as a task (stopped on exit)."""
        task = asyncio.create_task(bot.arun(self.address, token, **kwargs))
        self.bots.append((bot, task))
        return task

    async def wait_sessions(self, bot_id: int, count: int = 1, timeout_s: float = 5.0) -> None:
        """Wait until ``bot_id`` has ``count`` connected sessions.

        Raises:
            TimeoutError: not within ``timeout_s``.
        """
        assert self.core is not None
        async with asyncio.timeout(timeout_s):
            while len(self.core.registry.by_bot.get(bot_id, ())) < count:
                await asyncio.sleep(0.005)

    def match_control(self) -> control_grpc.MatchControlStub:
        """A MatchControl stub on the harness channel."""
        assert self._channel is not None
        return control_grpc.MatchControlStub(self._channel)

    async def run_match_events(
        self, match_id: int, game_string: str, bot_ids: Sequence[int], *, base_ms: int = 0,
        increment_ms: int = 0, cap_ms: int = 2000, margin_ms: int = 50, seed: str = "seed",
        no_show_timeout_ms: int = 3000, max_duration_ms: int = 0, attempt: int = 1,
        metadata: Sequence[tuple[str, str]] | None = None, trial: bool = False,
        seat_credential_digests: Sequence[str] = (), seat_bot_names: Sequence[str] = (),
    ) -> list[control_pb.MatchEvent]:
        """Call RunMatch and return every event (the last is the result); ``trial`` and
        ``seat_credential_digests``: a trial (referee/trials.py).

        Raises:
            grpc.aio.AioRpcError: the call failed.
        """
        req = control_pb.RunMatchRequest(
            match_id=match_id, attempt=attempt, game_string=game_string, seed=seed, seat_bot_ids=list(bot_ids),
            time_control=pb.TimeControl(base_ms=base_ms, increment_ms=increment_ms, cap_ms=cap_ms,
                                        margin_ms=margin_ms),
            no_show_timeout_ms=no_show_timeout_ms, max_duration_ms=max_duration_ms, trial=trial,
            seat_credential_digests=list(seat_credential_digests), seat_bot_names=list(seat_bot_names),
        )
        md = [(SERVICE_TOKEN_HEADER, self.service_token)] if metadata is None else list(metadata)
        return [ev async for ev in self.match_control().RunMatch(req, metadata=md)]

    async def run_match(self, match_id: int, game_string: str, bot_ids: Sequence[int],
                        **kwargs: Any) -> control_pb.MatchResult:
        """Like :meth:`run_match_events`, returning only the MatchResult (exactly one is required)."""
        events = await self.run_match_events(match_id, game_string, bot_ids, **kwargs)
        results = [e.result for e in events if e.HasField("result")]
        assert len(results) == 1, f"expected exactly one result, got {len(results)}"
        assert events[-1].HasField("result"), "the result must be the last event"
        return results[0]


def replay_of(result: control_pb.MatchResult) -> dict[str, Any]:
    """The parsed replay JSON of a result."""
    data: dict[str, Any] = json.loads(result.replay_json)
    return data


class ThreadedReferee:
    """A :class:`Harness` in a background thread with its own event loop, plus its bots.

    A context manager (or :meth:`start` / :meth:`stop`): entering starts the
    thread, the referee and the bots, and returns once every bot of ``bots``
    has a session; leaving stops them and joins the thread.

    Args:
        tokens: token -> bot id (a :class:`StaticTokenStore`), as :class:`Harness`.
        bots: token -> bot (anything with ``arun(address, token)`` and ``stop()``),
            started on the referee's loop.
        bot_options: keyword arguments for every ``bot.arun`` (e.g. ``initial_backoff_s``).
        start_timeout_s: how long :meth:`start` waits for the referee and the bots.
        **harness: other :class:`Harness` arguments (``control``, ``cluster``,
            ``referee_id``, settings overrides such as ``reconnect_grace_ms``).

    Attributes:
        harness: the running :class:`Harness` (touch it only through :meth:`call` / :meth:`run`).
        address: ``127.0.0.1:<port>`` of the bot endpoint.
        control_address: where ``MatchControl`` is served.
        core: the :class:`RefereeCore` (same caveat as ``harness``).
    """

    def __init__(self, tokens: Mapping[str, int] | None = None, *, bots: Mapping[str, Any] | None = None,
                 bot_options: Mapping[str, Any] | None = None, start_timeout_s: float = 20.0,
                 **harness: Any) -> None:
        self.tokens = dict(tokens or {})
        self.bots = dict(bots or {})
        self.bot_options = dict(bot_options or {})
        self.start_timeout_s = start_timeout_s
        self._harness_args = harness
        self.harness: Harness | None = None
        self.address = ""
        self.control_address = ""
        self.core: RefereeCore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._thread_main, name="threaded-referee", daemon=True)

    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # handed to start(), which re-raises it in the caller's thread
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with Harness(self.tokens, **self._harness_args) as h:
            for token, bot in self.bots.items():
                h.start_bot(bot, token, **self.bot_options)
            for bot_id in sorted({self.tokens[t] for t in self.bots}):
                await h.wait_sessions(bot_id, timeout_s=self.start_timeout_s)
            self.harness, self.core = h, h.core
            self.address, self.control_address = h.address, h.control_address
            self._ready.set()
            await self._stop.wait()

    def start(self) -> ThreadedReferee:
        """Start the referee and its bots; returns ``self``.

        Raises:
            TimeoutError: not ready within ``start_timeout_s``.
            Exception: whatever starting the referee raised in its thread.
        """
        self._thread.start()
        if not self._ready.wait(self.start_timeout_s):
            raise TimeoutError(f"the referee did not start within {self.start_timeout_s} s")
        if self._error is not None:
            raise self._error
        return self

    def stop(self, timeout_s: float = 20.0) -> None:
        """Stop the bots and the referee, and join the thread (idempotent)."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout_s)

    def __enter__(self) -> ThreadedReferee:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def submit(self, coro: Awaitable[T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the referee's loop; returns a future to wait on from any thread."""
        assert self._loop is not None, "start() first"

        async def wrapped() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop)

    def run(self, coro: Awaitable[T], timeout_s: float = 10.0) -> T:
        """Run ``coro`` on the referee's loop and return its result (blocks the caller)."""
        return self.submit(coro).result(timeout_s)

    def call(self, fn: Callable[[], T], timeout_s: float = 10.0) -> T:
        """Call ``fn()`` on the referee's loop (to read rooms and sessions safely) and return its result."""

        async def run() -> T:
            return fn()

        return self.run(run(), timeout_s)
