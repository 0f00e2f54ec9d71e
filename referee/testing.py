"""An in-process referee for tests and benchmarks (grpc-python examples' habit:
bind port 0, real gRPC over loopback).

Example::

    async with Harness({"tok-a": 1, "tok-b": 2}) as h:
        h.start_bot(RandomBot(), "tok-a")
        h.start_bot(RandomBot(), "tok-b")
        result = await h.run_match(1, "toy(players=2)", [1, 2])
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from proto.parterre.v1 import referee_pb2 as pb
from proto.parterre.v1 import referee_pb2_grpc as pb_grpc
from referee.cluster import ClusterConfig
from referee.server import SERVICE_TOKEN_HEADER, RefereeCore, TlsConfig, core_of, create_server
from referee.tokens import StaticTokenStore, TokenStore

SERVICE_TOKEN = "test-service-token"


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
        **settings: :class:`referee.server.RefereeSettings` overrides.

    Attributes:
        address: ``127.0.0.1:<port>`` of the bot endpoint.
        control_address: where ``MatchControl`` is served (``address`` unless ``control``).
        core: the :class:`RefereeCore`.
        store: the token store.
    """

    def __init__(self, tokens: Mapping[str, int] | None = None, *, token_store: TokenStore | None = None,
                 control: bool = False, tls: TlsConfig | None = None, cluster: ClusterConfig | None = None,
                 referee_id: str = "", **settings: Any) -> None:
        self.store: Any = token_store or StaticTokenStore(tokens or {})
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
            "127.0.0.1:0", token_store=self.store, service_token=SERVICE_TOKEN,
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

    def match_control(self) -> pb_grpc.MatchControlStub:
        """A MatchControl stub on the harness channel."""
        assert self._channel is not None
        return pb_grpc.MatchControlStub(self._channel)

    async def run_match_events(
        self, match_id: int, game_string: str, bot_ids: Sequence[int], *, base_ms: int = 0,
        increment_ms: int = 0, cap_ms: int = 2000, margin_ms: int = 50, seed: str = "seed",
        no_show_timeout_ms: int = 3000, max_duration_ms: int = 0, attempt: int = 1,
        metadata: Sequence[tuple[str, str]] | None = None,
    ) -> list[pb.MatchEvent]:
        """Call RunMatch and return every event (the last is the result).

        Raises:
            grpc.aio.AioRpcError: the call failed.
        """
        req = pb.RunMatchRequest(
            match_id=match_id, attempt=attempt, game_string=game_string, seed=seed, seat_bot_ids=list(bot_ids),
            time_control=pb.TimeControl(base_ms=base_ms, increment_ms=increment_ms, cap_ms=cap_ms,
                                        margin_ms=margin_ms),
            no_show_timeout_ms=no_show_timeout_ms, max_duration_ms=max_duration_ms,
        )
        md = [(SERVICE_TOKEN_HEADER, SERVICE_TOKEN)] if metadata is None else list(metadata)
        return [ev async for ev in self.match_control().RunMatch(req, metadata=md)]

    async def run_match(self, match_id: int, game_string: str, bot_ids: Sequence[int], **kwargs: Any) -> pb.MatchResult:
        """Like :meth:`run_match_events`, returning only the MatchResult (exactly one is required)."""
        events = await self.run_match_events(match_id, game_string, bot_ids, **kwargs)
        results = [e.result for e in events if e.HasField("result")]
        assert len(results) == 1, f"expected exactly one result, got {len(results)}"
        assert events[-1].HasField("result"), "the result must be the last event"
        return results[0]


def replay_of(result: pb.MatchResult) -> dict[str, Any]:
    """The parsed replay JSON of a result."""
    data: dict[str, Any] = json.loads(result.replay_json)
    return data
