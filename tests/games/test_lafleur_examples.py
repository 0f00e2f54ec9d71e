"""Every worked example of the La Fleur rulebook, with its numbers.

Each test names its rulebook section. Every position is reached by play from
a new match, with explicit chance outcomes (games.lafleur.script queues):
nothing is written into a state. (Other La Fleur tests still set coins or the
market directly: tests/games/test_lafleur_rules.py's Flower Market and Artisan Guild
checks, not these examples.)
"""

from __future__ import annotations

from games.lafleur import actions as A
from games.lafleur.cards import FEATURES
from games.lafleur.script import (
    card_id,
    new_match,
    place_everyone_on_coin,
    play,
)
from games.lafleur.state import LaFleurState

PAVILION = card_id("Pavilion")
EACH2 = next(f.id for f in FEATURES if f.ability.condition == {"q": "min_allure", "min": 2})
QUINCUNX, CASCADE, OBELISK, SUNDIAL = EACH2, card_id("Cascade"), card_id("Obelisk"), card_id("Sundial")
# Characters whose abilities stay silent in these positions (Comtesse Solène, Abbé Fulbert).
QUIET = {"character": ["C08", "C01", "C09", "C02", "C03", "C04", "C05", "C06"]}


def _phase(state: LaFleurState) -> str:
    return str(state.observation(None)["phase"])


def _option(s: LaFleurState, card: str) -> A.Choose:
    """The option of the pending prompt that names ``card``."""
    return A.Choose(next(i for i, t in enumerate(s.observation(0)["prompt"]["options"]) if t.startswith(card)))


def test_visitor_count_example() -> None:
    """Rulebook: "Start of Round", 3. VISITOR CARDS, reached by play: 3 players, one Visitor per
    player; Ronan (seat 0) at 8 Prestige -> 5 Visitors; at 12+ -> 6 (one per threshold).

    Round 1: Ronan buys Obelisk (Flowers x2) and takes the Prestige location; Delphine (+1),
    Camille (+1, +1 card: Rosemary) and Lise (3 Coins for +2) visit him: 5. Round 2: Parterre
    (Architecture x2), Prestige; André and Gabrielle (+1 each) visit him, two Water Visitors
    tie (no one): 8. Round 3: Belvedere (Paths x2), Prestige; Baptiste, Kai and Lucien (+1
    each), Catherine and Céleste tie; his Character adds +1 for 3 Game End Garden Features: 13.
    The others only take Coins; chance outcomes are chosen, Events change nothing here.
    """
    q = {"character": ["C08", "C01", "C09", "C02", "C03", "C04"],
         "artisan": ["A02", "A06", "A01", "A16", "A20", "A03", "A08", "A07", "A04"],
         "flower": ["F57", "F51", "F01", "F02", "F03", "F04", "F05", "F06", "F07"],
         "feature": [OBELISK, "G01", "G06"], "visitor": ["V20", "V19", "V24"]}
    s = new_match("lafleur(players=3)", first=0, queues=q, characters=["C08", "C09", "C03"],
                  artisans=[("A02", "A06"), ("A16", "A20"), ("A07", "A08")])
    later = {"event": ["E11", "E12", "E14"], "flower": ["F53"],
             "visitor": ["V01", "V04", "V13", "V14", "V34", "V32", "V33", "V07", "V15"]}
    assert len(s.observation(0)["visitors"]) == 3  # round 1: one per player
    play(s, A.Place("A02", "garden_features"), A.BuyFeature(1, OBELISK), A.PayFlower("F57", ""),
         A.Place("A16", "coin"), A.Place("A07", "coin"), A.Place("A06", "prestige"), A.Place("A20", "coin"),
         A.Place("A08", "coin"), queues=later)
    play(s, _option(s, "V24"), A.YES, queues=later)  # Lise first, while Ronan still has his 3 Coins
    _settle(s, later)
    play(s, A.Place("A16", "coin"), A.Place("A07", "coin"), A.Place("A02", "garden_features"),
         A.BuyFeature(2, "G01"), A.PayFlower("F51", ""), A.Place("A20", "coin"), A.Place("A08", "coin"),
         A.Place("A06", "prestige"), queues=later)
    _settle(s, later)
    obs = s.observation(0)
    assert obs["round"] == 3 and [p["prestige"] for p in obs["players"]] == [8, 0, 0]
    assert len(obs["visitors"]) == 5  # 3 for 3 players + 1 for 4 Prestige + 1 for 8 Prestige
    play(s, A.Place("A07", "coin"), A.Place("A02", "garden_features"), A.BuyFeature(3, "G06"),
         A.PayFlower("F53", ""), A.Place("A16", "coin"), A.Place("A08", "coin"), A.Place("A06", "prestige"),
         A.Place("A20", "coin"), queues=later)
    _settle(s, later)
    obs = s.observation(0)
    assert obs["round"] == 4 and obs["players"][0]["prestige"] >= 12 and obs["grande_soiree"]
    assert len(obs["visitors"]) == 6  # 3 + one per threshold (4, 8, 12)


def test_garden_party_example() -> None:
    """Rulebook: "Garden Party Example", reached by play: Camille -> Aurora, André ties (no one),
    Louise Marie Madeleine -> James; Aurora (First Player) resolves first.

    Round 1 (Aurora first): Aurora (seat 0) buys Cascade (Flowers x2, Architecture) and Avenue
    (Paths x2, Flowers); James (seat 1) Greenhouse (Vistas x2, Water) and Statue (Water x2).
    Round 2: James buys Aviary (Vistas x2, Architecture); Aurora takes the Prestige location.
    Round 3 (Aurora first again): "Aurora currently has 1 Architecture Allure, 2 Path Allure,
    and 3 Flower Allure ... James has 1 Architecture Allure, 3 Water Allure, and 4 Vista
    Allure"; Aurora's 4 Prestige adds a third Visitor (the example's three, chosen chance
    outcomes), and everybody takes Coins.
    """
    q = {"character": ["C08", "C01", "C09", "C02"], "artisan": ["A02", "A06", "A01", "A18", "A12", "A03"],
         "flower": ["F57", "F53", "F01", "F59", "F55", "F60"],
         "feature": [CASCADE, "G09", "G24", "G11", "G22"], "visitor": ["V20", "V07"]}  # round 1: +1 Prestige each
    s = new_match("lafleur(players=2)", first=0, queues=q, characters=["C08", "C09"],
                  artisans=[("A02", "A06"), ("A12", "A18")])
    later = {"event": ["E11", "E12"], "visitor": ["V10", "V21", "V19", "V01", "V25"]}
    play(s, A.Place("A02", "garden_features"), A.BuyFeature(1, CASCADE), A.PayFlower("F57", ""),
         A.PayArtisan("A02", "architecture"),
         A.Place("A18", "garden_features"), A.BuyFeature(3, "G24"), A.PayFlower("F59", ""),
         A.PayArtisan("A12", "water"),
         A.Place("A06", "garden_features"), A.BuyFeature(2, "G09"), A.PayFlower("F53", ""),
         A.PayDiscount("flowers"),
         A.Place("A12", "garden_features"), A.BuyFeature(4, "G11"), A.PayFlower("F55", ""), queues=later)
    _settle(s, later)
    play(s, A.Place("A18", "garden_features"), A.BuyFeature(5, "G22"), A.PayFlower("F60", ""),
         A.PayDiscount("architecture"), A.Place("A02", "prestige"), A.Place("A12", "coin"), A.Place("A06", "coin"),
         queues=later)
    _settle(s, later)
    obs = s.observation(0)
    aurora, james = obs["players"]
    assert obs["round"] == 3 and obs["first_player"] == 0
    assert aurora["allure"] == {"architecture": 1, "paths": 2, "water": 0, "flowers": 3, "vistas": 0}
    assert james["allure"] == {"architecture": 1, "paths": 0, "water": 3, "flowers": 0, "vistas": 4}
    assert [v["card"] for v in obs["visitors"]] == ["V19", "V01", "V25"]  # Camille, André, Louise Marie Madeleine
    assert s.destinations() == [0, -1, 1]
    p0, c1, hand0 = aurora["prestige"], james["coins"] + 4, aurora["cards_in_hand"]  # two Coin placements each: +4
    place_everyone_on_coin(s, later)
    # Aurora holds the First Player pawn: she resolves first: +1 Prestige, then +1 Flower card.
    obs = s.observation(0)
    assert s.current_player() == 0 and obs["phase"] == "take_flower"
    assert obs["players"][0]["prestige"] == p0 + 1
    assert obs["players"][0]["visitors"] == ["V19"] and obs["players"][1]["visitors"] == ["V25"]
    assert obs["players"][1]["coins"] == c1  # James has not resolved yet
    take = s.legal_actions()[0]
    assert isinstance(take, A.TakeFlower) and take.space == 1  # from the Flower Market, at no cost
    play(s, take, queues=later)
    obs = s.observation(0)
    assert obs["players"][0]["cards_in_hand"] == hand0 + 1
    # Louise Marie Madeleine: +2 Coins; then (End of Round) Greenhouse: +1 Coin for 3 of his 4 Vistas.
    assert obs["players"][1]["coins"] == c1 + 2 + 1
    assert "V01" in obs["visitor_discard"]  # André stayed in the Visitor area, then was discarded


def _aurore_end_of_round_3(third_round_visitors: list[str]) -> tuple[LaFleurState, dict[str, list[str]]]:
    """By play, 2 players: Aurora (seat 0, Aurore: the example's Character; Florist and Sculptor,
    who each pay 1 Allure of any type at Garden Features) buys Obelisk and Cascade (round 1),
    Pergola (Vistas x2, Flowers) and Nymphaeum (Flowers x2, Vistas; round 2), Apiary
    (Architecture, Vistas; round 3): "7 Flower Allure", "4 Vista Allure". Jules (round 1) and
    ``third_round_visitors`` bring Flower cards; Aurore's own gains at the end of rounds 1-2 too.
    Returns the state at Aurora's first Character prompt of round 3 (a Flower card to take)."""
    q = {"character": ["C01", "C02", "C09", "C03"], "artisan": ["A13", "A18", "A01", "A16", "A20", "A03"],
         "flower": ["F57", "F58", "F31", "F01", "F02", "F03"],
         "feature": [OBELISK, CASCADE, "G48", "G52", "G29"], "visitor": ["V23", "V13"]}
    s = new_match("lafleur(players=2)", first=0, queues=q, characters=["C01", "C09"],
                  artisans=[("A13", "A18"), ("A16", "A20")])
    later = {"event": ["E11", "E12"], "flower": ["F59", "F60", "F43", "F11", "F12"],
             "visitor": ["V14", "V08", *third_round_visitors]}
    play(s, A.Place("A13", "garden_features"), A.BuyFeature(1, OBELISK), A.PayFlower("F57", ""),
         A.Place("A16", "coin"), A.Place("A18", "garden_features"), A.BuyFeature(2, CASCADE),
         A.PayFlower("F58", ""), A.PayDiscount("architecture"), A.Place("A20", "coin"), queues=later)
    _settle(s, later)
    play(s, A.Place("A16", "coin"), A.Place("A13", "garden_features"), A.BuyFeature(4, "G52"),
         A.PayFlower("F59", ""), A.PayArtisan("A13", "flowers"), A.Place("A20", "coin"),
         A.Place("A18", "garden_features"), A.BuyFeature(3, "G48"), A.PayFlower("F31", ""),
         A.PayDiscount("flowers"), A.PayArtisan("A18", "vistas"), queues=later)
    _settle(s, later)
    play(s, A.Place("A18", "garden_features"), A.BuyFeature(5, "G29"), A.PayFlower("F43", ""),
         A.PayDiscount("architecture"), A.Place("A16", "coin"), A.Place("A13", "coin"), A.Place("A20", "coin"),
         queues=later)
    while s.observation(0)["prompt"]["source"] != "C01":  # the round-3 Visitors' Flower cards
        assert _phase(s) == "take_flower"
        play(s, A.TakeFlower(0, ""), queues=later)
    me = s.observation(0)["players"][0]
    assert me["allure"]["flowers"] == 7 and me["allure"]["vistas"] == 4
    return s, later


def test_character_ability_example() -> None:
    """Rulebook: "End of Round", CHARACTER ABILITY EXAMPLE, reached by play: 7 Flower -> +2
    Flower cards, 4 Vista -> +1 Coin, 6 cards in hand -> +1 Prestige (Aurora ends round 3 with
    6 cards: Perrine's 2 and Octave's 1 on top of her 3)."""
    s, later = _aurore_end_of_round_3(["V29", "V28"])  # Perrine (+2 cards), Octave (+1 Prestige, +1 card)
    me = s.observation(0)["players"][0]
    assert me["character"] == "C01" and me["cards_in_hand"] == 6
    before_p, before_c = me["prestige"], me["coins"]
    play(s, A.TakeFlower(0, ""), A.TakeFlower(0, ""), queues=later)  # first ability: two Flower cards
    me = s.observation(0)["players"][0]
    assert me["cards_in_hand"] == 8
    assert me["coins"] == before_c + 1 and me["prestige"] == before_p + 1


def test_character_abilities_resolve_in_order() -> None:
    """Decision 28, reached by play: "Aurora checks each of her Character's abilities" in order.
    With 4 Flower cards at the end of round 3, the first ability's +2 make 6, so the third ("+1
    Prestige if you have 5+ Flower cards in hand") pays too; judged all at once it would not."""
    s, later = _aurore_end_of_round_3(["V27", "V15"])  # Noémie (+1 Coin, +1 card), Céleste (a tie)
    me = s.observation(0)["players"][0]
    assert me["cards_in_hand"] == 4
    before_p, before_c = me["prestige"], me["coins"]
    play(s, A.TakeFlower(0, ""), A.TakeFlower(0, ""), queues=later)
    me = s.observation(0)["players"][0]
    assert me["cards_in_hand"] == 6
    assert me["coins"] == before_c + 1 and me["prestige"] == before_p + 1


def _pavilion_position(hand: list[str], artisans: tuple[str, str]) -> LaFleurState:
    """Round 1 by play: seat 0 is dealt ``hand`` (filled up to the 3 starting cards with
    single-Architecture cards) and ``artisans``; Pavilion is the first Garden Feature revealed."""
    dealt = (hand + ["F02", "F03", "F04"])[:3]
    queues = {"artisan": [*artisans, "A14", "A10", "A11", "A12"], "flower": [*dealt, "F05", "F06", "F07"],
              "feature": [PAVILION], **QUIET}
    s = new_match("lafleur(players=2)", first=0, queues=queues, characters=["C08", "C09"],
                  artisans=[artisans, ("A10", "A11")])
    assert s.observation(0)["players"][0]["hand"] == dealt
    assert s.observation(0)["garden_features"][0]["card"] == PAVILION  # Vista, Path, Architecture x2
    return s


def test_pavilion_purchase_example_flowers() -> None:
    """Rulebook: "Purchasing a Garden Feature", PURCHASING EXAMPLE and ALLURE TRACKER EXAMPLE."""
    # Double Pink Scotch Briar Rose (Vista + Architecture), a Wild card, Common Ivy (Architecture x2).
    s = _pavilion_position(["F61", "F81", "F51"], ("A09", "A13"))  # Water and Flower Artisans: no help
    art = s.observation(0)["players"][0]["artisans"][0]["card"]
    play(s, A.Place(art, "garden_features"), A.BuyFeature(1, PAVILION))
    assert s.observation(0)["purchase"]["remaining"] == {
        "architecture": 2, "paths": 1, "water": 0, "flowers": 0, "vistas": 1}
    play(s, A.PayFlower("F61", ""))  # pays the Vista and one Architecture
    assert s.observation(0)["purchase"]["remaining"]["vistas"] == 0
    assert s.observation(0)["purchase"]["remaining"]["architecture"] == 1
    play(s, A.PayFlower("F81", "paths"))  # the Wild card pays the Path
    assert A.PayFlower("F51", "") in s.legal_actions()
    play(s, A.PayFlower("F51", ""))  # Common Ivy pays the last Architecture; its second is lost
    me = s.observation(0)["players"][0]
    assert me["hand"] == [] and me["garden_features"] == [PAVILION]
    # Allure tracker: Vista +1, Path +1, Architecture +2.
    assert me["allure"] == {"architecture": 2, "paths": 1, "water": 0, "flowers": 0, "vistas": 1}
    assert s.observation(0)["garden_features"][0]["card"] == ""  # the space stays empty until the next round


def test_pavilion_purchase_example_artisans() -> None:
    """Rulebook: "Purchasing a Garden Feature", ARTISAN EXAMPLE: Common Ivy + Landscaper + Painter."""
    s = _pavilion_position(["F51"], ("A05", "A17"))  # Landscaper (Paths), Painter (Vistas)
    assert {a["card"] for a in s.observation(0)["players"][0]["artisans"]} == {"A05", "A17"}
    play(s, A.Place("A05", "garden_features"), A.BuyFeature(1, PAVILION))
    play(s, A.PayFlower("F51", ""))
    # The Painter's pawn is still on the Château board: it may pay all the same.
    play(s, A.PayArtisan("A05", "paths"), A.PayArtisan("A17", "vistas"))
    me = s.observation(0)["players"][0]
    assert me["garden_features"] == [PAVILION]
    assert me["artisans"][0]["tilted"] is True and me["artisans"][1]["tilted"] is True
    # Artisan Allure does not count toward the Château: only the Pavilion's symbols do.
    assert me["total_allure"] == 4


def _settle(s: LaFleurState, queues: dict[str, list[str]]) -> None:
    """Answer the prompts of a Garden Party and an End of Round: the first option of an
    order, decline every offer, take gained Flower cards from the top of the deck."""
    while not s.is_terminal():
        phase = _phase(s)
        if phase == "choose":
            play(s, A.Choose(0), queues=queues)
        elif phase == "accept":
            play(s, A.NO, queues=queues)
        elif phase == "take_flower":
            play(s, A.TakeFlower(0, ""), queues=queues)
        else:
            return


def test_end_game_scoring_example() -> None:
    """Rulebook: "End-of-Game Scoring", END-GAME SCORING EXAMPLE, reached by play.

    James (seat 0, Comtesse Solène: +1 Prestige per 4 Flower Allure, +1 Flower card
    per 3 Architecture, +1 Prestige with 3+ Game End Garden Features) buys Obelisk
    (Flowers x2) and Cascade (Flowers x2, Architecture) in round 1, Quincunx
    (Architecture x2, Paths x2, Water) and Sundial (Vistas x2, Paths) in round 2:
    "4 Flower Allure", "only 1 Water Allure", 2+ of the other four. The Visitors,
    Flower cards and Events of every round are chosen chance outcomes; he reaches
    12 Prestige at the end of round 4, so round 5 is the Grande Soirée, which he ends
    with 14 Prestige, 10 Coins and 6 Flower cards: 14 -> 14 (Quincunx: only 1 Water)
    -> 15 (Cascade: 4 Flower Allure on Garden Features) -> 17 (Obelisk) -> 18 (10
    Coins) -> 20 (6 Flower cards). Aurora (seat 1) only takes Coins here: she ends
    below James, not at the example's 19 (not reproduced).
    """
    q = {"character": ["C08", "C01", "C09", "C02"], "artisan": ["A02", "A06", "A01", "A16", "A20", "A03"],
         "flower": ["F57", "F58", "F51", "F01", "F02", "F03"],  # Damask Rose, Jonquil (Flowers x2), Common Ivy
         "feature": [OBELISK, CASCADE, QUINCUNX, SUNDIAL], "visitor": ["V23", "V13"]}  # Jules (+2 cards); a tie
    s = new_match("lafleur(players=2)", first=0, queues=q, characters=["C08", "C09"],
                  artisans=[("A02", "A06"), ("A16", "A20")])  # Mason, Surveyor (pay 1 of any type at Garden Features)
    later = {"flower": ["F25", "F59"],  # Jules: a Water card and Giant Onion (Vistas x2)
             "event": ["E11", "E12", "E14", "E15"],  # Events that change nothing here
             "visitor": ["V01", "V07",  # round 2: +1 Prestige each
                         "V02", "V03", "V06",  # round 3: +1 Coin +1 card, +2 Coins, a conversion declined
                         "V04", "V26", "V20",  # round 4: +1 Prestige +1 card, +1 Prestige, +1 Prestige
                         "V12", "V18", "V24", "V30", "V33"]}  # round 5: conversions declined; a tie
    james = lambda: s.observation(0)["players"][0]  # noqa: E731 - a one-line local helper
    # Round 1 (James first)
    play(s, A.Place("A02", "garden_features"), A.BuyFeature(1, OBELISK), A.PayFlower("F57", ""),
         A.Place("A16", "coin"), A.Place("A06", "garden_features"), A.BuyFeature(2, CASCADE),
         A.PayFlower("F58", ""), A.PayArtisan("A02", "architecture"), A.Place("A20", "coin"), queues=later)
    _settle(s, later)
    # Round 2 (Aurora first)
    play(s, A.Place("A16", "coin"), A.Place("A02", "garden_features"), A.BuyFeature(3, QUINCUNX),
         A.PayFlower("F51", ""), A.PayFlower("F25", ""), A.PayArtisan("A06", "paths"), A.PayDiscount("paths"),
         A.Place("A20", "coin"), A.Place("A06", "garden_features"), A.BuyFeature(4, SUNDIAL),
         A.PayFlower("F59", ""), A.PayDiscount("paths"), queues=later)
    _settle(s, later)
    assert james()["allure"] == {"architecture": 3, "paths": 3, "water": 1, "flowers": 4, "vistas": 2}
    assert james()["garden_features"] == [OBELISK, CASCADE, QUINCUNX, SUNDIAL]
    # Round 3 (James first): Coins twice. Round 4 (Aurora first): James buys nothing.
    play(s, A.Place("A02", "coin"), A.Place("A16", "coin"), A.Place("A06", "coin"), A.Place("A20", "coin"),
         queues=later)
    _settle(s, later)
    play(s, A.Place("A16", "coin"), A.Place("A02", "garden_features"), A.DONE, A.Place("A20", "coin"),
         A.Place("A06", "garden_features"), A.DONE, queues=later)
    _settle(s, later)
    obs = s.observation(0)
    assert obs["grande_soiree"] and obs["round"] == 5 and james()["prestige"] == 12
    # Round 5, the Grande Soirée (James first): James buys nothing.
    play(s, A.Place("A02", "garden_features"), A.DONE, A.Place("A16", "coin"),
         A.Place("A06", "garden_features"), A.DONE, A.Place("A20", "coin"), queues=later)
    _settle(s, later)
    assert s.is_terminal()
    out = s.outcome()
    b = out.details["breakdown"][0]
    assert b["prestige_before_end"] == 14
    assert b["game_end_features"] == 0 + 1 + 2  # Quincunx (only 1 Water), Cascade (4 // 3), Obelisk (4+)
    assert b["coins"] == 10 and b["coins_bonus"] == 1
    assert b["flower_cards"] == 6 and b["flowers_bonus"] == 2
    assert out.scores[0] == 20 and out.scores[1] < 20 and out.ranks == (1, 2)
    assert out.reason == "Grande Soirée complete"


