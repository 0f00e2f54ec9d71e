"""Observations: what a seat (or the spectator) may know, as a plain dict; and the full state.

Rulebook: La Fleur, "Player Setup" (Flower cards in hand: "Do not show these
cards to the other players"; Characters and Artisans are chosen before
anyone reveals them). Hidden from a seat: other players' hands (except cards
everybody saw face-up before they were taken), the Characters and Artisans
dealt to others until all have chosen, the solo opponent's face-down Flower
cards, and the order and content of every deck (only sizes are shown).

The dict is built field by field from public parts of the state plus the
seat's own private parts (never copied from the full state and trimmed).
Its shape is exactly the protobuf message ``parterre.v1.LaFleurObservation``
(``proto/parterre/v1/lafleur.proto``)::

    {
      "num_players": 3, "seat": 0, "solo": false, "difficulty": "",
      "round": 2, "max_rounds": 30, "grande_soiree": false,
      "phase": "place",                  # see PHASE_NAMES in games.lafleur.constants
      "current_player": 0,               # seat, -1 chance, -2 game over
      "first_player": 1, "turn_order": [1, 2, 0],
      "market": [{"space": 1, "card": "F12"}, ...],            # 4 spaces, "" empty
      "garden_features": [{"space": 1, "card": "G07"}, ...],   # 5 spaces
      "visitors": [{"card": "V03", "pawn": -1, "romance": false, "overflow": false}, ...],
      "event": "E04",                    # this round's Event, "" none
      "flower_deck": 60, "feature_deck": 45, "visitor_deck": 25, "artisan_deck": 8, "event_deck": 29,
      "visitor_deck_bottom": [],         # solo: known Visitors under the deck, in order
      "flower_discard": [...], "feature_discard": [...], "visitor_discard": [...],
      "artisan_discard": [...], "event_discard": [...],          # oldest first
      "players": [{"seat": 0, "automaton": false, "character": "C03", "chosen": true,
                   "dealt_characters": [], "dealt_artisans": [],  # own seat, before the reveal
                   "artisans": [{"card": "A05", "placed": true, "tilted": false,
                                 "location": "coin"}, ...],
                   "hand": ["F12", ...], "cards_in_hand": 4, "coins": 3, "prestige": 2,
                   "allure": {"architecture": 1, "paths": 0, "water": 2, "flowers": 0, "vistas": 0},
                   "total_allure": 3, "garden_features": ["G07"], "companion": "",
                   "visitors": [], "used_prestige": false, "romancing": false}, ...],
      "purchase": {"feature": "", "space": 0, "remaining": {...5 types...},
                   "discount": false, "pair_allure": "", "pair_first": ""},
      "prompt": {"kind": "", "source": "", "text": "", "options": []}
    }

In solo ``players`` holds the seat (player 0) and the opponent automaton
(player 1, ``automaton: true``, ``seat: 1``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from games.lafleur.abilities import effect_text, render
from games.lafleur.cards import (
    ALLURE,
    ARTISANS,
    CHARACTERS,
    DECK_NAMES,
    EVENTS,
    FEATURES,
    FLOWERS,
    LOCATIONS,
    VISITORS,
)
from games.lafleur.constants import MAX_ROUNDS, PHASE_NAMES, VISITOR_SPACES

if TYPE_CHECKING:
    from games.lafleur.state_protocol import LaFleurStateProtocol


def _allure(values: list[int] | tuple[int, ...]) -> dict[str, int]:
    return dict(zip(ALLURE, values, strict=True))


def _gain_text(g: tuple[int, int, int]) -> str:
    return effect_text({"gain": {"prestige": g[0], "coins": g[1], "flowers": g[2]}})


def _item_text(it: tuple[str, int]) -> str:
    kind, x = it
    if kind == "visitor":
        return f"{VISITORS[x].id} {VISITORS[x].name}: {effect_text(VISITORS[x].effect)}"
    if kind == "bonus":
        return f"Event: +{x} Coins"
    return f"{FEATURES[x].id} {FEATURES[x].name}: {render(FEATURES[x].ability)}"


def prompt_of(s: LaFleurStateProtocol) -> dict[str, Any]:
    """The pending prompt of an effect decision (empty strings when none)."""
    pr = s._prompt
    kind, source, text, options = "", "", "", []
    if pr:
        kind = pr[0]
        if kind == "offer":
            _, pay_c, pay_f, gain, source = pr[1]
            what = f"{pay_c} Coins" if pay_c else f"{pay_f} Flower cards"
            text = f"pay {what} to {_gain_text(gain)}?"
        elif kind == "character":
            source = pr[2]
            text = "use your Character's abilities: " + "; ".join(
                _gain_text(st[1:4]) if st[0] == "gain" else st[0] for st in pr[1]) + "?"
        elif kind == "choice":
            source = pr[1][2]
            options = [effect_text(e) for e in pr[1][1]]
            text = "choose one"
        elif kind == "order":
            text = "choose what to resolve next at your Garden Party"
            options = [_item_text(it) for it in pr[1]]
        elif kind == "discard":
            source = pr[2]
            text = f"discard {s._discard_left} Flower card(s)"
        elif kind == "take":
            source = pr[1]
            text = "gain a Flower card: a face-up one or the top of the deck"
    elif s._swap_new >= 0:
        # Rulebook: "Artisan Guild", REPLACING: "draw an Artisan card from the top of the Artisan
        # deck. You may choose to keep the new Artisan card or discard it": the seat decides
        # seeing the card (shown to the table, like every Artisan in play; decision 10).
        new = ARTISANS[s._swap_new]
        kind, source = "swap", new.id
        text = f"keep the {new.occupation} in place of one of your Artisans, or discard it"
    return {"kind": kind, "source": source, "text": text, "options": options}


def _player(s: LaFleurStateProtocol, p: int, seat: int | None) -> dict[str, Any]:
    own = seat == p
    revealed = s._revealed
    if revealed:
        character = CHARACTERS[s._character[p]].id if s._character[p] >= 0 else ""
    elif p == s._automaton and s._character[p] >= 0:
        character = CHARACTERS[s._character[p]].id  # the solo opponent is drawn face-up
    elif own and s._chosen_character[p] >= 0:
        character = CHARACTERS[s._chosen_character[p]].id
    else:
        character = ""
    hand = s._hand[p]
    opened = s._hand_open[p]
    visible = hand if own else [x for x in hand if x in opened]
    arts = s._artisans[p]
    return {
        "seat": p,
        "automaton": p == s._automaton,
        "character": character,
        "chosen": bool(s._kept_artisans[p]) or p == s._automaton,
        "dealt_characters": [CHARACTERS[c].id for c in s._dealt_characters[p]] if own and not revealed else [],
        "dealt_artisans": [ARTISANS[a].id for a in s._dealt_artisans[p]] if own and not revealed else [],
        "artisans": [
            {
                "card": ARTISANS[a].id,
                "placed": s._placed[p][i],
                "tilted": s._tilted[p][i],
                "location": LOCATIONS[s._artisan_locations[p][i]] if s._artisan_locations[p][i] >= 0 else "",
            }
            for i, a in enumerate(arts)
        ],
        "hand": [FLOWERS[x].id for x in visible],
        "cards_in_hand": len(hand),
        "coins": s._coins[p],
        "prestige": s._prestige[p],
        "allure": _allure(s._allure[p]),
        "total_allure": sum(s._allure[p]),
        "garden_features": [FEATURES[f].id for f in s._features[p]],
        "companion": VISITORS[s._companion[p]].id if s._companion[p] >= 0 else "",
        "visitors": [VISITORS[v].id for v in s._party[p]],
        "used_prestige": s._used_prestige[p],
        "romancing": s._romancing[p],
    }


def build_observation(s: LaFleurStateProtocol, seat: int | None) -> dict[str, Any]:
    """The observation of ``seat`` (None = spectator); see the module docstring.

    Args:
        s: the state to observe.
        seat: a seat number, or None.

    Returns:
        A JSON-able dict shaped like ``parterre.v1.LaFleurObservation``.
    """
    deck = s._deck
    disc = s._discards
    paying = s._pay_feature >= 0
    return {
        "num_players": s._num_seats,
        "seat": -1 if seat is None else seat,
        "solo": s._solo,
        "difficulty": s._difficulty if s._solo else "",
        "round": s._round,
        "max_rounds": MAX_ROUNDS,
        "grande_soiree": s._final,
        "phase": PHASE_NAMES[s._phase],
        "current_player": s._cur,
        "first_player": s._first_player,
        "turn_order": list(s._order),
        "market": [{"space": i + 1, "card": FLOWERS[x].id if x >= 0 else ""} for i, x in enumerate(s._market)],
        "garden_features": [
            {"space": i + 1, "card": FEATURES[x].id if x >= 0 else ""} for i, x in enumerate(s._display)
        ],
        "visitors": [
            {"card": VISITORS[v].id, "pawn": s._visitor_pawn[i], "romance": s._visitor_romance[i],
             "overflow": i >= VISITOR_SPACES}
            for i, v in enumerate(s._visitors)
        ],
        "event": EVENTS[s._event].id if s._event >= 0 else "",
        "flower_deck": len(deck[0]),
        "feature_deck": len(deck[1]),
        "visitor_deck": len(deck[2]) + len(s._visitor_bottom),
        "artisan_deck": len(deck[3]),
        "event_deck": len(deck[5]),
        "visitor_deck_bottom": [VISITORS[v].id for v in s._visitor_bottom],
        "flower_discard": [FLOWERS[x].id for x in disc[0]],
        "feature_discard": [FEATURES[x].id for x in disc[1]],
        "visitor_discard": [VISITORS[x].id for x in disc[2]],
        "artisan_discard": [ARTISANS[x].id for x in disc[3]],
        "event_discard": [EVENTS[x].id for x in disc[5]],
        "players": [_player(s, p, seat) for p in range(s._num_players)],
        "purchase": {
            "feature": FEATURES[s._pay_feature].id if paying else "",
            "space": s._pay_space + 1 if paying else 0,
            "remaining": _allure(s._pay_need if paying else (0, 0, 0, 0, 0)),
            "discount": bool(s._pay_free) if paying else False,
            "pair_allure": ALLURE[s._pair_allure] if s._pair_allure >= 0 else "",
            "pair_first": FLOWERS[s._pair_first].id if s._pair_first >= 0 else "",
        },
        "prompt": prompt_of(s),
    }


def full_state(s: LaFleurStateProtocol) -> dict[str, Any]:
    """Everything, hidden information included, JSON-able (hashes, referee and tests only)."""
    ids = {name: [c.id for c in cards] for name, cards in
           (("flower", FLOWERS), ("feature", FEATURES), ("visitor", VISITORS), ("artisan", ARTISANS),
            ("character", CHARACTERS), ("event", EVENTS))}
    by_deck = [ids[name] for name in DECK_NAMES]
    np = s._num_players
    return {
        "phase": PHASE_NAMES[s._phase],
        "current_player": s._cur,
        "round": s._round,
        "first": s._first_player,
        "first_round_1": s._first_player_round1,
        "order": list(s._order),
        "turn_index": s._turn_index,
        "final": s._final,
        "trigger": list(s._trigger),
        "decks": [[by_deck[d][x] for x in cards] for d, cards in enumerate(s._deck)],
        "discards": [[by_deck[d][x] for x in cards] for d, cards in enumerate(s._discards)],
        "visitor_bottom": [ids["visitor"][v] for v in s._visitor_bottom],
        "visitor_search": [ids["visitor"][v] for v in s._visitor_search],
        "box": [ids["character"][c] for c in s._character_box],
        "market": list(s._market),
        "display": list(s._display),
        "visitors": [list(s._visitors), list(s._visitor_pawn), list(s._visitor_romance)],
        "event": s._event,
        "event_modifiers": dict(sorted(s._event_modifiers.items())),
        "players": [
            {
                "coins": s._coins[p], "prestige": s._prestige[p], "allure": list(s._allure[p]),
                "feature_allure": list(s._feature_allure[p]),
                "hand": [ids["flower"][x] for x in s._hand[p]],
                "hand_face_up": [ids["flower"][x] for x in s._hand_open[p]],
                "features": [ids["feature"][x] for x in s._features[p]],
                "companion": s._companion[p], "character": s._character[p],
                "dealt_characters": list(s._dealt_characters[p]), "dealt_artisans": list(s._dealt_artisans[p]),
                "chose_character": s._chosen_character[p], "kept_artisans": list(s._kept_artisans[p]),
                "artisans": list(s._artisans[p]), "placed": list(s._placed[p]), "tilted": list(s._tilted[p]),
                "locations": list(s._artisan_locations[p]), "used_prestige": s._used_prestige[p],
                "romancing": s._romancing[p], "party": list(s._party[p]),
            }
            for p in range(np)
        ],
        "revealed": s._revealed,
        "char_used": s._character_used,
        "context": [s._ability_player, s._ability_slot, s._buys, s._optional, s._pay_feature, s._pay_space,
                    list(s._pay_need), s._pay_free, s._pair_allure, s._pair_first, s._swap_new, s._discard_left],
        "prompt": repr(s._prompt),
        "after_discard": repr(s._after_discard),
        "ability": repr(s._active_ability),
        "chance": [s._chance[0], list(s._chance[1])],
        "tasks": [repr(t) for t in s._tasks],
    }
