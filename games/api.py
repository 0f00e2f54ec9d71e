"""The Game/State interface every rules engine implements.

Modelled on OpenSpiel's Python game API (``open_spiel/python/games``): a
:class:`Game` is declared as data (:class:`GameInfo`) and makes states; a
:class:`State` owns ``legal_actions()`` and ``apply_action()`` and each game
fills in small hooks (``_legal_actions``, ``_apply``, ``_view``, ...).

Conventions (docs/architecture.md, "games: the rules engines"):

* A match is fully determined by the game name, its options, and the action
  history. Randomness is an explicit chance player (:data:`CHANCE`) whose
  outcomes are recorded in the history like any other action, so a replay needs
  no random number generator. Face-down decks are *sets* inside the state: a draw
  is a chance node whose outcomes are the cards still in the deck, so the order
  of a deck does not exist until it is drawn and cannot leak.
* Actions are small frozen values with a canonical JSON form (``to_json``) and a
  short human label (``label``).
* ``observation(seat)`` is built by the game from an explicit per-seat view;
  ``observation(None)`` is the spectator view.

Errors: :class:`UnknownGameError`, :class:`InvalidOptionError`,
:class:`InvalidActionError` (not an action of this game at all, malformed JSON),
:class:`IllegalActionError` (a well-formed action that is not legal now),
:class:`GameOverError` (the state is terminal).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import Any, ClassVar, Final

from games.trusted import holds

try:  # a speed-up of state_hash only: the engines run without it (a hosted bot's sandbox has the stdlib only)
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    orjson = None  # type: ignore[assignment]  # optional module: None means absent, checked before use

CHANCE: Final = -1
"""``current_player()`` value when the next action is a chance outcome."""
TERMINAL: Final = -2
"""``current_player()`` value when the game is over."""


class GameError(Exception):
    """Base class of every error raised by a rules engine."""


class UnknownGameError(GameError, KeyError):
    """The game name is not registered."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else "unknown game"


class InvalidOptionError(GameError, ValueError):
    """An option is unknown to the game, or its value is out of range."""


class InvalidActionError(GameError, ValueError):
    """The value is not an action of this game (bad kind, bad fields, bad JSON)."""


class IllegalActionError(GameError):
    """A well-formed action that is not legal in the current state."""


class GameOverError(GameError):
    """An action was applied to a terminal state."""


def canonical_json(value: Any) -> str:
    """Serialise ``value`` as compact JSON with sorted keys (the canonical form).

    Used for action identity, state hashes and replay files, so that two equal
    values always give byte-identical text.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Action:
    """Base class of every action; subclasses are frozen, slotted dataclasses.

    Subclasses set ``KIND`` (unique within the game) and implement
    :meth:`label`. The JSON form is ``{"kind": KIND, <fields>}`` with tuples as
    lists; :meth:`Game.action_from_json` parses it back.
    """

    KIND: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        """Return the canonical JSON-able dict of this action."""
        out: dict[str, Any] = {"kind": self.KIND}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]  # every subclass is a dataclass; the base is not
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def canonical(self) -> str:
        """Return the canonical JSON text of this action."""
        return canonical_json(self.to_json())

    def label(self) -> str:
        """Return a short human-readable label, e.g. ``"take row 3 (Pink Mum)"``."""
        return self.canonical()


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One game option: its type, default and allowed values.

    Attributes:
        name: option name as it appears in a game string.
        kind: ``int``, ``bool`` or ``str``.
        default: value used when the option is not given.
        choices: allowed values; ``None`` means any value of ``kind``.
        doc: one line describing the option and the rulebook section it follows.
    """

    name: str
    kind: type
    default: Any
    choices: tuple[Any, ...] | None = None
    doc: str = ""

    def coerce(self, value: Any) -> Any:
        """Convert ``value`` (possibly a string from a command line) to ``kind``.

        Raises:
            InvalidOptionError: the value cannot be converted or is not allowed.
        """
        try:
            if self.kind is bool:
                if isinstance(value, bool):
                    out: Any = value
                elif str(value).lower() in ("1", "true", "yes", "on"):
                    out = True
                elif str(value).lower() in ("0", "false", "no", "off"):
                    out = False
                else:
                    raise ValueError(value)
            elif self.kind is int:
                if isinstance(value, bool):
                    raise ValueError(value)
                out = int(value)
            else:
                out = self.kind(value)
        except (TypeError, ValueError):
            raise InvalidOptionError(
                f"option {self.name!r}: {value!r} is not a valid {self.kind.__name__}"
            ) from None
        if self.choices is not None and out not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise InvalidOptionError(f"option {self.name!r}: {out!r} is not one of {allowed}")
        return out


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game declared as data (OpenSpiel's ``GameType`` + ``GameInfo``).

    Attributes:
        name: registry name, lower case (``"floriferous"``).
        long_name: display name (``"Floriferous"``).
        min_players / max_players: seat counts the rulebook allows (1 for solo).
        options: the options a game string may set.
        max_game_length: upper bound on the number of decisions (not chance
            outcomes) of one match; the referee uses it as a watchdog.
    """

    name: str
    long_name: str
    min_players: int
    max_players: int
    options: tuple[OptionSpec, ...]
    max_game_length: int


class Termination(StrEnum):
    """Why a game ended by its rules (cf. python-chess ``Termination``).

    Each game subclasses it with its own members (an enum with no members can
    be subclassed), e.g. ``FloriferousTermination.THIRD_DAY_COMPLETE``; the
    value is the text written in replays (``Outcome.to_json()["reason"]``).
    Why the *referee* ended a match (a fault, every opponent retired, an
    infrastructure error) is not a termination: those are the referee's
    verdicts and statuses (``referee.verdicts``), kept apart.
    """


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended (cf. python-chess ``Outcome``).

    Attributes:
        scores: final score per seat (points, or prestige/MP as the game says).
        ranks: rank per seat, 1 = winner; tied seats share a rank and the next
            rank skips (1, 2, 2, 4).
        reason: why the game ended, a member of the game's :class:`Termination`
            enum (e.g. ``FloriferousTermination.THIRD_DAY_COMPLETE``).
        tie_breaks: the rulebook tie-break steps that were needed, in order.
        details: per-game breakdown (score categories, solo mood, ...), JSON-able.
    """

    scores: tuple[float, ...]
    ranks: tuple[int, ...]
    reason: Termination
    tie_breaks: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-able dict of the outcome."""
        return {
            "scores": list(self.scores),
            "ranks": list(self.ranks),
            "reason": self.reason.value,
            "tie_breaks": list(self.tie_breaks),
            "details": dict(self.details),
        }


def ranks_from_keys(keys: Sequence[Sequence[float]]) -> tuple[int, ...]:
    """Competition ranks (1, 2, 2, 4) from per-seat sort keys, higher is better.

    Args:
        keys: one tuple per seat, compared lexicographically (score first, then
            tie-break values). Seats with equal keys share a rank.

    Returns:
        Rank per seat, 1 for the best.
    """
    return tuple(1 + sum(1 for other in keys if tuple(other) > tuple(k)) for k in keys)


class Game(ABC):
    """A game with fixed options; makes initial states.

    Subclasses set ``INFO`` and the ``ACTIONS`` tuple of their action classes and
    implement :meth:`new_initial_state`. Options are validated on construction.

    Raises:
        InvalidOptionError: unknown option or bad value.
    """

    INFO: ClassVar[GameInfo]
    ACTIONS: ClassVar[tuple[type[Action], ...]] = ()
    RULES_REVISIONS: ClassVar[tuple[str, ...]] = ("the rules as first implemented",)
    """One line per revision of this game's rules in the engine, oldest first (revision 1 is
    ``RULES_REVISIONS[0]``). A rules fix that changes which actions are legal or what they do
    appends a line and keeps the older behaviour playable behind :attr:`rules_revision`, so
    that replays recorded under an older revision still re-simulate (their header's
    ``rules_revision``; a replay without one is revision 1). docs/rules/<game>.md lists them."""
    PLAIN_FULL_STATE: ClassVar[bool] = False
    """True when every ``_full_state()`` of the game holds only dicts with str keys, lists, tuples,
    str, int (64-bit), bool and None (no float): :meth:`State.state_hash` then writes the canonical
    text with orjson, byte-identical to :func:`canonical_json` for such values and ~10x faster
    (tests/games/test_state_hash_fast.py checks both over random playthroughs)."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        given = dict(options or {})
        specs = {spec.name: spec for spec in self.INFO.options}
        unknown = sorted(set(given) - set(specs))
        if unknown:
            raise InvalidOptionError(
                f"{self.INFO.name}: unknown option(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(specs)) or 'none'}"
            )
        self.options: dict[str, Any] = {
            name: spec.coerce(given[name]) if name in given else spec.default
            for name, spec in specs.items()
        }
        self._validate_options()
        self._action_kinds = {cls.KIND: cls for cls in self.ACTIONS}
        self.rules_revision: int = len(self.RULES_REVISIONS)  # the newest unless at_revision() chose another

    def at_revision(self, revision: int) -> Game:
        """This game, same options, playing by rules revision ``revision`` (1 = the oldest).

        Only re-simulations of recorded matches (replays) ask for an older revision;
        matches are always played by the newest.

        Raises:
            InvalidOptionError: ``revision`` is not an int from 1 to ``len(RULES_REVISIONS)``
                (a replay from a newer engine, or a malformed header).
        """
        newest = len(self.RULES_REVISIONS)
        if type(revision) is not int or not 1 <= revision <= newest:
            raise InvalidOptionError(f"{self.INFO.name}: rules revision {revision!r} is not one this engine "
                                     f"plays (1 to {newest})")
        if revision == self.rules_revision:
            return self
        other = copy.copy(self)
        other.options = dict(self.options)  # nothing changes them; nothing shared all the same
        other.rules_revision = revision
        return other

    def _validate_options(self) -> None:  # noqa: B027 - an optional hook: most games have nothing to check
        """Hook: check combinations of options; raise InvalidOptionError."""

    @property
    def name(self) -> str:
        """Registry name of the game."""
        return self.INFO.name

    @property
    def num_players(self) -> int:
        """Number of seats in a match of this game with these options: the
        ``players`` option, which every game declares (override otherwise)."""
        return int(self.options["players"])

    @property
    def solo(self) -> bool:
        """True for a one-seat (solo) match; the game's own automaton, if any, is part of the rules."""
        return self.num_players == 1

    def game_string(self) -> str:
        """Canonical game string, e.g. ``floriferous(players=4)``; see registry."""
        parts = [f"{k}={option_text(v)}" for k, v in sorted(self.options.items())]
        return f"{self.name}({','.join(parts)})"

    @abstractmethod
    def new_initial_state(self) -> State:
        """Return the state before the first (usually chance) action."""

    def action_from_json(self, data: Mapping[str, Any] | str) -> Action:
        """Parse an action from its JSON form (dict or text).

        Raises:
            InvalidActionError: not valid JSON, unknown kind, or bad fields.
        """
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise InvalidActionError(f"action is not valid JSON: {exc}") from None
        if not isinstance(data, Mapping):
            raise InvalidActionError("action JSON must be an object")
        kind = data.get("kind")
        cls = self._action_kinds.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise InvalidActionError(f"{self.name}: unknown action kind {kind!r}")
        names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]  # action classes are dataclasses
        extra = sorted(set(data) - set(names) - {"kind"})
        missing = [n for n in names if n not in data]
        if extra or missing:
            raise InvalidActionError(
                f"{self.name}: action {kind!r} fields: missing {missing}, unexpected {extra}"
            )
        values = {n: tuple(data[n]) if isinstance(data[n], list) else data[n] for n in names}
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise InvalidActionError(f"{self.name}: bad action {dict(data)!r}: {exc}") from None

    def state_from_json(self, data: Mapping[str, Any] | str) -> State:
        """Rebuild a state from :meth:`State.to_json` output by replaying its history, by its rules
        revision (none = 1, as in replays).

        Raises:
            InvalidActionError / IllegalActionError: the history does not replay.
            InvalidOptionError: the recorded game string does not match this game, or its rules
                revision is not one this engine plays.
        """
        if isinstance(data, str):
            data = json.loads(data)
        assert isinstance(data, Mapping)
        if data.get("game") != self.game_string():
            raise InvalidOptionError(
                f"state is for {data.get('game')!r}, not {self.game_string()!r}"
            )
        state = self.at_revision(data.get("rules_revision", 1)).new_initial_state()
        for step in data["history"]:
            state.apply_action(self.action_from_json(step["action"]))
        return state


def option_text(value: Any) -> str:  # an option's value as a game string writes it
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class State(ABC):
    """A position of a match. The framework owns checking and history.

    Subclasses implement the hooks ``_current_player``, ``_legal_actions``,
    ``_chance_outcomes``, ``_apply``, ``_view``, ``_outcome``, ``_full_state``.
    The history is a list of ``(player, action)`` pairs where ``player`` is a
    seat number or :data:`CHANCE`.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.history: list[tuple[int, Action]] = []
        self._legal_cache: list[Action] | None = None
        self._sampled: Action | None = None  # what sample_chance() drew here: legal by construction

    # -- hooks -----------------------------------------------------------------
    @abstractmethod
    def _current_player(self) -> int:
        """Seat to act, :data:`CHANCE` or :data:`TERMINAL`."""

    @abstractmethod
    def _legal_actions(self) -> list[Action]:
        """Legal actions of the seat to act, in a deterministic order."""

    @abstractmethod
    def _chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        """Chance outcomes with exact probabilities summing to 1."""

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Apply an action already known to be legal."""

    @abstractmethod
    def _view(self, seat: int | None) -> dict[str, Any]:
        """The JSON-able observation of ``seat`` (None = spectator)."""

    @abstractmethod
    def _outcome(self) -> Outcome:
        """Final outcome; only called on terminal states."""

    @abstractmethod
    def _full_state(self) -> dict[str, Any]:
        """Everything, hidden information included, JSON-able; used for hashes."""

    def _is_legal(self, action: Action) -> bool:
        """Hook: is ``action`` legal now? Override with a cheap check when the
        legal set is large (e.g. a draw from a 60-card deck)."""
        return action in self.legal_actions()

    def _sample_chance(self, rng: random.Random) -> Action:
        """Hook: draw a chance outcome with ``rng``. The default enumerates
        :meth:`_chance_outcomes`; games override it with an equivalent fast path.
        The result must depend only on the state and ``rng``'s sequence."""
        outcomes = self._chance_outcomes()
        if len(set(p for _, p in outcomes)) == 1:
            return outcomes[rng.randrange(len(outcomes))][0]
        threshold = Fraction(rng.random())
        total = Fraction(0)
        for action, p in outcomes:
            total += p
            if threshold < total:
                return action
        return outcomes[-1][0]

    # -- public API ------------------------------------------------------------
    def current_player(self) -> int:
        """Seat number to act, or :data:`CHANCE`, or :data:`TERMINAL`."""
        return self._current_player()

    def is_terminal(self) -> bool:
        """True when the game is over."""
        return self._current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        """True when the next action is a chance outcome."""
        return self._current_player() == CHANCE

    def legal_actions(self) -> list[Action]:
        """Legal actions now, deterministic order; chance outcomes at a chance node.

        Returns an empty list on a terminal state. The list is a copy.
        """
        if self._legal_cache is None:
            player = self._current_player()
            if player == TERMINAL:
                self._legal_cache = []
            elif player == CHANCE:
                self._legal_cache = [a for a, _ in self._chance_outcomes()]
            else:
                self._legal_cache = self._legal_actions()
        return list(self._legal_cache)

    def chance_outcomes(self) -> list[tuple[Action, Fraction]]:
        """Chance outcomes with probabilities; empty unless at a chance node."""
        if self._current_player() != CHANCE:
            return []
        return self._chance_outcomes()

    def apply_action(self, action: Action) -> None:
        """Check and apply ``action`` for the player to act; append to history.

        Raises:
            GameOverError: the state is terminal.
            InvalidActionError: ``action`` is not an action of this game.
            IllegalActionError: ``action`` is not legal now. Nothing is changed.
        """
        player = self._current_player()
        cache = self._legal_cache
        # Trusted fast paths (legality is checked once): ``action`` is the very
        # object sample_chance() drew for this position, or one of the very objects
        # of the legal list computed for it (what legal_actions() handed out), so it
        # is legal without the game's check; the identity scan runs in C.
        if action is not self._sampled and not holds(cache, action):
            if player == TERMINAL:
                raise GameOverError(f"{self.game.name}: the game is over")
            if not isinstance(action, Action) or type(action) not in self.game.ACTIONS:
                raise InvalidActionError(f"{self.game.name}: {action!r} is not an action of this game")
            if not self._is_legal(action):
                who = "chance" if player == CHANCE else f"seat {player}"
                raise IllegalActionError(
                    f"{self.game.name}: {action.canonical()} is not legal for {who} now"
                )
        self._apply(action)
        self.history.append((player, action))
        self._legal_cache = None
        self._sampled = None

    def sample_chance(self, rng: random.Random) -> Action:
        """Draw the next chance outcome with ``rng`` (the referee's match RNG).

        Raises:
            GameError: the state is not a chance node.
        """
        if self._current_player() != CHANCE:
            raise GameError(f"{self.game.name}: not a chance node")
        action = self._sample_chance(rng)
        self._sampled = action
        return action

    def apply_index(self, index: int) -> Action:
        """Apply the ``index``-th legal action and return it.

        Raises:
            IllegalActionError: index out of range (negative included).
        """
        legal = self.legal_actions()
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(legal):
            raise IllegalActionError(
                f"{self.game.name}: action index {index!r} out of range 0..{len(legal) - 1}"
            )
        action = legal[index]
        self.apply_action(action)
        return action

    def observation(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may know now (None: the spectator view).

        Raises:
            ValueError: ``seat`` is not a seat of this match.
        """
        if seat is not None and not 0 <= seat < self.game.num_players:
            raise ValueError(f"seat {seat} is not a seat of this {self.game.num_players}-seat game")
        return self._view(seat)

    def outcome(self) -> Outcome:
        """Scores, ranks, reason and tie-breaks of a finished game.

        Raises:
            GameError: the game is not over yet.
        """
        if not self.is_terminal():
            raise GameError(f"{self.game.name}: the game is not over")
        return self._outcome()

    def returns(self) -> tuple[float, ...]:
        """Final scores per seat (shortcut for ``outcome().scores``)."""
        return self.outcome().scores

    def clone(self) -> State:
        """An independent deep copy (for search)."""
        import copy

        new = copy.deepcopy(self)
        return new

    def to_json(self) -> dict[str, Any]:
        """JSON-able state: game string, rules revision and the full history (hidden info included)."""
        return {
            "game": self.game.game_string(),
            "rules_revision": self.game.rules_revision,
            "history": [{"player": p, "action": a.to_json()} for p, a in self.history],
        }

    def full_state(self) -> dict[str, Any]:
        """Everything in the state, hidden information included (referee and tests only)."""
        return self._full_state()

    def state_hash(self) -> str:
        """Stable SHA-256 hex digest of the full state (independent of process/hash seed)."""
        full = self._full_state()
        if self.game.PLAIN_FULL_STATE and orjson is not None:
            try:
                return hashlib.sha256(orjson.dumps(full, option=orjson.OPT_SORT_KEYS)).hexdigest()
            except TypeError:  # a value orjson refuses (a huge int, ...): the reference encoder
                pass
        return hashlib.sha256(canonical_json(full).encode()).hexdigest()

    def __str__(self) -> str:
        return canonical_json(self._view(None))
