"""Garden Party effects resolve in the order the player chooses (docs/rules/la-fleur.md).

Rulebook: "Garden Party", VISITORS: each player "resolves the text on each of
the Visitor cards in their play area (including their Companion if they have
one) in any order they choose", and "WHEN VISITED" ABILITIES are resolved "at
this time". Every position is reached by play from a new match, chance
outcomes chosen (games.lafleur.script queues); nothing is written into the state.
"""

from __future__ import annotations

from games.lafleur import actions as A
from games.lafleur.script import new_match, play
from games.lafleur.state import LaFleurState

ISABELLE, ADELE, LUCIEN = "V06", "V13", "V07"  # Architecture: pay 3 Coins, +2 Prestige; Water, Paths: +1 Prestige
GROTTO = "G05"  # Architecture x2, Paths, Water; When Visited: +1 Coin per Architecture Visitor
QUIET = ["C08", "C01", "C09", "C02"]  # Comtesse Solène and Abbé Fulbert stay silent here


def _grotto_party(visitors: list[str]) -> LaFleurState:
    """Seat 0 buys Grotto with Common Ivy (Architecture x2), a Path and a Water card, spends
    1 of its 3 Coins on a Flower card from the deck (2 left) and receives ``visitors``
    (its Architecture 2 and Water 1 beat seat 1's 0); seat 1 takes Coins twice."""
    q = {"character": QUIET, "flower": ["F51", "F13", "F25", "F02", "F03", "F04"], "feature": [GROTTO],
         "visitor": visitors, "artisan": ["A12", "A15", "A01", "A16", "A20", "A02"]}
    s = new_match("lafleur(players=2)", first=0, queues=q, characters=["C08", "C09"],
                  artisans=[("A12", "A15"), ("A16", "A20")])
    play(s, A.Place("A12", "garden_features"), A.BuyFeature(1, GROTTO),
         A.PayFlower("F51", ""), A.PayFlower("F13", ""), A.PayFlower("F25", ""),
         A.Place("A16", "coin"), A.Place("A15", "flower_market"), A.BuyFlower(0, ""), A.Place("A20", "coin"))
    assert s.observation(0)["players"][0]["garden_features"] == [GROTTO]
    return s


def _option(s: LaFleurState, card: str) -> A.Choose:
    options = s.observation(0)["prompt"]["options"]
    return A.Choose(next(i for i, text in enumerate(options) if text.startswith(card)))


def test_grotto_first_pays_for_isabelle() -> None:
    """The issue's counter-example: 2 Coins, Grotto, Isabelle. Grotto first: 2 + 1 = 3 Coins,
    enough for Isabelle's 3, so she is offered and pays +2 Prestige."""
    s = _grotto_party([ISABELLE, ADELE])
    obs = s.observation(0)
    assert obs["players"][0]["visitors"] == [ISABELLE, ADELE] and obs["players"][0]["coins"] == 2
    assert obs["phase"] == "choose" and obs["current_player"] == 0 and obs["prompt"]["kind"] == "order"
    assert len(obs["prompt"]["options"]) == 3  # Isabelle, Adèle, Grotto
    prestige = obs["players"][0]["prestige"]
    play(s, _option(s, GROTTO))
    assert s.observation(0)["players"][0]["coins"] == 3
    play(s, _option(s, ISABELLE))
    assert s.observation(0)["prompt"]["kind"] == "offer" and A.YES in s.legal_actions()
    play(s, A.YES)
    me = s.observation(0)["players"][0]
    assert me["coins"] == 0 and me["prestige"] == prestige + 2 + 1  # Isabelle, then Adèle (the last item)


def test_isabelle_first_cannot_pay() -> None:
    """The other order: Isabelle with 2 Coins cannot be paid, so nothing is offered; Adèle and
    Grotto are then left, whose order changes nothing: resolved without asking."""
    s = _grotto_party([ISABELLE, ADELE])
    me = s.observation(0)["players"][0]
    assert me["visitors"] == [ISABELLE, ADELE] and me["coins"] == 2
    prestige, rnd = me["prestige"], s.observation(0)["round"]
    play(s, _option(s, ISABELLE))
    obs = s.observation(0)
    assert obs["prompt"]["kind"] not in ("offer", "order")
    assert obs["players"][0]["coins"] == 2 + 1 and obs["players"][0]["prestige"] == prestige + 1
    assert obs["round"] == rnd + 1  # the Garden Party and the round are over


def test_fixed_gains_need_no_order_decision() -> None:
    """Adèle (+1 Prestige), Lucien (+1 Prestige) and Grotto (+1 Coin per Architecture Visitor:
    none) give the same in every order: no decision is asked, the round goes on."""
    s = _grotto_party([ADELE, LUCIEN])
    obs = s.observation(0)
    assert obs["round"] == 2 and obs["prompt"]["kind"] != "order"
    assert obs["players"][0]["coins"] == 2 and obs["players"][0]["prestige"] == 2
