"""The bot page shows the most-played opponents per game; the JSON keeps them all."""

from __future__ import annotations

from ladder.read import HeadToHead
from web.pages import H2H_SHOWN, top_opponents


def _row(game: str, opp: int, n: int) -> HeadToHead:
    return HeadToHead(game, opp, f"bot-{opp}", "1", n, n // 2, 0, n - n // 2, (n // 2) / n)


def test_each_game_keeps_its_most_played_opponents_in_order() -> None:
    # as BOT_HEAD_TO_HEAD_SQL returns them: by game, then most matches first
    rows = ([_row("flowar", o, 100 - o) for o in range(H2H_SHOWN + 7)]
            + [_row("lafleur", o, 9 - o) for o in range(3)])
    shown, hidden = top_opponents(rows, H2H_SHOWN)
    assert [h.opponent_id for h in shown if h.game == "flowar"] == list(range(H2H_SHOWN))
    assert [h.opponent_id for h in shown if h.game == "lafleur"] == [0, 1, 2]
    assert hidden == {"flowar": 7}
    assert len(shown) + sum(hidden.values()) == len(rows)
    assert top_opponents([], H2H_SHOWN) == ([], {})
