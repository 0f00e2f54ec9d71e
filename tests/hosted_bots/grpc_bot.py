"""A hosted gRPC bot (docs/hosted.md): the project's Python SDK and greedy strategy, over the relayed socket.

It reads its address and token as every SDK does (``PARTERRE_REFEREE_ADDRESS``, ``PARTERRE_BOT_TOKEN``).
The first argument is the mode:

* ``greedy`` (default): the greedy strategy, an honest bot;
* ``illegal``: answers an index out of range at its first decision;
* ``probe``: before playing greedy, tries what a hostile bot would and prints each outcome to stderr
  (its log): TCP to the given ``host:port`` arguments, the given Unix socket paths, ``MatchControl.RunMatch``
  and the health service through the socket, the files of ``/run/parterre``, its token.
"""

import asyncio
import os
import socket
import sys

import grpc

from bots.sdk import Bot, DecisionRequest
from bots.strategies import STRATEGIES

MODE = sys.argv[1] if len(sys.argv) > 1 else "greedy"
ADDRESS = os.environ.get("PARTERRE_REFEREE_ADDRESS", "")
TOKEN = os.environ.get("PARTERRE_BOT_TOKEN", "")


def say(*parts: object) -> None:
    print("PROBE", *parts, file=sys.stderr, flush=True)


def probe() -> None:
    say("token", repr(TOKEN), "address", ADDRESS)
    say("run-parterre", sorted(os.listdir("/run/parterre")))
    for target in sys.argv[2:]:
        if target.startswith("/"):  # a Unix socket of the host (another match's relay, PostgreSQL's...)
            try:
                with socket.socket(socket.AF_UNIX) as sock:
                    sock.settimeout(2)
                    sock.connect(target)
                    say("unix", target, "CONNECTED")
            except OSError as exc:
                say("unix", target, "refused", type(exc).__name__)
            continue
        host, _, port = target.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                say("tcp", target, "CONNECTED")
        except OSError as exc:
            say("tcp", target, "refused", type(exc).__name__)
    from proto.parterre.v1 import control_pb2, control_pb2_grpc

    with grpc.insecure_channel(ADDRESS) as channel:
        try:
            stub = control_pb2_grpc.MatchControlStub(channel)
            list(stub.RunMatch(control_pb2.RunMatchRequest(match_id=999, game_string="floriferous(players=2)",
                                                           seat_bot_ids=[1, 2]), timeout=5))
            say("control RunMatch OK")
        except grpc.RpcError as exc:
            say("control RunMatch", exc.code().name)
        try:
            health = channel.unary_unary("/grpc.health.v1.Health/Check")
            health(b"", timeout=5)
            say("health OK")
        except grpc.RpcError as exc:
            say("health", exc.code().name)


class GrpcGreedy(Bot):
    name = "grpc-greedy"

    def __init__(self) -> None:
        super().__init__(max_concurrent_matches=4)

    def choose(self, request: DecisionRequest) -> int:
        if MODE == "illegal":
            return request.num_actions + 7
        strategy = STRATEGIES.get(("greedy", request.game))
        if strategy is None:
            return 0
        return strategy(request.observation, request.legal_actions, request.seat)


if MODE == "probe":
    probe()
    say("done")
asyncio.run(GrpcGreedy().arun(ADDRESS, TOKEN))
