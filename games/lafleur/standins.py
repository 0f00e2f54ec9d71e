"""The design rules of the La Fleur stand-in cards, as code; writes ``cards.json``.

Usage::

    .venv/bin/python -m games.lafleur.standins           # rewrite games/lafleur/cards.json
    .venv/bin/python -m games.lafleur.standins --check   # exit 1 if cards.json differs

No public card list exists. This module follows
a plan symmetric across the five Allure types, with every card
the rulebook names carrying its printed data (provenance ``rulebook``; the
fields we designed are listed in ``stand_in_fields``):

* Flowers (88): 50 single (10 per type, cost 0), 20 mixed doubles (each pair
  of types twice, cost 2), 10 same-type doubles (2 per type, cost 2), 8 Wild
  (cost 1). Every type: 22 Allure.
* Garden Features (55): 15 of 2 symbols, 20 of 3, 15 of 4 (the Pavilion
  pattern 2+1+1), 5 of 5; 35 symbols per type. Per type, five type-bound
  abilities go on Garden Features where that type is doubled; 30 generic
  abilities go elsewhere, the stronger ones on the smaller Garden Features.
* Visitors (35): 6 per type (+1 Prestige; +1 Coin and +1 Flower card; +2
  Coins; +1 Prestige and +1 Flower card; +2 Flower cards; pay 3 Coins for +2
  Prestige) and 5 type-less ones with a visiting rule.
* Artisans (20): 4 per type; ability locations 4/4/3/3/3/3; one ability per
  location (Flower Market: buy a second card; Garden Features: pay 1 Allure of
  any type), two alternating ones at the Guild and the Special Invitation.
* Characters (10): two conversions ("+1 X for every 3 [type] Allure",
  Prestige for every 4) and one condition each; every type in exactly four
  conversions, and in exactly one Prestige conversion (on the six others).
  The four solo opponents convert to Coins and Flower cards only (the
  automaton's Allure grows fast; see docs/rules/la-fleur.md).
* Events (30): 10 immediate, 10 for the round, 10 at the end of the round;
  the five removed in solo are the comparative ones.

Tuning by simulation (``bench/balance_lafleur.py``) changed, from the page's
plan: one "+1 Prestige" Visitor per type became "+1 Coin and +1 Flower card"
(games were too short); the solo opponents lost their Prestige conversions,
and each type keeps one Prestige conversion among the other Characters; the
weaker Artisan abilities (-1 Coin at the Flower Market, free reveals) were
dropped and the generic Garden Feature abilities are dealt type by type
(:data:`GENERIC_BIG`), because Paths players won least.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from typing import Any

from games.lafleur.cards import DATA_FILE

T: tuple[str, ...] = ("architecture", "paths", "water", "flowers", "vistas")
A, P, W, F, V = T
Card = dict[str, Any]

# -- Flower cards -------------------------------------------------------------------------
SINGLE_NAMES = {
    A: [("Boston Ivy", "Parthenocissus tricuspidata"), ("Climbing Hydrangea", "Hydrangea anomala subsp. petiolaris"),
        ("Virginia Creeper", "Parthenocissus quinquefolia"), ("Common Box", "Buxus sempervirens"),
        ("English Yew", "Taxus baccata"), ("Traveller's Joy", "Clematis vitalba"), ("Trumpet Vine", "Campsis radicans"),
        ("Houseleek", "Sempervivum tectorum"), ("Wallflower", "Erysimum cheiri"),
        ("Red Valerian", "Centranthus ruber")],
    P: [("English Lavender", "Lavandula angustifolia"), ("Wild Thyme", "Thymus serpyllum"),
        ("Roman Chamomile", "Chamaemelum nobile"), ("Catmint", "Nepeta cataria"),
        ("Garden Pinks", "Dianthus plumarius"),
        ("Sweet Alyssum", "Lobularia maritima"), ("Creeping Jenny", "Lysimachia nummularia"),
        ("English Daisy", "Bellis perennis"), ("Common Primrose", "Primula vulgaris"),
        ("Evergreen Candytuft", "Iberis sempervirens")],
    W: [("White Water Lily", "Nymphaea alba"), ("Yellow Flag", "Iris pseudacorus"),
        ("Marsh Marigold", "Caltha palustris"),
        ("Sacred Lotus", "Nelumbo nucifera"), ("Purple Loosestrife", "Lythrum salicaria"),
        ("Meadowsweet", "Filipendula ulmaria"), ("Water Forget-me-not", "Myosotis scorpioides"),
        ("Arrowhead", "Sagittaria sagittifolia"), ("Flowering Rush", "Butomus umbellatus"),
        ("Water Mint", "Mentha aquatica")],
    F: [("Garden Tulip", "Tulipa gesneriana"), ("Chinese Peony", "Paeonia lactiflora"),
        ("Carnation", "Dianthus caryophyllus"),
        ("Lily of the Valley", "Convallaria majalis"), ("Common Hyacinth", "Hyacinthus orientalis"),
        ("Poppy Anemone", "Anemone coronaria"), ("Persian Buttercup", "Ranunculus asiaticus"),
        ("Sweet Pea", "Lathyrus odoratus"), ("Auricula", "Primula auricula"), ("Madonna Lily", "Lilium candidum")],
    V: [("Common Sunflower", "Helianthus annuus"), ("Hollyhock", "Alcea rosea"), ("Foxglove", "Digitalis purpurea"),
        ("Candle Larkspur", "Delphinium elatum"), ("Garden Lupin", "Lupinus polyphyllus"),
        ("Crown Imperial", "Fritillaria imperialis"), ("Rocket Larkspur", "Consolida ajacis"),
        ("Great Mullein", "Verbascum thapsus"), ("Garden Angelica", "Angelica archangelica"),
        ("Globe Thistle", "Echinops ritro")],
}
SAME_NAMES = {
    A: [("Common Ivy", "Hedera helix"), ("Chinese Wisteria", "Wisteria sinensis")],
    P: [("Rosemary", "Salvia rosmarinus"), ("Garden Sage", "Salvia officinalis")],
    W: [("Japanese Iris", "Iris ensata"), ("Bogbean", "Menyanthes trifoliata")],
    F: [("Damask Rose", "Rosa × damascena"), ("Jonquil", "Narcissus jonquilla")],
    V: [("Giant Onion", "Allium giganteum"), ("Purpletop Vervain", "Verbena bonariensis")],
}
MIXED_NAMES = [
    ("Double Pink Scotch Briar Rose", "Rosa spinosissima"), ("Common Honeysuckle", "Lonicera periclymenum"),
    ("Common Jasmine", "Jasminum officinale"), ("Passion Flower", "Passiflora caerulea"),
    ("Morning Glory", "Ipomoea purpurea"), ("Nasturtium", "Tropaeolum majus"), ("Love-in-a-mist", "Nigella damascena"),
    ("Sweet William", "Dianthus barbatus"), ("Lady's Mantle", "Alchemilla mollis"), ("Hosta", "Hosta plantaginea"),
    ("Astilbe", "Astilbe chinensis"), ("Globeflower", "Trollius europaeus"), ("Columbine", "Aquilegia vulgaris"),
    ("Snapdragon", "Antirrhinum majus"), ("Stock", "Matthiola incana"), ("Sweet Rocket", "Hesperis matronalis"),
    ("Bleeding Heart", "Lamprocapnos spectabilis"), ("Oriental Poppy", "Papaver orientale"),
    ("Madagascar Periwinkle", "Catharanthus roseus"), ("Mignonette", "Reseda odorata"),
]
WILD_NAMES = [
    ("Cornflower", "Centaurea cyanus"), ("Corn Poppy", "Papaver rhoeas"), ("Oxeye Daisy", "Leucanthemum vulgare"),
    ("Cowslip", "Primula veris"), ("Meadow Buttercup", "Ranunculus acris"), ("Red Campion", "Silene dioica"),
    ("Common Bluebell", "Hyacinthoides non-scripta"), ("Harebell", "Campanula rotundifolia"),
]


def flowers() -> list[Card]:
    """The 88 Flower cards (ids F01..F88)."""
    fl: list[Card] = []
    for t in T:
        fl += [dict(name=n, scientific=s, allure=[t], cost=0) for n, s in SINGLE_NAMES[t]]
    for t in T:
        fl += [dict(name=n, scientific=s, allure=[t, t], cost=2) for n, s in SAME_NAMES[t]]
    pairs = [(V, A)] + [p for p in itertools.combinations(T, 2) if set(p) != {V, A}]
    for pair, (n, s) in zip(pairs + pairs, MIXED_NAMES, strict=False):
        fl.append(dict(name=n, scientific=s, allure=list(pair), cost=2))
    fl += [dict(name=n, scientific=s, allure=["wild"], cost=1) for n, s in WILD_NAMES]
    out = []
    for i, c in enumerate(fl):
        extra: Card = {"provenance": "stand-in"}
        if c["name"] in ("Double Pink Scotch Briar Rose", "Common Ivy"):
            extra = {"provenance": "rulebook", "stand_in_fields": ["scientific"]}
        if c["name"] == "Cornflower":
            extra["note"] = "the rulebook names only 'Wild card' (cost 1); name is ours"
        out.append(dict(id=f"F{i + 1:02d}", type="flower", **c, **extra))
    return out


# -- Garden Features ------------------------------------------------------------------------
def _ab(timing: str, effect: Card, condition: Card | None = None) -> Card:
    return {"timing": timing, "condition": condition, "effect": effect}


def _type_bound(t: str) -> dict[str, Card]:
    """The five abilities bound to one Allure type."""
    return {
        "ge4": _ab("game_end", {"gain": {"prestige": 2}}, {"q": f"allure:{t}", "min": 4}),
        "ge_per3": _ab("game_end", {"gain": {"prestige": 1}, "per": {"q": f"feature_allure:{t}", "every": 3}}),
        "romance": _ab("when_visited", {"romance_threshold": {"allure": t, "value": 4}}),
        "eor_per3": _ab("end_of_round", {"gain": {"coins": 1}, "per": {"q": f"allure:{t}", "every": 3, "max": 2}}),
        "wv_coin": _ab("when_visited", {"gain": {"coins": 1}, "per": {"q": f"visitors:{t}", "every": 1}}),
    }


PERGOLA = _ab("when_visited", {"gain": {"prestige": 1}}, {"most_strict": "visitors"})
EACH2 = _ab("game_end", {"gain": {"prestige": 3}}, {"q": "min_allure", "min": 2})
GENERIC_SMALL = ([_ab("when_acquired", {"gain": {"prestige": 1}})] * 5
                 + [_ab("when_acquired", {"gain": {"flowers": 2}})] * 5)
"""Abilities of the ten 2-symbol Garden Features of two different types."""
_WA2C = _ab("when_acquired", {"gain": {"coins": 2}})
_EOR1C = _ab("end_of_round", {"gain": {"coins": 1}})
_EOR1F = _ab("end_of_round", {"gain": {"flowers": 1}})
_EOR8 = _ab("end_of_round", {"gain": {"prestige": 1}}, {"q": "coins", "min": 8})
_WV2 = _ab("when_visited", {"gain": {"prestige": 1}}, {"q": "visitors", "min": 2})
GENERIC_BIG: dict[str, list[Any]] = {
    # Allure:       T,T,U (3)  T,T,U,V (4)  T,T,U,V (4)  T,T,U,U,V (5)
    A: [_WA2C, _EOR1C, _WV2, "EACH2"],
    P: [_WA2C, _EOR8, _EOR1F,
        _ab("game_end", {"gain": {"prestige": 1}, "per": {"q": "features", "every": 2, "max": 3}})],
    W: [_WA2C, _EOR1C, _WV2, _ab("game_end", {"gain": {"prestige": 2}}, {"q": "companion", "min": 1})],
    F: [_WA2C, _EOR1C, _EOR1F, _ab("game_end", {"gain": {"prestige": 2}}, {"q": "artisans", "min": 4})],
    V: ["PERGOLA", _EOR1C, _EOR1F, _EOR8],
}
"""The other 20 abilities, by the type a Garden Feature doubles, spread so that every
type gets about the same value (each type one weaker pick: Pergola, 8+ Coins, 2+ Visitors).

"2+ of each Allure type: +3 Prestige" (Quincunx, the End-Game Scoring Example's
first Garden Feature) sits on Architecture's 5-symbol card (Architecture x2,
Paths x2, Water: no Flower, 1 Water), so that with Cascade (Flowers x2,
Architecture) and Obelisk (Flowers x2) James can hold "4 Flower Allure" and
"only 1 Water Allure" as the example says; on Water's card
(Water x2, Flowers x2, Vistas) those three alone gave 6 Flower and 2 Water."""
FEATURE_NAMES = [
    ("Parterre", "Parterre"), ("Fountain", "Fontaine"), ("Orangery", "Orangerie"), ("Labyrinth", "Labyrinthe"),
    ("Grotto", "Grotte"), ("Belvedere", "Belvédère"), ("Grand Canal", "Grand Canal"), ("Grove", "Bosquet"),
    ("Avenue", "Allée"), ("Kiosk", "Kiosque"), ("Statue", "Statue"), ("Topiary", "Topiaire"),
    ("Reflecting Pool", "Miroir d'eau"), ("Rose Garden", "Roseraie"), ("Kitchen Garden", "Potager"),
    ("Obelisk", "Obélisque"), ("Cascade", "Cascade"), ("Bridge", "Pont"), ("Terrace", "Terrasse"),
    ("Colonnade", "Colonnade"), ("Folly", "Fabrique"), ("Aviary", "Volière"), ("Sundial", "Cadran solaire"),
    ("Greenhouse", "Serre"), ("Arbour", "Tonnelle"), ("Ha-ha", "Saut-de-loup"), ("Trellis", "Treillage"),
    ("Orchard", "Verger"), ("Apiary", "Rucher"), ("Dovecote", "Colombier"), ("Temple of Love", "Temple de l'Amour"),
    ("Hermitage", "Ermitage"), ("Pond", "Étang"), ("Island", "Île"), ("Promenade", "Promenade"),
    ("Lookout", "Point de vue"), ("Ice House", "Glacière"), ("Stone Bench", "Banc de pierre"), ("Garden Urn", "Vase"),
    ("Wrought Gate", "Grille"), ("Stairway", "Escalier"), ("Ruin", "Ruine"), ("Green Theatre", "Théâtre de verdure"),
    ("Bowling Green", "Boulingrin"), ("Mall", "Mail"), ("Quincunx", "Quinconce"), ("Nymphaeum", "Nymphée"),
    ("Water Parterre", "Parterre d'eau"), ("Jet of Water", "Jet d'eau"), ("Flower Border", "Plate-bande"),
    ("Meadow", "Prairie"), ("Vine Arbour", "Treille"), ("Lavender Walk", "Allée de lavande"),
    ("Chinese Pavilion", "Pagode"), ("Menagerie", "Ménagerie"), ("Carp Pond", "Vivier"), ("Hedge Maze", "Dédale"),
    ("Rock Garden", "Rocaille"),
]


def _four_symbol_costs() -> list[list[str]]:
    """15 costs T,T,U,V: each type doubled 3 times and single 6 times; Architecture's set holds Paths+Vistas."""
    others = {t: list(itertools.combinations([x for x in T if x != t], 2)) for t in T}
    for choice in itertools.product(*[list(itertools.combinations(others[t], 3)) for t in T]):
        count = dict.fromkeys(T, 0)
        for pairs in choice:
            for pair in pairs:
                for x in pair:
                    count[x] += 1
        if all(v == 6 for v in count.values()) and (P, V) in choice[0]:
            return [[t, t, *pair] for t, pairs in zip(T, choice, strict=True) for pair in pairs]
    raise AssertionError("no symmetric set of 4-symbol costs")


def _rulebook_note(ab: Card) -> str | None:
    cond, eff = ab["condition"], ab["effect"]
    if ab["timing"] == "game_end":
        if cond == {"q": "min_allure", "min": 2}:
            return "2+ of each Allure type: +3 Prestige (End-Game Scoring Example)"
        if eff.get("per", {}).get("q") == "feature_allure:flowers":
            return "+1 Prestige per 3 Flower Allure on your Garden Features (End-Game Scoring Example)"
        if cond == {"q": "allure:flowers", "min": 4}:
            return "4+ Flower Allure: +2 Prestige (End-Game Scoring Example)"
    rt = eff.get("romance_threshold")
    if rt and rt["allure"] == F:
        return "a When Visited ability that lets you romance a Companion for fewer Allure (Garden Party, TIP)"
    return None


def features() -> list[Card]:
    """The 55 Garden Features (ids G01..G55)."""
    ttu = [[t, t, u] for t in T for u in T if u != t]
    ttuv = _four_symbol_costs()
    ttuuv = [[T[i], T[i], T[(i + 1) % 5], T[(i + 1) % 5], T[(i + 2) % 5]] for i in range(5)]
    layouts: list[tuple[list[str], Any]] = []
    for t in T:
        tb = _type_bound(t)
        three = [c for c in ttu if c[0] == t]
        layouts += [([t, t], tb["ge4"]), (three[0], tb["ge_per3"]), (three[1], tb["romance"]),
                    (three[2], tb["eor_per3"]), ([c for c in ttuv if c[0] == t][0], tb["wv_coin"])]
    layouts += list(zip([list(p) for p in itertools.combinations(T, 2)], GENERIC_SMALL, strict=True))
    for i, t in enumerate(T):
        big = [[c for c in ttu if c[0] == t][3], *[c for c in ttuv if c[0] == t][1:], ttuuv[i]]
        layouts += list(zip(big, GENERIC_BIG[t], strict=True))
    out: list[Card] = []
    names = iter(FEATURE_NAMES)
    for i, (cost, ab) in enumerate(layouts):
        extra: Card = {"provenance": "stand-in"}
        if ab == "PERGOLA":
            ab, name = PERGOLA, ("Pergola", "Pergola")
            extra = {"provenance": "rulebook", "solo_excluded": True, "stand_in_fields": ["cost", "ability"]}
        else:
            ab = EACH2 if ab == "EACH2" else ab
            if sorted(cost) == sorted([A, A, P, V]) and not any(f["name"] == "Pavilion" for f in out):
                name, cost = ("Pavilion", "Pavillon"), [V, P, A, A]
                extra = {"provenance": "rulebook", "stand_in_fields": ["ability", "name_fr"]}
            else:
                name = next(names)
        note = _rulebook_note(ab)
        if note:
            extra = {"provenance": "rulebook", "stand_in_fields": ["name", "cost"], "rulebook": note}
        out.append(dict(id=f"G{i + 1:02d}", type="feature", name=name[0], name_fr=name[1], cost=cost,
                        ability=ab, **extra))
    # The example's name follows its ability (names are stand-ins, given in layout order).
    each2 = next(f for f in out if f["ability"] == EACH2)
    named = next(f for f in out if f["name"] == "Quincunx")
    each2["name"], named["name"] = named["name"], each2["name"]
    each2["name_fr"], named["name_fr"] = named["name_fr"], each2["name_fr"]
    return out


# -- Visitors ----------------------------------------------------------------------------------
VISITOR_NAMES = {
    A: ["André", "Jean-Pierre", "Étienne", "Gabrielle", "Henri", "Isabelle"],
    P: ["Lucien", "Margot", "Olivier", "Pauline", "Rémy", "Sophie"],
    W: ["Adèle", "Bastien", "Céleste", "Denis", "Éloïse", "Félix"],
    F: ["Camille", "Delphine", "Honoré", "Inès", "Jules", "Lise"],
    V: ["Louise Marie Madeleine", "Mathieu", "Noémie", "Octave", "Perrine", "Quentin"],
}
VISITOR_SLOTS: list[tuple[str, Card]] = [
    ("p1", {"gain": {"prestige": 1}}), ("cf", {"gain": {"coins": 1, "flowers": 1}}), ("c2", {"gain": {"coins": 2}}),
    ("pf", {"gain": {"prestige": 1, "flowers": 1}}), ("f2", {"gain": {"flowers": 2}}),
    ("conv", {"pay": {"coins": 3}, "gain": {"prestige": 2}}),
]
"""The six effects of each type's Visitors."""
ANCHORS = {"Louise Marie Madeleine": "c2", "Camille": "pf"}
"""Visitors whose effect the rulebook prints."""
TYPELESS: list[tuple[str, str, Card, str, Card]] = [
    ("Marie Catherine", "least_prestige", {"gain": {"prestige": 1, "coins": 1}}, "rulebook",
     {"stand_in_fields": ["effect"]}),
    ("Kai", "most_features", {"gain": {"prestige": 1}}, "rulebook",
     {"stand_in_fields": ["allure", "visits", "effect"], "solo_excluded": True}),
    ("Catherine", "most_artisans", {"gain": {"prestige": 1}}, "rulebook",
     {"stand_in_fields": ["allure", "visits", "effect"], "solo_excluded": True}),
    ("Baptiste", "most_total_allure", {"gain": {"prestige": 1}}, "stand-in", {}),
    ("Hortense", "most_hand", {"gain": {"coins": 2}}, "stand-in", {}),
]


def visitors() -> list[Card]:
    """The 35 Visitors (ids V01..V35)."""
    slots = dict(VISITOR_SLOTS)
    out: list[Card] = []
    for t in T:
        names = VISITOR_NAMES[t]
        fixed = {n: k for n, k in ANCHORS.items() if n in names}
        free = [k for k, _ in VISITOR_SLOTS]
        for k in fixed.values():
            free.remove(k)
        assign = dict(fixed)
        assign.update(zip([n for n in names if n not in fixed], free, strict=False))
        for n in names:
            extra: Card = {"provenance": "stand-in"}
            if n == "André":
                extra = {"provenance": "rulebook", "stand_in_fields": ["effect"]}
            elif n == "Jean-Pierre":
                extra = {"provenance": "stand-in", "stand_in_fields": ["effect"],
                         "note": "Architecture per a designer interview (bonjourdarlene.com, 19 Apr 2024); "
                                 "effect is ours"}
            elif n == "Louise Marie Madeleine":
                extra = {"provenance": "rulebook"}
            elif n == "Camille":
                extra = {"provenance": "rulebook", "note": "the rulebook gives her the Flower type in its Garden Party "
                         "Example and also lists her among type-less visitors; we keep the Flower type"}
            out.append(dict(name=n, allure=t, visits=None, effect=slots[assign[n]], **extra))
    for n, rule, effect, prov, extra in TYPELESS:
        out.append(dict(name=n, allure=None, visits=rule, effect=effect, provenance=prov, **extra))
    return [dict(id=f"V{i + 1:02d}", type="visitor", **v) for i, v in enumerate(out)]


# -- Artisans ----------------------------------------------------------------------------------
ARTISAN_LOCATIONS = {
    A: ["flower_market", "garden_features", "artisan_guild", "special_invitation"],
    P: ["flower_market", "garden_features", "prestige", "coin"],
    W: ["flower_market", "artisan_guild", "special_invitation", "prestige"],
    F: ["garden_features", "artisan_guild", "prestige", "coin"],
    V: ["flower_market", "garden_features", "special_invitation", "coin"],
}
ARTISAN_ABILITIES: dict[str, list[Card]] = {
    "flower_market": [{"second_purchase": 1}],
    "garden_features": [{"free_allure": 1}],
    "artisan_guild": [{"hire_cost": 6}, {"replace_cost": 2}],
    "special_invitation": [{"gain": {"coins": 1}}, {"gain": {"flowers": 1}}],
    "prestige": [{"gain": {"coins": 1}}],
    "coin": [{"gain": {"coins": 1}}],
}
"""Abilities per location, handed out in turn (worth about half an action each; the
Flower Market's "-1 Coin" and Garden Features' "free reveals" were too weak)."""
OCCUPATIONS = {
    A: ["Architect", "Mason", "Stonecutter", "Ironsmith"], P: ["Landscaper", "Surveyor", "Paver", "Hedger"],
    W: ["Fountaineer", "Well-digger", "Hydraulic Engineer", "Boatwright"],
    F: ["Florist", "Perfumer", "Botanist", "Herbalist"], V: ["Painter", "Sculptor", "Engraver", "Glazier"],
}


def artisans() -> list[Card]:
    """The 20 Artisans (ids A01..A20)."""
    handed = dict.fromkeys(ARTISAN_ABILITIES, 0)
    out: list[Card] = []
    for t in T:
        for k, loc in enumerate(ARTISAN_LOCATIONS[t]):
            options = ARTISAN_ABILITIES[loc]
            ability = options[handed[loc] % len(options)]
            handed[loc] += 1
            occ = OCCUPATIONS[t][k]
            extra: Card = ({"provenance": "rulebook", "stand_in_fields": ["ability_location", "ability"]}
                           if occ in ("Landscaper", "Painter") else {"provenance": "stand-in"})
            out.append(dict(occupation=occ, allure=t, ability_location=loc, ability=ability, **extra))
    return [dict(id=f"A{i + 1:02d}", type="artisan", **a) for i, a in enumerate(out)]


# -- Characters --------------------------------------------------------------------------------
def _conv(t: str, reward: str) -> Card:
    every = 4 if reward == "prestige" else 3
    return _ab("end_of_round", {"gain": {reward: 1}, "per": {"q": f"allure:{t}", "every": every}})


def _cond(q: str, k: int) -> Card:
    return _ab("end_of_round", {"gain": {"prestige": 1}}, {"q": q, "min": k})


SOLO = {"stand_in_fields": ["abilities"], "solo_opponent": True}


def characters() -> list[Card]:
    """The 10 Characters (ids C01..C10); C01 is the rulebook's example Character."""
    rows: list[tuple[str, list[Card], str, Card]] = [
        ("Aurore", [_conv(F, "flowers"), _conv(V, "coins"), _cond("hand", 5)], "rulebook",
         {"stand_in_fields": ["name"], "rulebook": "Character Ability Example (Aurora's Character)"}),
        ("Mademoiselle Niwa", [_conv(W, "coins"), _conv(P, "flowers"), _cond("coins", 8)], "rulebook", SOLO),
        ("Marie-Amélie", [_conv(A, "coins"), _conv(F, "flowers"), _cond("min_allure", 2)], "rulebook", SOLO),
        ("Louise-Marie", [_conv(V, "flowers"), _conv(W, "coins"), _cond("total_allure", 10)], "rulebook", SOLO),
        ("Captain George", [_conv(P, "coins"), _conv(A, "flowers"), _cond("hand", 4)], "rulebook", SOLO),
        ("Baronne Églantine", [_conv(A, "prestige"), _conv(W, "flowers"), _cond("companion", 1)], "stand-in", {}),
        ("Chevalier Anselme", [_conv(V, "prestige"), _conv(P, "coins"), _cond("artisans", 4)], "stand-in", {}),
        ("Comtesse Solène", [_conv(F, "prestige"), _conv(A, "flowers"), _cond("features:game_end", 3)], "stand-in", {}),
        ("Abbé Fulbert", [_conv(W, "prestige"), _conv(F, "coins"), _cond("features", 6)], "stand-in", {}),
        ("Marquis Théodore", [_conv(P, "prestige"), _conv(V, "flowers"), _cond("artisans", 3)], "stand-in", {}),
    ]
    return [dict(id=f"C{i + 1:02d}", type="character", name=n, abilities=abl, provenance=prov, **dict(extra))
            for i, (n, abl, prov, extra) in enumerate(rows)]


# -- Events ------------------------------------------------------------------------------------
def _ev(name: str, timing: str, effect: Card, condition: Card | None = None, prov: str = "stand-in",
        **extra: Any) -> Card:
    return dict(name=name, timing=timing, condition=condition, effect=effect, provenance=prov, **extra)


SOLO_OUT: dict[str, Any] = {"prov": "rulebook", "stand_in_fields": ["effect"], "solo_excluded": True}


def events() -> list[Card]:
    """The 30 Events (ids E01..E30)."""
    evs = [
        _ev("Notre Dame de Paris", "immediate", {"choice": [{"gain": {"prestige": 1}}, {"gain": {"coins": 2}}]},
            prov="rulebook", stand_in_fields=["effect"],
            note="the rulebook says it offers a choice and the solo opponent always takes 1 Prestige"),
        _ev("Royal Treasury", "immediate", {"gain": {"coins": 2}}),
        _ev("Spring Bloom", "immediate", {"gain": {"flowers": 1}}),
        _ev("Market Day", "immediate", {"refresh": "market"}),
        _ev("New Commissions", "immediate", {"refresh": "features"}),
        _ev("Foreign Guests", "immediate", {"extra_visitors": 1}),
        _ev("The Salon", "immediate", {"pay": {"coins": 2}, "gain": {"prestige": 1}}),
        _ev("Bouquet Contest", "immediate", {"pay": {"flowers": 2}, "gain": {"prestige": 1}}),
        _ev("Hot Air Balloon Voyage", "immediate", {"gain": {"coins": 2}}, {"least": "prestige"}, **SOLO_OUT),
        _ev("La Seine", "immediate", {"gain": {"flowers": 1}}, {"least": "features"}, **SOLO_OUT),
        _ev("Flower Sale", "round", {"modify": {"market_discount": 1}}),
        _ev("Guild Fair", "round", {"modify": {"hire_cost": 6, "replace_cost": 2}}),
        _ev("Prosperous Season", "round", {"modify": {"coin_location": 3}}),
        _ev("Free Exhibition", "round", {"modify": {"free_reveals": 1}}),
        _ev("Open Gates", "round", {"modify": {"romance_threshold": 4}}),
        _ev("Generous Guests", "round", {"modify": {"visitor_coins": 1}}),
        _ev("Seed Bargains", "round", {"modify": {"deck_price": 0}}),
        _ev("Court Honours", "round", {"modify": {"prestige_coins": 1}}),
        _ev("Busy Market", "round", {"modify": {"second_purchase": 1}}),
        _ev("On the Terrace", "round", {"modify": {"ties_to_first": 1}}, **SOLO_OUT),
    ]
    soirees = ["Soirée of Stone", "Soirée of the Walks", "Soirée on the Water", "Soirée of Blossoms", "Soirée of Views"]
    evs += [_ev(n, "end_of_round", {"gain": {"prestige": 1}}, {"q": f"allure:{t}", "min": 5})
            for t, n in zip(T, soirees, strict=True)]
    evs += [
        _ev("Harvest", "end_of_round", {"gain": {"coins": 1}, "per": {"q": "features", "every": 2, "max": 2}}),
        _ev("Gift of Seeds", "end_of_round", {"gain": {"flowers": 1}}, {"q": "hand", "max": 2}),
        _ev("Patronage", "end_of_round", {"gain": {"coins": 2}}, {"q": "artisans", "min": 3}),
        _ev("Goats", "end_of_round", {"discard_flowers": 1}, {"most": "hand"}, **SOLO_OUT),
        _ev("Grand Château", "end_of_round", {"gain": {"prestige": 1}}, {"most": "features"}, **SOLO_OUT),
    ]
    return [dict(id=f"E{i + 1:02d}", type="event", **e) for i, e in enumerate(evs)]


# -- the file ----------------------------------------------------------------------------------
NOTES = [
    "No public card list for La Fleur exists. Records marked 'rulebook' carry data the "
    "rulebook prints; 'stand_in_fields' names the fields of such a record that are ours. Every other record is a "
    "stand-in designed for this project.",
    "Card ids (F01, G01, V01, A01, C01, E01) are ours, not printed on the cards.",
    "Abilities are data (timing, condition, effect) run by games/lafleur/abilities.py; the card text shown to players "
    "is rendered from the same record.",
    "Flower 'cost' follows the rulebook's Flower Market rule (2 Allure: 2 Coins, Wild: 1, 1 Allure: 0) and is checked "
    "by the loader.",
    "Generated by games/lafleur/standins.py (python -m games.lafleur.standins).",
]


def render() -> str:
    """The text of ``cards.json`` (one card per line)."""
    cards = flowers() + features() + visitors() + artisans() + characters() + events()
    lines = ["{", ' "format": "parterre-cards/1",', ' "game": "lafleur",',
             f' "notes": {json.dumps(NOTES, ensure_ascii=False)},', ' "cards": [']
    lines += ["  " + json.dumps(c, ensure_ascii=False) + ("," if i < len(cards) - 1 else "")
              for i, c in enumerate(cards)]
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m games.lafleur.standins", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when cards.json differs instead of writing")
    ns = ap.parse_args(argv)
    text = render()
    current = DATA_FILE.read_text(encoding="utf-8") if DATA_FILE.exists() else ""
    if ns.check:
        if current != text:
            print(f"{DATA_FILE} differs from games/lafleur/standins.py", file=sys.stderr)
            return 1
        return 0
    DATA_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {DATA_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
