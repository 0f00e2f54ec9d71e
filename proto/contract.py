"""The bot contract's revision, and what the referee tells a bot of an older or newer one.

A bot says in ``Hello.contract_revision`` which revision of the contract (the ``.proto``
files and the stdio line protocol) its code was written against; the referee answers in
``Welcome.contract_revision`` with its own, and in ``Welcome.notices`` with what changed
since the bot's revision. docs/bots.md, "Contract revisions", is the table for people;
:data:`CHANGES` is the same table for the referee (``tests/proto/test_contract_revision.py`` keeps
the two in step).

A revision is released when a change a bot author may have to act on lands (a rename, a
changed meaning, a removed key); additions that older bots can ignore do not need one.
A rename keeps the old name beside the new for one revision (the deprecation window):
:data:`DEPRECATED_STDIO_KEYS` lists such keys of the stdio line protocol.
"""

from __future__ import annotations

from dataclasses import dataclass

CONTRACT_REVISION = 3
"""The revision this code speaks."""

OLDEST_SUPPORTED = 1
"""A Hello naming an older revision is refused (``ERROR_CODE_HELLO_REFUSED``)."""

DOCS = "docs/bots.md, \"Contract revisions\""


@dataclass(frozen=True, slots=True)
class Revision:
    """One released revision: its number, date and what a bot author must act on."""

    number: int
    date: str
    changes: tuple[str, ...]


CHANGES: tuple[Revision, ...] = (
    Revision(1, "2026-12-01", ("the first released contract (proto/released/parterre-v1.binpb)",)),
    Revision(2, "2026-12-07", (
        "Hello.contract_revision (11) and Welcome.contract_revision (3), Welcome.notices (4): "
        "send the revision your code was written against",
        "a refused Hello (bot name or version) comes as ERROR_CODE_HELLO_REFUSED (6), not "
        "ERROR_CODE_PROTOCOL: do not reconnect with the same Hello",
        "enum values carry their type's prefix (ERROR_CODE_PROTOCOL, REJECTION_CODE_LATE); "
        "the message Error is RefereeError; proto files are imported as parterre/v1/X.proto",
        "La Fleur: the player key hand_size is cards_in_hand (the stdio adapter sends both "
        "until revision 3)",
    )),
    Revision(3, "2026-12-07", (
        "Decision.debug (6): optional debug text per decision, shown only to the bot's owner (the "
        "owner's seat view) and in local play; at most 1,000 bytes of UTF-8, longer is cut and ends "
        "with \"…[cut]\"; stdio bots may answer {\"index\": N, \"debug\": \"...\"}",
        "La Fleur: the stdio adapter still sends hand_size beside cards_in_hand, until revision 4",
    )),
)
"""Every released revision, oldest first; the last is :data:`CONTRACT_REVISION`."""

DEBUG_MAX_BYTES = 1000
"""The most of one decision's ``Decision.debug`` that is kept, in bytes of UTF-8 (the marker
included); see :func:`cap_debug`."""

DEBUG_CUT_MARKER = "\u2026[cut]"
"""The end of a debug text that was cut to :data:`DEBUG_MAX_BYTES`."""

DEBUG_MAX_SEAT_BYTES = 100_000
"""The most debug text the referee keeps of one seat in one match attempt (the notes' bytes
summed); the decisions after that keep one note saying so, then nothing."""


def cap_debug(text: str) -> str:
    """``text`` cut to at most :data:`DEBUG_MAX_BYTES` bytes of UTF-8: itself when it fits,
    else its longest prefix that ends on a character boundary and leaves room for
    :data:`DEBUG_CUT_MARKER`, followed by the marker. Characters UTF-8 cannot encode (lone
    surrogates) become ``?``. The SDK and the stdio adapter cut before sending, the referee
    again on receipt (docs/bots.md, "Debug text")."""
    data = text.encode("utf-8", "replace")
    if len(data) <= DEBUG_MAX_BYTES:
        return data.decode("utf-8")
    room = DEBUG_MAX_BYTES - len(DEBUG_CUT_MARKER.encode("utf-8"))
    return data[:room].decode("utf-8", "ignore") + DEBUG_CUT_MARKER


DEPRECATED_STDIO_KEYS: dict[str, dict[str, str]] = {"lafleur": {"hand_size": "cards_in_hand"}}
"""Per game, ``old key -> new key`` of each ``observation.players[*]`` record that the stdio
adapter still sends under its old name too, until a later revision removes it (revision 3 added
``Decision.debug`` only and kept ``hand_size``: it goes in revision 4)."""


def hello_answer(revision: int) -> tuple[str | None, list[str]]:
    """What the referee answers a Hello naming ``revision`` (0: not named, a bot from before
    revision 2): ``(refusal, notices)``. A refusal is the message of ``ERROR_CODE_HELLO_REFUSED``;
    the notices go in ``Welcome.notices``."""
    named = revision if revision > 0 else 1
    if named < OLDEST_SUPPORTED:
        return (f"contract revision {named} is no longer supported (the oldest is {OLDEST_SUPPORTED}, "
                f"this referee speaks {CONTRACT_REVISION}): rebuild the bot from today's proto files "
                f"and see {DOCS}"), []
    if named > CONTRACT_REVISION:
        return None, [f"contract revision {named} is newer than this referee's ({CONTRACT_REVISION}): "
                      f"fields added after revision {CONTRACT_REVISION} are not sent; see {DOCS}"]
    if named == CONTRACT_REVISION:
        return None, []
    said = f"revision {named}" if revision > 0 else "no contract revision (a bot from before revision 2)"
    notices = [f"this bot names {said}; this referee speaks revision {CONTRACT_REVISION}; see {DOCS}"]
    for rev in CHANGES:
        if rev.number > named:
            notices += [f"revision {rev.number} ({rev.date}): {change}" for change in rev.changes]
    return None, notices
