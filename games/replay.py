"""Verify a replay by re-simulating it through the engine (docs/architecture.md, "Replay JSON").

A replay (format ``parterre-replay/1``, see ``docs/architecture.md``) records
every chance outcome and action with its seat, periodic state hashes, the final
hash and the outcome. :func:`verify_replay` rebuilds the match from the game
string alone and checks all of them, plus the seed commitment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from games.api import CHANCE, Game, GameError, State
from games.registry import load_game

REPLAY_FORMAT = "parterre-replay/1"


class ReplayError(GameError):
    """The replay is malformed (missing fields, wrong format)."""


@dataclass
class VerifyReport:
    """Result of :func:`verify_replay`.

    Attributes:
        ok: True when every check passed.
        steps: steps re-simulated.
        hashes_checked: recorded state hashes compared (final hash included).
        problems: one line per failed check, empty when ``ok``.
    """

    ok: bool = True
    steps: int = 0
    hashes_checked: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        """Record a failed check."""
        self.ok = False
        self.problems.append(message)


def replay_game(replay: Mapping[str, Any]) -> Game:
    """The game a replay was played by: its ``game_string`` at its ``rules_revision``.

    A replay without ``rules_revision`` (every replay recorded before rules revisions
    existed, 2026-12-06) is revision 1 (``Game.RULES_REVISIONS``).

    Raises:
        ReplayError: no ``game_string``.
        games.api.GameError: an unknown game, bad options, or a revision this engine does not play.
    """
    try:
        game_string = replay["game_string"]
    except KeyError as exc:
        raise ReplayError(f"replay lacks field {exc}") from None
    if not isinstance(game_string, str):
        raise ReplayError(f"game_string is {type(game_string).__name__}, not a string")
    return load_game(game_string).at_revision(replay.get("rules_revision", 1))


def iter_states(replay: Mapping[str, Any]) -> Iterator[tuple[int, State]]:
    """Yield ``(step_index, state_after_step)`` for every step; index -1 is the start.

    Raises:
        ReplayError: missing fields.
        games.api.GameError: an action does not parse or is illegal.
    """
    game = replay_game(replay)
    try:
        steps = replay["steps"]
    except KeyError as exc:
        raise ReplayError(f"replay lacks field {exc}") from None
    state = game.new_initial_state()
    yield -1, state
    for i, step in enumerate(steps):
        player = state.current_player()
        if step.get("player") != player:
            raise ReplayError(f"step {i}: recorded player {step.get('player')} but {player} is to act")
        state.apply_action(game.action_from_json(step["action"]))
        yield i, state


def verify_replay(replay: Mapping[str, Any]) -> VerifyReport:
    """Re-simulate ``replay`` and check hashes, outcome and seed commitment.

    Args:
        replay: the replay dict (JSON-decoded).

    Returns:
        A :class:`VerifyReport`; never raises for a replay that merely fails checks.
    """
    report = VerifyReport()
    if replay.get("format") != REPLAY_FORMAT:
        report.fail(f"format is {replay.get('format')!r}, expected {REPLAY_FORMAT!r}")
        return report
    seed = replay.get("seed")
    commitment = replay.get("seed_commitment")
    if seed is not None and commitment is not None and hashlib.sha256(str(seed).encode()).hexdigest() != commitment:
        report.fail("seed does not match its published commitment (sha256)")
    steps = replay.get("steps", [])
    final: State | None = None
    try:
        for i, state in iter_states(replay):
            final = state
            if i < 0:
                continue
            report.steps += 1
            recorded = steps[i].get("hash")
            if recorded:
                report.hashes_checked += 1
                if state.state_hash() != recorded:
                    report.fail(f"step {i}: state hash differs from the recorded one")
    except (GameError, KeyError, TypeError, ValueError, AttributeError) as exc:  # a malformed file's fields
        report.fail(f"re-simulation failed: {exc}")
        return report
    assert final is not None
    if replay.get("final_hash"):
        report.hashes_checked += 1
        if final.state_hash() != replay["final_hash"]:
            report.fail("final state hash differs from the recorded one")
    recorded_outcome = replay.get("outcome")
    if recorded_outcome is not None and not isinstance(recorded_outcome, Mapping):
        report.fail(f"outcome is {type(recorded_outcome).__name__}, not an object")
        return report
    if final.is_terminal():
        outcome = final.outcome().to_json()
        if recorded_outcome is not None:
            for key in ("scores", "ranks"):
                if list(outcome[key]) != list(recorded_outcome.get(key, [])):
                    report.fail(
                        f"outcome {key}: the re-simulated game gives {outcome[key]}, the replay records "
                        f"{recorded_outcome.get(key)}"
                    )
    elif recorded_outcome:
        report.fail("the replay records an outcome but the re-simulated game is not over")
    return report


def chance_steps(replay: Mapping[str, Any]) -> int:
    """Number of chance outcomes recorded in ``replay``."""
    return sum(1 for s in replay.get("steps", []) if s.get("player") == CHANCE)
