"""How the stand-in components of ``cards.json`` were designed, as code.

No public component list of Flowar exists. This module writes ``cards.json``
from the rules of section B of the publicly known Flowar card list, as
rebalanced by simulation (``docs/rules/flowar.md``), plus the values the
rulebook prints. ``cards.json`` is the source of truth the engine loads; this
module documents and reproduces it::

    .venv/bin/python -m games.flowar.standins          # rewrite cards.json
    .venv/bin/python -m games.flowar.standins --check  # exit 1 if cards.json differs

Design rules (stand-in unless marked *rulebook*):

* Kingdoms and transport: K1 Graceful Rain (name: *rulebook*) {1, 2}, K2 {2, 3},
  K3 {3, 4} Coins, which fits every example (a 1-Coin means; Graceful Rain's
  dearest is 2; a 3-Coin means; Jan's 2 + 3 = 5).
* Flower cards: 10 per colour, 6 with one Basket and 4 with two (70 Baskets).
* Contracts (46): sizes 1x8, 2x14, 3x14, 4x10; 6 per means (sizes 1,2,2,3,3,4)
  and 10 linked to a kingdom. Coins = 2 x Baskets + (cost - 1), one Coin less
  for a kingdom link. MP from -2 to +3 by size and Coins. Colours rotate.
* Guild numbers 1-5 in the rulebook's order (actions and prices: *rulebook*).
* Torch table 1, 2, 4, 6, 9 for 1-5 Torches (3 more each after: *rulebook*);
  Coin->MP rates 5, 4, 3, 2 by round (cap 10 MP: *rulebook*); Favor 2's table.
* Taxus cards: the six kinds of the rulebook, 4/3/3/1/2/3 (market, travel,
  contracts, torch-and-reveal, loan, torches).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("cards.json")
COLOURS = ("blue", "white", "green", "purple", "yellow")

KINGDOMS = (
    ("K1", "Graceful Rain", "rulebook", (("K1a", "Cart", 1), ("K1b", "Riverboat", 2))),
    ("K2", "Mossvale", "stand-in", (("K2a", "Horse", 2), ("K2b", "Barge", 3))),
    ("K3", "Ember Reach", "stand-in", (("K3a", "Airship", 3), ("K3b", "Caravan", 4))),
)
TAXUS_MIX = (("market", 4), ("travel", 3), ("contracts", 3), ("torch_and_reveal", 1), ("loan", 2), ("torches", 3))
FAVORS = (
    (1, "placement", "free_placement", "When placing a Worker on the Main Board, do not pay for its placement cost."),
    (2, "layoff", "layoff_table", "When firing Workers, follow this new reward table instead of the one in the Fellowship Petal."),
    (3, "acquire", "free_pick", "When obtaining flowers or contracts, you can choose any 2 Contract Cards or 3 Flower Cards from the grid instead of choosing a row or a column."),
    (4, "delivery", "free_transport", "When fulfilling Contracts, do not pay for transportation costs."),
    (5, "hire", "free_hire", "You can hire a Worker at 0 costs instead of paying 5 Coins. Remember: you can only hire 1 Worker each Round."),
    (6, "delivery", "mp_per_contract", "When fulfilling Contracts, obtain 2 additional MP for each fulfilled Contract. When fulfilling 3 Contracts, you get 6 additional MP."),
    (7, "payoff", "cheap_payoff", "Pay 6 Coins instead of 8 when paying back a Loan."),
    (8, "delivery", "contract_as_basket", "When fulfilling Contracts, use a previously fulfilled contract as a Flower Basket of your choice."),
    (9, "placement", "any_worker", "When placing a Worker, choose any Action Space as if your Worker were the required type of Workers for that space."),
    (10, "now", "no_wither", "Your flowers do not wither at the end of this Round."),
    (11, "layoff", "no_torches", "When firing Workers, do not take any Torches of Discontent."),
    (12, "sell", "double_sale", "When selling your flowers, gain 2 Coins for each Basket instead of 1 Coin."),
    (13, "now", "own_guild_action", "Take the action of your Guild Tile without placing any Worker. You can do this even if that Action Space is already occupied. You still have to place a Worker this turn (this action is mandatory)."),
    (14, "now", "fellowship_action", "Take the action of the Guild Tile of the Fellowship Petal without placing any Worker. You can do this even if that Action Space is already occupied. As you are not placing any Worker, you do not have to pay its cost to take the action. However, you still have to place a Worker this turn (this action is mandatory)."),
    (15, "now", "coins_per_torch", "Gain 2 Coins for each Torch of Discontent in your supply."),
    (16, "now", "big_loan", "When taking out a Loan, obtain 7 Coins instead of 5."),
    (17, "placement", "second_worker", "You can place a second Worker either on the Action Space of your Guild Tile or on the Action Space of the Guild Tile of the Fellowship Petal (paying its cost)."),
    (18, "strike", "strike_immunity", "In case a strike is called, you do not have to pay your Workers to keep them from joining the strike."),
    (19, "now", "swap_worker", "Exchange a Worker from your Supply with one in the Strike Area. This could lead to a strike or call it off."),
    (20, "now", "mp_for_coins", "You may spend up to 3 MP to obtain 3 Coins per MP."),
)
FAVOR_PARAMS: dict[int, dict[str, Any]] = {
    2: {"table": {"1": 4, "2_same": 8, "2_different": 10, "3_same": 12, "3_two_types": 13, "3_different": 15},
        "table_provenance": "stand-in"},
    6: {"mp": 2}, 7: {"coins": 6}, 12: {"coins_per_basket": 2}, 15: {"coins_per_torch": 2},
    16: {"coins": 7}, 20: {"max_mp": 3, "coins_per_mp": 3},
}
GUILDS = (("coins", 3, 5), ("take_contract", 1, 4), ("return_torch", 1, 3), ("take_flower", 1, 2), ("mp", 2, 1))
NOTES = (
    "No public component list of Flowar is known. Values printed in the rulebook have provenance 'rulebook'; "
    "everything else is a 'stand-in' designed from the publicly known Flowar card list, section B. "
    "Written by games/flowar/standins.py (its docstring states the design rules).",
    "Ids (F01, C01, T01, K1, K1a) are ours. Colours: blue, white, green, purple, yellow "
    "(Rulebook: 'Game Setup', step 5).",
    "Flower cards: 10 per colour, 6 with one Basket and 4 with two Baskets of the same colour (70 Baskets).",
    "Contracts: sizes 1x8, 2x14, 3x14, 4x10 Baskets; 36 linked to a means of transport (6 per means: sizes "
    "1,2,2,3,3,4), 10 to a kingdom (K1: 1,2,3,4; K2: 1,3,4; K3: 2,4,4). Coins = 2 x Baskets + (transport cost - 1) "
    "for a means; 2 x Baskets + (dearest means - 2) for a kingdom (one Coin less: it may use either means). MP: "
    "1 Basket +2 (+3 when the transport costs 3 or more); 2 Baskets +1 (the second card of a pair 0); 3 Baskets 0 "
    "(-1 at 9+ Coins); 4 Baskets -1 (-2 at 10+ Coins). Colours rotate so that each colour appears 23-25 times and "
    "every 3-4 Basket Contract has 2+ colours.",
    "Taxus cards: the six kinds of the rulebook; the mix (4 market, 3 travel, 3 contracts, 1 torch-and-reveal, "
    "2 loan, 3 torches) was rebalanced by simulation from the publicly known card list's proposal (4/3/4/2/1/2), under "
    "which Taxus scored about 52 MP against about 31 for the greedy reference bot; see docs/rules/flowar.md.",
    "Jan's turn (Rulebook: 'Turn Example'): C15 (K2a, 2 Baskets, 5 Coins, 0 MP) and C22 (K2b, 3 Baskets, 8 Coins, "
    "0 MP) pay 13 Coins; with a 5 Efficiency Tile, one fresh-only delivery and Favor 6 they give 15 MP.",
)


def contracts(cost: dict[str, int], dearest: dict[str, int]) -> list[dict[str, Any]]:
    """The 46 stand-in Contracts (see the module docstring)."""
    specs = [("means", m, s) for m in ("K1a", "K1b", "K2a", "K2b", "K3a", "K3b") for s in (1, 2, 2, 3, 3, 4)]
    specs += [("kingdom", k, s) for k, sizes in (("K1", (1, 2, 3, 4)), ("K2", (1, 3, 4)), ("K3", (2, 4, 4)))
              for s in sizes]
    first = {1: (0,), 2: (0, 0), 3: (0, 0, 1), 4: (0, 0, 1, 2)}
    second = {2: (0, 1), 3: (0, 1, 2), 4: (0, 0, 1, 1)}
    out = []
    start = 0
    for n, (kind, link, size) in enumerate(specs):
        dup = (kind, link, size) in specs[:n]  # the second card of a same-size pair
        pattern = second[size] if dup and size in second else first[size]
        colours = sorted((COLOURS[(start + d) % 5] for d in pattern), key=COLOURS.index)
        start = (start + (2 if size > 1 else 1)) % 5
        coins = 2 * size + (cost[link] - 1 if kind == "means" else dearest[link] - 2)
        transport = cost[link] if kind == "means" else dearest[link]
        if size == 1:
            mp = 3 if transport >= 3 else 2
        elif size == 2:
            mp = 0 if dup else 1
        elif size == 3:
            mp = -1 if coins >= 9 else 0
        else:
            mp = -2 if coins >= 10 else -1
        rec: dict[str, Any] = {"id": f"C{n + 1:02d}", "flowers": colours, "coins": coins, "mp": mp,
                               "provenance": "stand-in"}
        rec["means" if kind == "means" else "kingdom"] = link
        out.append(rec)
    return out


def taxus() -> list[dict[str, Any]]:
    """The 16 stand-in Taxus cards (mix :data:`TAXUS_MIX`)."""
    lines = {"market": ("row1", "row2", "row3", "col2"), "contracts": ("row1", "row2", "col1")}
    out: list[dict[str, Any]] = []
    for kind, count in TAXUS_MIX:
        for i in range(count):
            rec: dict[str, Any] = {"id": f"T{len(out) + 1:02d}", "kind": kind}
            if kind == "market":
                rec.update(workers={"trenti": 1}, space="market", line=lines["market"][i])
            elif kind == "travel":
                rec.update(workers={"fox": 1}, space=f"travel_K{i + 1}", kingdom=f"K{i + 1}")
            elif kind == "contracts":
                rec.update(workers={"human": 1}, space="contract", line=lines["contracts"][i])
            elif kind == "torch_and_reveal":
                rec.update(workers={"trenti": 1}, space="market")
            elif kind == "loan":
                rec.update(workers={"human": 2}, space="contract")
            else:
                rec.update(workers={"fox": 3}, space="every_kingdom", torches=2)
            rec["provenance"] = "stand-in"
            out.append(rec)
    return out


def build() -> dict[str, Any]:
    """The whole data file as a dict."""
    kingdoms = [
        {"id": k, "name": name, "provenance": prov,
         "means": [{"id": m, "name": mn, "cost": c, "provenance": "stand-in"} for m, mn, c in means]}
        for k, name, prov, means in KINGDOMS
    ]
    cost = {m: c for *_, means in KINGDOMS for m, _, c in means}
    dearest = {k: max(c for _, _, c in means) for k, _, _, means in KINGDOMS}
    flowers = [
        {"id": f"F{10 * ci + j + 1:02d}", "colour": colour, "baskets": 1 if j < 6 else 2, "provenance": "stand-in"}
        for ci, colour in enumerate(COLOURS) for j in range(10)
    ]
    favors = [{"id": i, "timing": t, "effect": e, "params": FAVOR_PARAMS.get(i, {}), "text": txt,
               "first_game": i <= 6, "provenance": "rulebook"} for i, t, e, txt in FAVORS]
    guilds = [{"number": n + 1, "action": a, "amount": amt, "flower_price": price, "provenance": "rulebook",
               "number_provenance": "stand-in"} for n, (a, amt, price) in enumerate(GUILDS)]
    return {
        "format": "parterre-cards/1",
        "game": "flowar",
        "notes": list(NOTES),
        "kingdoms": kingdoms,
        "flowers": flowers,
        "contracts": contracts(cost, dearest),
        "favors": favors,
        "guilds": guilds,
        "taxus": taxus(),
        "efficiency_tiles": {"values": {"3": 4, "4": 4, "5": 4}, "provenance": "rulebook"},
        "loans": {"cards": 8, "coins": 5, "torches": 1, "max_per_player": 2, "payoff": 8, "unpaid_mp": -3,
                  "provenance": "rulebook"},
        "layoff": {"table": {"1": 3, "2_same": 6, "2_different": 7, "3_same": 9, "3_two_types": 10,
                             "3_different": 12}, "provenance": "rulebook"},
        "torches": {"cumulative_mp_lost": [0, 1, 2, 4, 6, 9], "provenance": "stand-in", "after_fifth": 3,
                    "after_fifth_provenance": "rulebook", "none_bonus": 3, "none_bonus_provenance": "rulebook",
                    "count": 20},
        "exchange": {"coins_per_mp": [5, 4, 3, 2], "max_mp": 10, "provenance": "stand-in",
                     "max_mp_provenance": "rulebook"},
        "workers": {"per_type": 9, "removed_per_type": {"2": 3, "3": 2, "4": 0, "1": 0}, "per_guild": 5,
                    "provenance": "rulebook"},
        "starting_coins": {"by_turn_position": [10, 11, 12, 13], "provenance": "rulebook"},
    }


def render(data: dict[str, Any]) -> str:
    """JSON text with one record per line (diff-friendly)."""
    out = ["{"]
    keys = list(data)
    for n, key in enumerate(keys):
        value = data[key]
        end = "," if n < len(keys) - 1 else ""
        if isinstance(value, list):
            out.append(f'  "{key}": [')
            for j, rec in enumerate(value):
                out.append("    " + json.dumps(rec, ensure_ascii=False) + ("," if j < len(value) - 1 else ""))
            out.append("  ]" + end)
        else:
            out.append(f'  "{key}": ' + json.dumps(value, ensure_ascii=False) + end)
    out.append("}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) ``cards.json``; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when cards.json differs")
    ns = parser.parse_args(argv)
    text = render(build())
    if ns.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("cards.json is up to date" if same else "cards.json differs from games/flowar/standins.py")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
