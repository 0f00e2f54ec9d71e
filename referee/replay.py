"""Replay JSON ``parterre-replay/1``: building and verifying.

Format: docs/architecture.md, "Replay JSON". One step per history entry
(chance outcomes included, ``player`` = -1), with the server-measured
``time_ms`` of a decision (``null`` for chance and fallback moves), the
``fallback`` flag for moves the referee played for a retired seat, and a state
hash after every 10th step (``i % 10 == 9``) and after the last one.
The seed is revealed here and in ``MatchEnded`` only; ``seed_commitment`` =
``sha256(seed)`` was published in ``MatchStarted``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from games.api import GameError, canonical_json
from games.replay import replay_game

FORMAT = "parterre-replay/1"
HASH_EVERY = 10
"""A state hash is recorded after step ``i`` when ``i % HASH_EVERY == HASH_EVERY - 1``."""


class ReplayError(ValueError):
    """A replay does not verify: bad format, an action that does not replay, a hash mismatch."""


def seed_commitment(seed: str) -> str:
    """SHA-256 hex of the seed text (UTF-8): published before the match."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def wants_hash(i: int) -> bool:
    """True when step ``i`` (0-based) records a periodic state hash."""
    return i % HASH_EVERY == HASH_EVERY - 1


def step_json(
    i: int, player: int, action: Mapping[str, Any], label: str, time_ms: float | None,
    fallback: bool, state_hash: str | None,
) -> dict[str, Any]:
    """One replay step as a JSON-able dict (``hash`` only when given)."""
    out: dict[str, Any] = {
        "i": i, "player": player, "action": action, "label": label,
        "time_ms": time_ms, "fallback": fallback,
    }
    if state_hash is not None:
        out["hash"] = state_hash
    return out


def dumps(replay: Mapping[str, Any]) -> str:
    """Canonical JSON text of a replay (sorted keys, compact)."""
    return canonical_json(replay)


def step_text(
    i: int, player: int, action_text: str, label_text: str, time_ms: float | None, fallback: bool,
    state_hash: str | None,
) -> str:
    """The canonical JSON text of one step, from already-encoded parts.

    Byte-identical to ``canonical_json(step_json(...))`` (tested), without
    encoding the cached action again: the referee builds long replays fast.

    Args:
        action_text: canonical JSON of the action; label_text: JSON string of the label.
    """
    t = "null" if time_ms is None else repr(time_ms) if isinstance(time_ms, float) else str(int(time_ms))
    h = "" if state_hash is None else f'"hash":"{state_hash}",'
    fb = "true" if fallback else "false"
    return f'{{"action":{action_text},"fallback":{fb},{h}"i":{i},"label":{label_text},"player":{player},"time_ms":{t}}}'


def assemble(header: Mapping[str, Any], step_texts: list[str]) -> str:
    """Canonical JSON text of a replay from its fields but ``steps`` and the steps' texts.

    Equals ``dumps({**header, "steps": [json.loads(t) for t in step_texts]})``.
    """
    head = canonical_json({k: v for k, v in header.items() if k < "steps"})
    tail = canonical_json({k: v for k, v in header.items() if k > "steps"})
    steps = '"steps":[' + ",".join(step_texts) + "]"
    out = head[:-1] + ("," if len(head) > 2 else "") + steps
    return out + ("," + tail[1:] if len(tail) > 2 else "}")


def verify(replay: Mapping[str, Any] | str) -> None:
    """Re-simulate a replay through the engine and check it.

    Checks: the format tag; the seed matches its commitment (when revealed);
    every step's action is legal for the recorded player; every recorded hash,
    the final hash, and (for a finished game) the rules' outcome.

    Args:
        replay: the replay dict or its JSON text.

    Raises:
        ReplayError: the first mismatch found, with the step index.
    """
    data: Mapping[str, Any] = json.loads(replay) if isinstance(replay, str) else replay
    if data.get("format") != FORMAT:
        raise ReplayError(f"not a {FORMAT} replay: format={data.get('format')!r}")
    seed = data.get("seed")
    if seed is not None and seed_commitment(seed) != data.get("seed_commitment"):
        raise ReplayError("seed does not match seed_commitment")
    try:
        game = replay_game(data)  # its game string at its rules revision
    except GameError as exc:
        raise ReplayError(f"cannot load game {data.get('game_string')!r}: {exc}") from None
    state = game.new_initial_state()
    for step in data.get("steps", []):
        i = step["i"]
        if state.current_player() != step["player"]:
            raise ReplayError(f"step {i}: player {step['player']} recorded, {state.current_player()} to act")
        try:
            state.apply_action(game.action_from_json(step["action"]))
        except GameError as exc:
            raise ReplayError(f"step {i}: {exc}") from None
        recorded = step.get("hash")
        if recorded is not None and recorded != state.state_hash():
            raise ReplayError(f"step {i}: state hash mismatch")
    final = data.get("final_hash")
    if final is not None and final != state.state_hash():
        raise ReplayError("final hash mismatch")
    outcome = data.get("outcome")
    if outcome is not None:
        if not state.is_terminal():
            raise ReplayError("outcome recorded but the replayed game is not over")
        if canonical_json(state.outcome().to_json()) != canonical_json(outcome):
            raise ReplayError("outcome mismatch")
