"""The outcome of a finished La Fleur match: scores, ranks, tie-breaks, breakdown, solo result.

Rulebook: La Fleur, "End-of-Game Scoring" (THE HOST OF THE GRANDE SOIRÉE:
most Prestige; a tie goes to the most total Allure; then the win is shared),
"Solo Mode" (GAME END) and "Solo Difficulties & Challenges".

``Outcome.details`` (JSON-able)::

    {"rounds": 8, "trigger": [2],            # players with 12+ Prestige when the Grande Soirée was triggered
     "first_player_round_1": 0,
     "breakdown": [{"player": 0, "seat": 0, "automaton": false, "prestige_before_end": 14,
                    "game_end_features": 3, "coins_bonus": 1, "flowers_bonus": 2, "total": 20,
                    "total_allure": 17, "allure": {"architecture": 3, ...}, "coins": 10,
                    "flower_cards": 6, "garden_features": 5, "artisans": 3,
                    "companion": "V07", "character": "C01"}, ...],
     "solo": {...}}                          # solo only: difficulty, opponent, result, challenges

Solo (Rulebook: "Solo Mode", GAME END: "If your Prestige score is higher, you
win!"; "Any rules not referenced here remain the same as in the normal 2-player
game"): ``result`` is ``"win"`` when the player's Prestige is higher than the
opponent's; on equal Prestige the 2-player tie-break applies ("the tied player
with the most total Allure on their Château board wins the game. If there is
still a tie, the win is shared"): ``"win"``, ``"loss"`` or ``"shared"`` (rules
revision 3; revisions 1 and 2 count equal Prestige as a ``"loss"``). ``ranks``
is ``(1,)`` for a win or a shared win and ``(2,)`` for a loss (second behind the
automaton); ``tie_breaks`` names the tie-break used, as in the multiplayer game;
``reason`` is the :class:`~games.lafleur.termination.LaFleurTermination`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from games.api import Outcome, ranks_from_keys
from games.lafleur.cards import ALLURE, CHARACTERS, VISITORS

if TYPE_CHECKING:
    from games.lafleur.state_protocol import LaFleurStateProtocol

CHALLENGES: Final[tuple[str, ...]] = (
    "Win with 20+ Prestige.",
    "Win with 10+ Coins at the end of the game.",
    "Win and be the player to trigger the final round.",
    "Win with 2 Allure types at 10+.",
    "Win with all your Allure types at 5+.",
    "Win with 6 or fewer Garden Features at the end of the game.",
    "Win with 7+ Flower cards in your hand at the end of the game.",
    "Win with 30+ Prestige.",
    "Win with only 2 Artisans at the end of the game.",
    "Win without ever activating your Character's abilities.",
)
"""The ten solo challenges (Rulebook: "Solo Difficulties & Challenges"), in order."""


def breakdown(s: LaFleurStateProtocol, p: int) -> dict[str, Any]:
    """Per-player score breakdown (see the module docstring)."""
    end = s._end
    allure = s._allure[p]
    return {
        "player": p,
        "seat": -1 if p == s._automaton else p,
        "automaton": p == s._automaton,
        "prestige_before_end": end["before"][p] if end else s._prestige[p],
        "game_end_features": end["game_end_features"][p] if end else 0,
        "coins_bonus": end["coins"][p] if end else 0,
        "flowers_bonus": end["flowers"][p] if end else 0,
        "total": s._prestige[p],
        "total_allure": sum(allure),
        "allure": dict(zip(ALLURE, allure, strict=True)),
        "coins": s._coins[p],
        "flower_cards": len(s._hand[p]),
        "garden_features": len(s._features[p]),
        "artisans": len(s._artisans[p]),
        "companion": VISITORS[s._companion[p]].id if s._companion[p] >= 0 else "",
        "character": CHARACTERS[s._character[p]].id if s._character[p] >= 0 else "",
    }


def challenges(s: LaFleurStateProtocol, won: bool) -> list[bool]:
    """Which of the ten solo challenges the player met (each needs a win)."""
    allure = s._allure[0]
    met = [
        s._prestige[0] >= 20,
        s._coins[0] >= 10,
        0 in s._trigger,
        sum(1 for a in allure if a >= 10) >= 2,
        min(allure) >= 5,
        len(s._features[0]) <= 6,
        len(s._hand[0]) >= 7,
        s._prestige[0] >= 30,
        len(s._artisans[0]) == 2,
        not s._character_used,
    ]
    return [won and m for m in met]


def build_outcome(s: LaFleurStateProtocol) -> Outcome:
    """The :class:`games.api.Outcome` of a terminal state."""
    np = s._num_players
    prestige = s._prestige
    keys = [(prestige[p], sum(s._allure[p])) for p in range(np)]
    tie_breaks: list[str] = []
    if len(set(prestige)) < np:
        tie_breaks.append("most total Allure")
        if len(set(keys)) < np:
            top = max(keys)
            tie_breaks.append("shared win" if keys.count(top) > 1 else "shared rank")
    details: dict[str, Any] = {
        "rounds": s._round,
        "trigger": list(s._trigger),
        "first_player_round_1": s._first_player_round1,
        "breakdown": [breakdown(s, p) for p in range(np)],
    }
    reason = s._end_reason
    assert reason is not None, "build_outcome() of a game that has not ended"
    if not s._solo:
        return Outcome(tuple(prestige), ranks_from_keys(keys), reason, tuple(tie_breaks), details)
    # Rulebook: "Solo Mode", GAME END: "If your Prestige score is higher, you win!"; equal Prestige
    # goes to the 2-player tie-break, most total Allure, then a shared win (decision 26, rules
    # revision 3; revisions 1 and 2 count equal Prestige as a loss).
    result, solo_ties = solo_result(keys[0], keys[1], s.game.rules_revision)
    won = result != "loss"
    met = challenges(s, won)
    details["solo"] = {
        "difficulty": s._difficulty,
        "opponent_character": CHARACTERS[s._character[1]].id,
        "opponent_score": prestige[1],
        "result": result,
        "challenges": [{"number": i + 1, "text": CHALLENGES[i], "achieved": m} for i, m in enumerate(met)],
        "achievements": [i + 1 for i, m in enumerate(met) if m],
    }
    # The seat's rank against the automaton: 1 = won, 2 = the opponent won (a lost solo game is
    # never reported as rank 1). Who won is data (``details["solo"]["result"]``); ``reason`` stays
    # the Termination (why the game ended).
    return Outcome((prestige[0],), (1 if won else 2,), reason, solo_ties, details)


def solo_result(player: tuple[int, int], opponent: tuple[int, int], revision: int) -> tuple[str, tuple[str, ...]]:
    """The solo result and the tie-breaks used, from (Prestige, total Allure) of the player and the opponent.

    Rulebook: "Solo Mode", GAME END ("If your Prestige score is higher, you win!") and, from rules
    revision 3, "End-of-Game Scoring", THE HOST OF THE GRANDE SOIRÉE ("If there is a tie, the tied
    player with the most total Allure on their Château board wins the game. If there is still a
    tie, the win is shared"), which "Solo Mode" keeps ("Any rules not referenced here remain the
    same as in the normal 2-player game"). Returns ``("win" | "loss" | "shared", tie_breaks)``;
    before revision 3 equal Prestige is a ``"loss"`` with no tie-break.
    """
    if player[0] != opponent[0]:
        return ("win" if player[0] > opponent[0] else "loss"), ()
    if revision < 3:
        return "loss", ()
    if player[1] != opponent[1]:
        return ("win" if player[1] > opponent[1] else "loss"), ("most total Allure",)
    return "shared", ("most total Allure", "shared win")
