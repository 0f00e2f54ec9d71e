"""``python -m workers.hosting.head_to_head`` refuses a game string it cannot seat, in one line (exit 2)."""

from __future__ import annotations

import pytest

from workers.hosting.head_to_head import main


@pytest.mark.parametrize(("game", "needle"), [
    ("floriferous", "has 4 players; the duplicate runner seats two"),  # the default count is 4
    ("lafleur(players=3)", "has 3 players"),
    ("nope", "--game: unknown game 'nope'"),
])
def test_a_game_that_does_not_seat_two_is_refused(game: str, needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--game", game, "--run-seed", "s", "--deals", "1", "--a", "builtin:random", "--b", "builtin:random"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_two_seats_play_both_orders_of_a_deal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "floriferous(players=2)", "--run-seed", "s", "--deals", "1",
                 "--a", "builtin:random", "--b", "builtin:greedy"]) in (0, None)
    line = capsys.readouterr().out.strip()
    assert '"deal": 0' in line and '"ranks": [[' in line
