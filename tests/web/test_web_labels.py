"""Step labels per viewer never name a card the view hides (docs/architecture.md, "Hidden information").

Oracle: the spectator observation itself. For every step of random replays of
all three games, every card a spectator label mentions — by id or by name,
found by scanning the label's text against the game's card data (not the
viewer's own extraction of ids from the action) — must appear in the
spectator observation at that step or earlier. The same for a seat's view
with that seat's observation.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from games.api import CHANCE
from games.registry import load_game
from games.replay import iter_states
from web.labels import ALL, SPECTATOR, step_labels


def _vocabulary(game: str) -> dict[str, set[str]]:
    """Display text (id or name) -> the card ids it may denote, from the game's card data."""
    out: dict[str, set[str]] = {}

    def add(text: str, cid: str) -> None:
        if text:
            out.setdefault(text, set()).add(cid)

    if game == "lafleur":
        from games.lafleur.cards import DECKS, card_name

        for deck in DECKS.values():
            for c in deck:
                add(c.id, c.id)
                add(card_name(c.id), c.id)
    elif game == "flowar":
        from games.flowar.cards import CONTRACT_IDS, FLOWER_IDS, TAXUS_CARDS

        for cid in (*FLOWER_IDS, *CONTRACT_IDS, *(t.id for t in TAXUS_CARDS)):
            add(cid, cid)
    else:
        from games.floriferous.cards import CARDS

        for c in CARDS:
            add(c.id, c.id)
            add(c.name, c.id)
    return out


def _mentions(label: str, vocab: dict[str, set[str]]) -> list[set[str]]:
    """For each card mention in ``label`` (longest texts first, non-overlapping), the ids it may denote."""
    taken = [False] * len(label)
    found = []
    for text in sorted(vocab, key=len, reverse=True):
        for m in re.finditer(r"(?<![\w])" + re.escape(text) + r"(?![\w])", label):
            if any(taken[m.start():m.end()]):
                continue
            for k in range(m.start(), m.end()):
                taken[k] = True
            found.append(vocab[text])
    return found


def _random_replay(game_string: str, seed: int) -> dict[str, Any]:
    game = load_game(game_string)
    state = game.new_initial_state()
    rng = random.Random(seed)
    steps = []
    while not state.is_terminal():
        p = state.current_player()
        action = state.sample_chance(rng) if p == CHANCE else rng.choice(state.legal_actions())
        state.apply_action(action)
        steps.append({"player": p, "action": action.to_json(), "label": action.label()})
    return {"game": game.name, "game_string": game.game_string(), "steps": steps}


GAMES = [
    "floriferous(players=2)", "floriferous(players=1)", "lafleur(players=2)", "lafleur(players=3)",
    "lafleur(players=1)", "flowar(players=2)", "flowar(players=1)",
]


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("seed", [1, 2])
def test_spectator_labels_name_only_cards_the_spectator_has_seen(game_string: str, seed: int) -> None:
    replay = _random_replay(game_string, seed)
    vocab = _vocabulary(replay["game"])
    labels = step_labels(replay, SPECTATOR)
    assert len(labels) == len(replay["steps"])
    public = ""
    for i, state in iter_states(replay):
        public += json.dumps(state.observation(None), ensure_ascii=False)
        if i < 0:
            continue
        for ids in _mentions(labels[i], vocab):
            assert any(f'"{cid}"' in public for cid in ids), (
                f"step {i}: spectator label {labels[i]!r} names {sorted(ids)} before the spectator saw it"
            )


@pytest.mark.parametrize("game_string", ["lafleur(players=2)", "flowar(players=2)"])
def test_seat_labels_name_only_cards_that_seat_has_seen(game_string: str) -> None:
    replay = _random_replay(game_string, 3)
    vocab = _vocabulary(replay["game"])
    labels = step_labels(replay, 1)
    seen = ""
    for i, state in iter_states(replay):
        seen += json.dumps(state.observation(1), ensure_ascii=False)
        if i >= 0:
            for ids in _mentions(labels[i], vocab):
                assert any(f'"{cid}"' in seen for cid in ids), (i, labels[i])


def test_the_leaks_the_issue_names_are_gone_and_public_steps_keep_their_labels() -> None:
    replay = _random_replay("lafleur(players=2)", 1)
    raw = [s["label"] for s in replay["steps"]]
    spectator = step_labels(replay, SPECTATOR)
    kinds = [s["action"]["kind"] for s in replay["steps"]]
    for kind, raw_label, shown in zip(kinds, raw, spectator, strict=True):
        if kind == "choose_character":
            assert shown == "choose a Character (hidden)" and raw_label != shown
        if kind in ("place", "buy_feature", "invite"):  # public decisions read as recorded
            assert shown == raw_label
    # a seat reads its own Character choice
    own = step_labels(replay, 0)
    first_choice = next(i for i, s in enumerate(replay["steps"]) if s["action"]["kind"] == "choose_character"
                        and s["player"] == 0)
    assert own[first_choice] == raw[first_choice]
    assert step_labels(replay, ALL) == raw
