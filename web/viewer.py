"""Replay frames for the viewer: the state after a step, rebuilt by the rules engine.

A replay records every chance outcome and action, so any step's state is
rebuilt exactly with :func:`games.replay.iter_states` (no RNG). For step ``i``
the viewer shows:

* the spectator observation (``State.observation(None)``), always;
* after the match ("show all hands", ``all_hands=True``): every seat's own
  observation and the full state (``State.full_state()``), which includes what
  was face down. Replays exist only for finished matches, so nothing hidden is
  ever shown while a match is being played.

Rebuilding costs one pass over the steps up to ``i`` (Floriferous: about
4 µs per step); no state is cached between requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games.api import GameError
from games.registry import game_class
from games.replay import iter_states

START = -1
"""Step index of the initial state (before the first step)."""


class ViewerUnavailable(Exception):
    """The replay cannot be shown: its game's engine is not installed, or it does not re-simulate."""


@dataclass(frozen=True, slots=True)
class Frame:
    """The state after step ``step`` as the viewer shows it.

    Attributes:
        step: step index; -1 = the initial state.
        steps: number of steps in the replay.
        player: seat that took step ``step`` (-1 chance; None for the initial state).
        label: the step's action label ("" for the initial state).
        action: the step's action JSON (None for the initial state).
        time_ms: server-measured decision time, milliseconds (None for chance and fallback).
        fallback: the referee played this step for a retired seat.
        terminal: the game is over after this step.
        observation: spectator observation, or the chosen seat's (JSON-able dict; the game's
            observation message shape).
        seat: the seat whose view ``observation`` is (None: the spectator).
        seat_views: every seat's observation (only with ``all_hands``).
        full_state: the full state, hidden information included (only with ``all_hands``).
    """

    step: int
    steps: int
    player: int | None
    label: str
    action: dict[str, Any] | None
    time_ms: float | None
    fallback: bool
    terminal: bool
    observation: dict[str, Any]
    seat: int | None = None
    seat_views: list[dict[str, Any]] | None = None
    full_state: dict[str, Any] | None = None


def engine_available(game: str) -> bool:
    """True when the rules engine of ``game`` is installed and registered."""
    try:
        game_class(game)
    except GameError:  # not registered; a registered game whose module fails to import raises
        return False
    return True


def frame_at(replay: Mapping[str, Any], step: int, *, all_hands: bool = False, seat: int | None = None) -> Frame:
    """Rebuild the state after ``step`` and return what the viewer shows.

    Args:
        replay: a ``parterre-replay/1`` dict (docs/architecture.md).
        step: -1 (start) .. len(steps) - 1.
        all_hands: also return every seat's view and the full state.
        seat: show this seat's own observation instead of the spectator's
            (``observation`` is then ``State.observation(seat)``).

    Raises:
        IndexError: ``step`` out of range.
        ViewerUnavailable: unknown game engine, or the replay does not re-simulate.
    """
    steps = replay.get("steps") or []
    if not START <= step < len(steps):
        raise IndexError(f"step {step} is not in {START}..{len(steps) - 1}")
    if not engine_available(str(replay.get("game", ""))):
        raise ViewerUnavailable(f"the rules engine of {replay.get('game')!r} is not installed here")
    try:
        state = next((s for i, s in iter_states(replay) if i == step), None)
        if state is None:  # pragma: no cover - range checked above
            raise IndexError(step)
        if seat is not None and not 0 <= seat < state.game.num_players:
            raise IndexError(f"seat {seat} is not in this match")
        observation = state.observation(seat)
        seat_views = full = None
        if all_hands:
            seat_views = [state.observation(s) for s in range(state.game.num_players)]
            full = state.full_state()
        terminal = state.is_terminal()
    except (GameError, KeyError, TypeError, ValueError) as exc:
        raise ViewerUnavailable(f"the replay does not re-simulate at or before step {step}: {exc}") from exc
    rec = steps[step] if step >= 0 else {}
    return Frame(
        step=step,
        steps=len(steps),
        player=int(rec["player"]) if step >= 0 and "player" in rec else None,
        label=str(rec.get("label", "")),
        action=rec.get("action") if step >= 0 else None,
        time_ms=rec.get("time_ms"),
        fallback=bool(rec.get("fallback", False)),
        terminal=terminal,
        observation=observation,
        seat=seat,
        seat_views=seat_views,
        full_state=full,
    )
