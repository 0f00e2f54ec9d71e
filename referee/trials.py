"""Trials: unrated games whose seats are taken by credential, not by bot id (docs/hosted.md "gRPC bots").

A ``RunMatchRequest`` with ``trial`` set (only a caller with the service token
can send one) declares one sha256 digest per seat
(``seat_credential_digests``). While the trial runs, a ``Referee.Connect``
stream whose ``Hello.token`` hashes to one of them is admitted
(:func:`referee.handshake.authenticate`, before the token store is asked) for
that seat only:

* its session is registered under the seat's own *key*, a negative number
  that no bot id takes (:class:`TrialBook`): only that seat of that trial
  ever picks it (``SessionRegistry.acquire`` by key), and two seats of one
  bot id (a regression test) are told apart by their credentials;
* it is shown with the request's bot id (Welcome, ``PlayerInfo``, the
  result) and the request's name;
* it is never in the cluster's presence, never lent or relayed to another
  referee, skipped by the periodic token re-check;
* when the trial ends its digests are forgotten at once (the credential is
  refused from then on) and its sessions are closed once what was queued
  to them (``MatchEnded``) is written.

The trial's room is kept apart from the ladder's rooms (``RefereeCore.trials``,
by a number of the referee's own): its shown match id never supersedes nor is
superseded by a ladder match of the same id, and it has no live feed.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from proto.parterre.v1 import referee_pb2 as pb
from referee.sessions import Session, SessionRegistry

DIGEST_RE = re.compile(r"[0-9a-f]{64}")
"""A credential digest: lowercase sha256 hex (``referee.tokens.token_hash``)."""

CLOSE_DRAIN_S = 1.0
"""How long a trial's session may take to write what was queued to it (``MatchEnded``) before it is closed."""


class TrialError(ValueError):
    """A trial's digests cannot be taken (malformed, repeated, or already a running trial's)."""


@dataclass(frozen=True, slots=True)
class TrialSeat:
    """One seat of a running trial, as a credential admits it.

    Attributes:
        trial: the trial's number on this referee.
        seat: the seat (from 0).
        key: the registry key of the seat's sessions (negative: never a bot id).
        bot_id: the bot id the seat is shown with (``RunMatchRequest.seat_bot_ids``).
    """

    trial: int
    seat: int
    key: int
    bot_id: int


def check_digests(digests: Sequence[str], seats: int, trial: bool) -> None:
    """Refuse ``RunMatchRequest.seat_credential_digests`` that do not fit the request.

    Raises:
        TrialError: outside a trial any non-empty list; in a trial, not one well-formed digest per
            seat, or one repeated.
    """
    if not trial:
        if any(digests):
            raise TrialError("seat_credential_digests: only a trial seats by credential")
        return
    if len(digests) != seats:
        raise TrialError(f"seat_credential_digests: {len(digests)} digests for {seats} seats (a trial needs one "
                         "per seat)")
    for i, digest in enumerate(digests):
        if not DIGEST_RE.fullmatch(digest):
            raise TrialError(f"seat_credential_digests[{i}]: not a lowercase sha256 hex digest")
    if len(set(digests)) != len(digests):
        raise TrialError("seat_credential_digests: a digest is repeated (one credential per seat)")


class TrialBook:
    """The running trials' credential digests and seat keys of one referee."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self._keys = itertools.count(1)
        self.by_digest: dict[str, TrialSeat] = {}
        self.digests: dict[int, list[str]] = {}
        """Trial number -> its digests (while it runs)."""
        self._closing: set[asyncio.Task[None]] = set()

    def open(self, digests: Sequence[str], bot_ids: Sequence[int]) -> tuple[int, list[int]]:
        """Take a trial's digests (checked by :func:`check_digests`); returns ``(trial number, key per seat)``.

        Raises:
            TrialError: a digest is already a running trial's (nothing is taken then).
        """
        taken = [i for i, d in enumerate(digests) if d in self.by_digest]
        if taken:
            raise TrialError(f"seat_credential_digests[{taken[0]}]: already a running trial's credential")
        number = next(self._numbers)
        keys = []
        for seat, (digest, bot_id) in enumerate(zip(digests, bot_ids, strict=True)):
            key = -next(self._keys)
            self.by_digest[digest] = TrialSeat(number, seat, key, int(bot_id))
            keys.append(key)
        self.digests[number] = list(digests)
        return number, keys

    def admit(self, digest: str) -> TrialSeat | None:
        """The running trial's seat ``digest`` (of a ``Hello.token``) opens, or None."""
        return self.by_digest.get(digest)

    def is_open(self, seat: TrialSeat) -> bool:
        """True while ``seat``'s trial runs."""
        return seat.trial in self.digests

    def close(self, number: int, registry: SessionRegistry) -> None:
        """End trial ``number``: forget its digests now, close its sessions once their queued messages are out."""
        seats = [self.by_digest.pop(d) for d in self.digests.pop(number, ()) if d in self.by_digest]
        keys = {s.key for s in seats}
        sessions = [s for key in keys for s in registry.by_bot.get(key, ())]
        for key in keys:
            registry.orphans.pop(key, None)
        if sessions:
            task = asyncio.get_running_loop().create_task(_close_sessions(sessions), name=f"trial-{number}-close")
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)


async def _close_sessions(sessions: list[Session]) -> None:
    """Close a finished trial's sessions after what is queued to them is written (at most :data:`CLOSE_DRAIN_S`)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + CLOSE_DRAIN_S
    while loop.time() < end and any(s.busy for s in sessions if not s.closed):
        await asyncio.sleep(0.01)
    for session in sessions:
        session.kill(grpc.StatusCode.UNAVAILABLE, pb.ERROR_CODE_UNAVAILABLE,
                     "the trial this credential was for has ended; the credential is spent")
