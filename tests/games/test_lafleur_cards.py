"""La Fleur card data: counts, provenance, symmetry, named anchors, ability text (games/lafleur/standins.py)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest

from games.lafleur import abilities as AB
from games.lafleur.cards import (
    ALLURE,
    ARTISANS,
    CHARACTERS,
    COMPONENT_COUNTS,
    DATA_FILE,
    EVENTS,
    FEATURES,
    FLOWERS,
    INDEX,
    LOCATIONS,
    SOLO_OPPONENTS,
    VISITORS,
    flower_cost,
)


def _by_name(cards: Iterable[Any], name: str) -> Any:
    return next(c for c in cards if c.name == name)


def test_counts_match_the_component_list() -> None:
    """Rulebook: "Game Components"."""
    assert COMPONENT_COUNTS == {"flower": 88, "feature": 55, "visitor": 35, "artisan": 20, "character": 10, "event": 30}
    assert (len(FLOWERS), len(FEATURES), len(VISITORS), len(ARTISANS), len(CHARACTERS), len(EVENTS)) == (
        88, 55, 35, 20, 10, 30)
    ids = [c["id"] for c in json.loads(DATA_FILE.read_text(encoding="utf-8"))["cards"]]
    assert len(ids) == len(set(ids)) == 238


def test_every_record_has_a_provenance() -> None:
    raw = json.loads(DATA_FILE.read_text(encoding="utf-8"))["cards"]
    assert {r["provenance"] for r in raw} == {"rulebook", "stand-in"}
    for r in raw:
        if r["provenance"] == "rulebook" and "stand_in_fields" in r:
            assert all(f in r or f in ("name_fr", "abilities", "name") for f in r["stand_in_fields"])


def test_flower_cost_follows_the_market_rule_and_types_are_even() -> None:
    """Rulebook: "Flower Market", FLOWER CARD COSTS."""
    for c in FLOWERS:
        assert c.cost == flower_cost(c.allure)
    groups = Counter("wild" if c.allure == ("wild",) else len(c.allure) for c in FLOWERS)
    assert groups == {1: 50, 2: 30, "wild": 8}
    per_type = Counter(t for c in FLOWERS for t in c.allure if t != "wild")
    assert set(per_type.values()) == {22} and len(per_type) == 5  # 10 single + 8 mixed + 4 same-type doubles


def test_feature_symbols_are_even_and_sizes_as_designed() -> None:
    assert Counter(len(f.cost) for f in FEATURES) == {2: 15, 3: 20, 4: 15, 5: 5}
    per_type = Counter(t for f in FEATURES for t in f.cost)
    assert set(per_type.values()) == {35}
    assert Counter(f.ability.timing for f in FEATURES) == {
        "when_acquired": 14, "when_visited": 13, "end_of_round": 14, "game_end": 14}


def test_named_anchors_carry_the_rulebook_data() -> None:
    rose = _by_name(FLOWERS, "Double Pink Scotch Briar Rose")
    assert rose.allure == ("vistas", "architecture") and rose.cost == 2 and rose.provenance == "rulebook"
    ivy = _by_name(FLOWERS, "Common Ivy")
    assert ivy.allure == ("architecture", "architecture") and ivy.cost == 2
    assert sum(1 for c in FLOWERS if c.allure == ("wild",) and c.cost == 1) == 8
    pavilion = _by_name(FEATURES, "Pavilion")
    assert [ALLURE[t] for t in pavilion.cost] == ["vistas", "paths", "architecture", "architecture"]
    assert _by_name(FEATURES, "Pergola").solo_excluded
    camille = _by_name(VISITORS, "Camille")
    assert ALLURE[camille.allure] == "flowers" and camille.effect == {"gain": {"prestige": 1, "flowers": 1}}
    assert ALLURE[_by_name(VISITORS, "André").allure] == "architecture"
    assert ALLURE[_by_name(VISITORS, "Jean-Pierre").allure] == "architecture"
    lmm = _by_name(VISITORS, "Louise Marie Madeleine")
    assert ALLURE[lmm.allure] == "vistas" and lmm.effect == {"gain": {"coins": 2}}
    mc = _by_name(VISITORS, "Marie Catherine")
    assert mc.allure == -1 and mc.visits == "least_prestige"
    assert ALLURE[next(a for a in ARTISANS if a.occupation == "Landscaper").allure] == "paths"
    assert ALLURE[next(a for a in ARTISANS if a.occupation == "Painter").allure] == "vistas"
    assert {CHARACTERS[i].name for i in SOLO_OPPONENTS} == {
        "Mademoiselle Niwa", "Marie-Amélie", "Louise-Marie", "Captain George"}
    assert _by_name(EVENTS, "Notre Dame de Paris").ability.effect["choice"][0] == {"gain": {"prestige": 1}}


def test_solo_exclusions_are_flagged() -> None:
    """Rulebook: "Solo Mode": 5 Events, 2 Visitors and the Pergola are removed."""
    assert {e.name for e in EVENTS if e.solo_excluded} == {
        "La Seine", "On the Terrace", "Goats", "Grand Château", "Hot Air Balloon Voyage"}
    assert {v.name for v in VISITORS if v.solo_excluded} == {"Kai", "Catherine"}
    assert {f.name for f in FEATURES if f.solo_excluded} == {"Pergola"}


def test_visitors_artisans_characters_events_as_designed() -> None:
    typed = Counter(v.allure for v in VISITORS if v.allure >= 0)
    assert set(typed.values()) == {6} and sum(1 for v in VISITORS if v.allure < 0) == 5
    assert set(Counter(a.allure for a in ARTISANS).values()) == {4}
    assert Counter(LOCATIONS[a.location] for a in ARTISANS) == {
        "flower_market": 4, "garden_features": 4, "artisan_guild": 3, "special_invitation": 3, "prestige": 3,
        "coin": 3}
    assert all(len(c.abilities) == 3 for c in CHARACTERS)
    conv = Counter(c.abilities[i].effect["per"]["q"] for c in CHARACTERS for i in (0, 1))
    assert set(conv.values()) == {4}  # every Allure type in exactly 4 conversions
    assert Counter(e.ability.timing for e in EVENTS) == {"immediate": 10, "round": 10, "end_of_round": 10}


def test_rulebook_texts_render_from_the_data() -> None:
    """Card text and behaviour come from the same record (the rulebook's sentences)."""
    aurore = CHARACTERS[INDEX["C01"][1]]
    assert [AB.render(a) for a in aurore.abilities] == [
        "End of Round: gain +1 Flower card for every 3 Flower Allure.",
        "End of Round: gain +1 Coin for every 3 Vista Allure.",
        "End of Round: if you have 5+ Flower cards in hand, gain +1 Prestige.",
    ]
    texts = {AB.render(f.ability) for f in FEATURES if f.provenance == "rulebook"}
    assert "Game End: if you have 2 or more of each Allure type, gain +3 Prestige." in texts
    assert "Game End: gain +1 Prestige for every 3 Flower Allure on your Garden Features." in texts
    assert "Game End: if you have 4+ Flower Allure, gain +2 Prestige." in texts
    assert "When Visited: you may romance a Flower Visitor with 4+ Flower Allure." in texts


@pytest.mark.parametrize("kind", ["feature", "character", "event", "visitor", "artisan"])
def test_every_ability_renders(kind: str) -> None:
    if kind == "feature":
        texts = [AB.render(f.ability) for f in FEATURES]
    elif kind == "character":
        texts = [AB.render(a) for c in CHARACTERS for a in c.abilities]
    elif kind == "event":
        texts = [AB.render(e.ability) for e in EVENTS]
    elif kind == "visitor":
        texts = [AB.render_visitor(v.effect, v.visits) for v in VISITORS]
    else:
        texts = [AB.render_artisan(LOCATIONS[a.location], a.ability) for a in ARTISANS]
    assert all(t and t.endswith(".") and "{" not in t for t in texts)


def test_automaton_blind_spots() -> None:
    """Rulebook: "Solo Mode", 2: rewards tied to Companions, Garden Features or Artisans never score."""
    blind = {f.name for f in FEATURES if not AB.automaton_scores(f.ability)}
    assert "Cascade" in blind  # +1 per 3 Flower Allure on your Garden Features
    assert "Obelisk" not in blind  # 4+ Flower Allure
    assert not AB.automaton_scores(CHARACTERS[INDEX["C06"][1]].abilities[2])  # a Companion


def test_cards_json_is_generated_by_standins() -> None:
    """games/lafleur/standins.py holds the design rules; the data file is its output."""
    from games.lafleur import standins

    assert standins.render() == DATA_FILE.read_text(encoding="utf-8")
