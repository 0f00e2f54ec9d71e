"""A validated ``MatchControl.RunMatch`` request: what one match attempt is (docs/architecture.md "Referee ↔ worker").

:class:`MatchSpec` checks a ``RunMatchRequest`` (game string, seats, time
control, timeouts) before a :class:`~referee.room.Room` is built for it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from games.api import Game, GameError
from games.registry import game_class, load_game, parse_game_string
from proto.parterre.v1 import control_pb2 as control_pb
from referee.clock import TimeControl, TimeControlError
from referee.trials import TrialError, check_digests

_GAMES: dict[str, Game] = {}
"""Game string -> its loaded game, shared by the matches that name it (a ``Game`` is immutable: its
options are fixed at construction). Loading a game cost 120-165 us of a Floriferous match's referee
CPU in place, about 2 % (docs/benchmarks.md); the entry is used only while the registry
still maps the name to the same class."""
_MAX_GAMES = 256
_MAX_KEY_CHARS = 200


def _load(game_string: str) -> Game:
    """``load_game(game_string)``, cached in :data:`_GAMES`.

    Raises:
        GameError: as :func:`games.registry.load_game`.
    """
    game = _GAMES.get(game_string)
    if game is not None and type(game) is game_class(parse_game_string(game_string)[0]):
        return game
    game = load_game(game_string)
    if len(game_string) <= _MAX_KEY_CHARS:  # a padded string is loaded, never kept
        if len(_GAMES) >= _MAX_GAMES:
            _GAMES.clear()
        _GAMES[game_string] = game
    return game


class MatchSpecError(ValueError):
    """A RunMatchRequest that cannot be played (bad game string, seat count, time control)."""


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """A validated ``RunMatchRequest``.

    Attributes:
        match_id / attempt: the ladder's ids.
        game: the loaded game.
        seed: the match seed text (secret until the end).
        bot_ids: bot id per seat.
        bot_names: registered name per seat (``RunMatchRequest.seat_bot_names``), shown to the
            opponents and in the replay; empty: the names the bots announce (``Hello.bot_name``).
        time_control: the time control.
        no_show_timeout_ms: how long to wait for every seat's session.
        max_duration_ms: watchdog, from the start of play.
        trial: an unrated game seated by credential (``RunMatchRequest.trial``; referee/trials.py).
        credential_digests: per seat, the sha256 hex of its credential (a trial's; empty otherwise).
    """

    match_id: int
    attempt: int
    game: Game
    seed: str
    bot_ids: tuple[int, ...]
    time_control: TimeControl
    no_show_timeout_ms: int
    max_duration_ms: int
    bot_names: tuple[str, ...] = ()
    trial: bool = False
    credential_digests: tuple[str, ...] = ()

    @classmethod
    def from_request(
        cls, req: control_pb.RunMatchRequest, *, default_no_show_ms: int, default_max_duration_ms: int
    ) -> MatchSpec:
        """Validate a request.

        Raises:
            MatchSpecError: with a message naming the bad field.
        """
        try:
            game = _load(req.game_string)
        except GameError as exc:
            raise MatchSpecError(f"game_string: {exc}") from None
        bots = tuple(req.seat_bot_ids)
        if len(bots) != game.num_players:
            raise MatchSpecError(
                f"seat_bot_ids: {len(bots)} bots for {game.game_string()}, which has {game.num_players} seats"
            )
        names = tuple(req.seat_bot_names)
        if names and len(names) != len(bots):
            raise MatchSpecError(f"seat_bot_names: {len(names)} names for {len(bots)} seats")
        try:
            check_digests(req.seat_credential_digests, len(bots), req.trial)
        except TrialError as exc:
            raise MatchSpecError(str(exc)) from None
        tc_msg = req.time_control
        try:
            tc = TimeControl(tc_msg.base_ms, tc_msg.increment_ms, tc_msg.cap_ms, tc_msg.margin_ms)
        except TimeControlError as exc:
            raise MatchSpecError(str(exc)) from None
        if req.no_show_timeout_ms < 0 or req.max_duration_ms < 0:
            raise MatchSpecError("no_show_timeout_ms and max_duration_ms must be >= 0")
        return cls(
            match_id=req.match_id,
            attempt=req.attempt,
            game=game,
            seed=req.seed or secrets.token_hex(16),
            bot_ids=bots,
            time_control=tc,
            no_show_timeout_ms=req.no_show_timeout_ms or default_no_show_ms,
            max_duration_ms=req.max_duration_ms or default_max_duration_ms,
            bot_names=names,
            trial=req.trial,
            credential_digests=tuple(req.seat_credential_digests),
        )
