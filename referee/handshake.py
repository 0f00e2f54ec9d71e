"""The handshake of a ``Referee.Connect`` stream (docs/architecture.md "Bot identity and tokens"; docs/faults.md F-06).

Decoding bot messages without raising (:func:`decode_bot_message`), refusing
a stream with an ``Error`` then a gRPC status (:func:`refuse`), and reading
``Hello`` to find out who is speaking (:func:`authenticate`): a bot's token,
a running trial's seat credential (referee/trials.py), or a relay from
another referee carrying the service token.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
from typing import NoReturn

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from proto import contract
from proto.parterre.v1 import referee_pb2 as pb
from referee.core import RefereeCore
from referee.headers import CLOSING_ERROR_HEADER, RELAY_BOT_HEADER, RELAY_FROM_HEADER
from referee.tokens import TokenStoreUnavailableError, token_hash
from referee.trials import TrialSeat

log = logging.getLogger(__name__)


MAX_VERSION_CHARS = 50
"""Longest ``Hello.bot_version`` the referee takes (S-23)."""

_VERSION_CHAR = re.compile(r"[A-Za-z0-9_.+\-~:/@#()]")
_VERSION_RE = re.compile(r"[A-Za-z0-9_.+\-~:/@#()]+(?: [A-Za-z0-9_.+\-~:/@#()]+)*")


def version_problem(version: str) -> str:
    """Why ``Hello.bot_version`` is refused, or ``""`` when it is fine (S-23).

    The version is shown on the public bot and match pages and in the API
    (``seats.bot_version``), so it follows the participants' bot-name rules
    (``ladder.owned_bots.BOT_NAME_RE``, which the referee may not import): ASCII
    letters, digits, ``_ . + -`` and, for version strings, ``~ : / @ # ( )``,
    single inner spaces, at most :data:`MAX_VERSION_CHARS` characters; no bidi
    controls, zero-width, control or other non-ASCII characters, no markup. Empty
    (no version announced) is fine. Refused, never cleaned: a cleaned string
    would still be a version the bot did not send.
    """
    if not version:
        return ""
    if len(version) > MAX_VERSION_CHARS:
        return f"Hello.bot_version is {len(version)} characters long; at most {MAX_VERSION_CHARS}"
    if _VERSION_RE.fullmatch(version):
        return ""
    for i, ch in enumerate(version):
        if not _VERSION_CHAR.fullmatch(ch) and not (ch == " " and 0 < i < len(version) - 1):
            return (f"Hello.bot_version may hold only ASCII letters, digits, _ . + - ~ : / @ # ( ) and single "
                    f"inner spaces: {_described(version, i)}")
    return "Hello.bot_version may not hold two spaces in a row"


MAX_NAME_CHARS = 100
"""Longest ``Hello.bot_name`` the referee takes."""

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})
_JOINERS = frozenset("\u200c\u200d")  # zero-width non-joiner and joiner: Persian, Indic scripts, emoji sequences
_FILLERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u180f\u3164\uffa0")
"""Letters and marks that show nothing (Hangul fillers, the combining grapheme joiner, Khmer inherent vowels,
Mongolian variation selectors): blank names and invisible padding."""
_MAX_MARKS = 8
"""Most combining marks in a row: enough for any script (Vietnamese stacks 2, Unicode's stream-safe limit is
30), not for the towers of a "Zalgo" name drawn over the lines around it."""


def _kind(ch: str) -> str:
    """``hidden``, ``mark``, ``joiner``, ``tag`` or ``shown``: what a character is to :func:`name_problem`."""
    code = ord(ch)
    if ch in _JOINERS:
        return "joiner"
    if 0xE0020 <= code <= 0xE007F:
        return "tag"
    if ch in _FILLERS or 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE:  # noncharacters too
        return "hidden"
    category = unicodedata.category(ch)
    if category in _HIDDEN_CATEGORIES:
        return "hidden"
    return "mark" if category[0] == "M" else "shown"  # unassigned (Cn): shown (a newer Unicode may know it)


def _described(text: str, i: int) -> str:
    """``character N (U+XXXX NAME)`` of ``text[i]``, counted from 1."""
    ch = text[i]
    return f"character {i + 1} (U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')})"


def name_problem(name: str) -> str:
    """Why ``Hello.bot_name`` is refused, or ``""`` when it is fine.

    The announced name is cosmetic: opponents see it in ``MatchStarted.players``
    and it is kept in replays (public downloads), while the web pages show the
    registered name. Any script is fine (it is the bot's own choice), but not
    text that hides, reorders or smears what is shown: control characters (NUL,
    newline, terminal escapes), format characters (bidi overrides and isolates,
    zero-width spaces, the byte-order mark), line and paragraph separators,
    private-use, surrogate and noncharacter code points, characters that show
    nothing (:data:`_FILLERS`); a combining mark first or more than
    :data:`_MAX_MARKS` in a row; more than :data:`MAX_NAME_CHARS` characters.
    The zero-width joiner and non-joiner (U+200D, U+200C), which Persian and
    Indic spelling and emoji sequences need, are fine after a shown character
    or a mark and before a shown character; emoji tag sequences (a flag:
    U+1F3F4 then tag characters) are fine. Code points this Python's Unicode
    does not know yet are taken as shown. Empty is fine. Refused with the first
    offending character, never cleaned (as :func:`version_problem`).
    """
    if len(name) > MAX_NAME_CHARS:
        return f"Hello.bot_name is {len(name)} characters long; at most {MAX_NAME_CHARS}"
    kinds = [_kind(ch) for ch in name]
    marks = 0
    for i, kind in enumerate(kinds):
        before = kinds[i - 1] if i else ""
        after = kinds[i + 1] if i + 1 < len(kinds) else ""
        marks = marks + 1 if kind == "mark" else 0
        if kind == "shown" or (kind == "mark" and i and marks <= _MAX_MARKS):
            continue
        if kind == "joiner" and before in ("shown", "mark") and after == "shown":
            continue
        if kind == "tag" and (before == "tag" or (i and name[i - 1] == "\U0001f3f4")):
            continue
        if kind == "mark" and i:
            return f"Hello.bot_name may not hold more than {_MAX_MARKS} combining marks in a row: {_described(name, i)}"
        return (f"Hello.bot_name may not hold control or formatting characters (newlines, escapes, bidi "
                f"controls, zero-width spaces; joiners only between two shown characters), line or paragraph "
                f"separators, characters that show nothing, a combining mark first, private-use or "
                f"noncharacter code points: {_described(name, i)}")
    return ""


def error_message(code: pb.ErrorCode, message: str) -> pb.RefereeMessage:
    """A ``RefereeMessage`` carrying ``Error(code, message)``."""
    return pb.RefereeMessage(error=pb.RefereeError(code=code, message=message))


def closing_trailers(code: pb.ErrorCode, message: str) -> tuple[tuple[str, bytes], ...]:
    """Trailing metadata carrying ``RefereeError(code, message)`` under
    :data:`~referee.headers.CLOSING_ERROR_HEADER`, for ``context.abort(..., trailing_metadata=...)``."""
    return ((CLOSING_ERROR_HEADER, pb.RefereeError(code=code, message=message).SerializeToString()),)


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
    await context.abort(status, message, trailing_metadata=closing_trailers(code, message))
    raise AssertionError("unreachable: ServicerContext.abort raises")


async def authenticate(core: RefereeCore, context: grpc.aio.ServicerContext, *,
                       relay_only: bool) -> tuple[pb.Hello, int, str, TrialSeat | None] | None:
    """Read Hello and check who is speaking; returns ``(hello, bot_id, relay_from, trial_seat)``,
    or None when the client left before saying anything.

    Three kinds of stream: a bot's own (``Hello.token`` checked against the
    token store), a running trial's seat (``sha256(Hello.token)`` is one of its
    ``seat_credential_digests``, looked up before the token store: ``trial_seat``
    is that seat, ``bot_id`` the id it is shown with; referee/trials.py) and a
    relay from another referee of the cluster (service token and
    ``x-parterre-relay-bot`` in metadata; referee/cluster.py).
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
    problem = version_problem(hello.bot_version)
    if problem:
        core.protocol_error(None, "bad_version", "")
        await refuse(context, grpc.StatusCode.INVALID_ARGUMENT, pb.ERROR_CODE_HELLO_REFUSED, problem)
    problem = name_problem(hello.bot_name)
    if problem:
        core.protocol_error(None, "bad_name", "")
        await refuse(context, grpc.StatusCode.INVALID_ARGUMENT, pb.ERROR_CODE_HELLO_REFUSED, problem)
    refusal, _ = contract.hello_answer(hello.contract_revision)
    if refusal:
        core.protocol_error(None, "old_contract", "")
        await refuse(context, grpc.StatusCode.INVALID_ARGUMENT, pb.ERROR_CODE_HELLO_REFUSED, refusal)
    if relay_bot is not None:
        return hello, int(relay_bot), relay_from, None
    if not hello.token:
        core.auth_failed("missing")
        await refuse(context, grpc.StatusCode.UNAUTHENTICATED, pb.ERROR_CODE_UNAUTHENTICATED, "Hello.token is missing")
    trial = core.trial_book.admit(token_hash(hello.token))
    if trial is not None:  # a running trial's credential: that seat only, never the token store's
        return hello, trial.bot_id, "", trial
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
    return hello, bot_id, "", None
