"""The handshake of a ``Referee.Connect`` stream (DESIGN §3, FAULTS F-06).

Decoding bot messages without raising (:func:`decode_bot_message`), refusing
a stream with an ``Error`` then a gRPC status (:func:`refuse`), and reading
``Hello`` to find out who is speaking (:func:`authenticate`): a bot's token,
or a relay from another referee carrying the service token.
"""

from __future__ import annotations

import asyncio
import logging
from typing import NoReturn

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from proto.parterre.v1 import referee_pb2 as pb
from referee.core import RefereeCore
from referee.headers import RELAY_BOT_HEADER, RELAY_FROM_HEADER
from referee.tokens import TokenStoreUnavailableError

log = logging.getLogger(__name__)


def error_message(code: pb.ErrorCode, message: str) -> pb.RefereeMessage:
    """A ``RefereeMessage`` carrying ``Error(code, message)``."""
    return pb.RefereeMessage(error=pb.RefereeError(code=code, message=message))


class Undecodable:
    """What the request deserializer returns for bytes that are not a ``BotMessage``
    (so the referee can answer with a clear error instead of a bare stream failure).

    Attributes:
        size: length of the bytes.
        error: the protobuf decoder's complaint.
    """

    __slots__ = ("size", "error")

    def __init__(self, size: int, error: str) -> None:
        self.size = size
        self.error = error


def decode_bot_message(data: bytes) -> pb.BotMessage | Undecodable:
    """Request deserializer of ``Referee.Connect``: never raises."""
    try:
        return pb.BotMessage.FromString(data)
    except (DecodeError, RecursionError) as exc:  # RecursionError: absurd nesting
        return Undecodable(len(data), f"{type(exc).__name__}: {str(exc)[:200]}")
    except Exception as exc:  # a decoder bug must still end in a clear Error, not a bare stream failure
        log.exception("decoding a BotMessage of %d bytes failed unexpectedly", len(data))
        return Undecodable(len(data), f"{type(exc).__name__}: {str(exc)[:200]}")


async def refuse(context: grpc.aio.ServicerContext, status: grpc.StatusCode, code: pb.ErrorCode,
                 message: str) -> NoReturn:
    """Send ``Error(code, message)`` on the stream, then abort the RPC with ``status``.

    Raises:
        grpc.aio.AbortError: always (grpc's way of ending the RPC).
    """
    await context.write(error_message(code, message))
    await context.abort(status, message)
    raise AssertionError("unreachable: ServicerContext.abort raises")


async def authenticate(core: RefereeCore, context: grpc.aio.ServicerContext, *,
                       relay_only: bool) -> tuple[pb.Hello, int, str] | None:
    """Read Hello and check who is speaking; returns ``(hello, bot_id, relay_from)``,
    or None when the client left before saying anything.

    Two kinds of stream: a bot's own (``Hello.token`` checked against the
    token store) and a relay from another referee of the cluster (service
    token and ``x-parterre-relay-bot`` in metadata; referee/cluster.py).
    ``relay_only`` (the internal control endpoint) refuses bots with
    ``PERMISSION_DENIED``.

    Aborts the RPC (raises) on any failure, after an ``Error`` message.
    """
    metadata = {k: v for k, v in (context.invocation_metadata() or ())}
    relay_bot = metadata.get(RELAY_BOT_HEADER)
    relay_from = ""
    if relay_bot is not None:
        if not core.service_token_ok(metadata) or not str(relay_bot).isdigit():
            core.auth_failed("relay")
            await refuse(context, grpc.StatusCode.UNAUTHENTICATED, pb.ERROR_CODE_UNAUTHENTICATED,
                         "relay streams need the service token")
        relay_from = str(metadata.get(RELAY_FROM_HEADER) or "?")[:100]
    elif relay_only:
        core.auth_failed("control_endpoint")
        await refuse(context, grpc.StatusCode.PERMISSION_DENIED, pb.ERROR_CODE_UNAUTHENTICATED,
                     "this is the referee's internal endpoint; bots connect to the bot endpoint")
    try:
        first = await asyncio.wait_for(context.read(), core.settings.hello_timeout_ms / 1000.0)
    except TimeoutError:
        core.protocol_error(None, "no_hello", "")
        await refuse(context, grpc.StatusCode.DEADLINE_EXCEEDED, pb.ERROR_CODE_PROTOCOL,
                     f"no Hello within {core.settings.hello_timeout_ms} ms")
    if first is grpc.aio.EOF:
        return None
    if isinstance(first, Undecodable):
        core.counters.undecodable += 1
        core.protocol_error(None, "undecodable", "")
        await refuse(context, grpc.StatusCode.INVALID_ARGUMENT, pb.ERROR_CODE_PROTOCOL,
                     f"the first message ({first.size} bytes) is not a BotMessage: {first.error}")
    kind = first.WhichOneof("kind")
    if kind != "hello":
        core.protocol_error(None, "no_hello", "")
        await refuse(context, grpc.StatusCode.FAILED_PRECONDITION, pb.ERROR_CODE_PROTOCOL,
                     f"the first message must be Hello, got {kind or 'an empty BotMessage'}")
    hello = first.hello
    if relay_bot is not None:
        return hello, int(relay_bot), relay_from
    if not hello.token:
        core.auth_failed("missing")
        await refuse(context, grpc.StatusCode.UNAUTHENTICATED, pb.ERROR_CODE_UNAUTHENTICATED, "Hello.token is missing")
    try:
        bot_id = await core.token_store.lookup(hello.token)
    except TokenStoreUnavailableError as exc:
        log.warning("token store unavailable: %s", exc)
        await refuse(context, grpc.StatusCode.UNAVAILABLE, pb.ERROR_CODE_UNAVAILABLE,
                     "token store unavailable, try again later")
    if bot_id is None:
        core.auth_failed("invalid")
        await refuse(context, grpc.StatusCode.UNAUTHENTICATED, pb.ERROR_CODE_UNAUTHENTICATED,
                     "unknown or revoked token")
    return hello, bot_id, ""
