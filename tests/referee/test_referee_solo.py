"""Solo matches through the referee keep the rules' win/loss (a lost solo game is not rank 1).

The oracle is the engine itself replayed from the recorded actions (``Outcome.ranks``:
1 when the seat beat the automaton, 2 when the automaton won), not the referee's
re-ranking; a solo seat that faults loses, as a faulting seat loses a 2-player game.
"""

from __future__ import annotations

import pytest

from bots.misbehaving import SilentBot
from bots.reference import RandomBot
from games.registry import load_game
from ladder.matches import ResultError, _parse_result
from referee.testing import Harness, replay_of
from referee.verdicts import Verdict, result_ranks

TOKENS = {"tok-solo": 1}


def _engine_ranks(game_string: str, steps: list[dict[str, object]]) -> list[int]:
    game = load_game(game_string)
    state = game.new_initial_state()
    for step in steps:
        # the type: ignore below: each step's action is a JSON object
        state.apply_action(game.action_from_json(step["action"]))  # type: ignore[arg-type]
    return list(state.outcome().ranks)


@pytest.mark.parametrize("game_string", ["lafleur(players=1,difficulty=hardest)", "flowar(players=1)",
                                         "floriferous(players=1)"])
async def test_a_solo_match_reports_the_rules_rank(game_string: str) -> None:
    ranks = []
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=3), "tok-solo")
        for match_id in range(1, 4):
            result = await h.run_match(match_id, game_string, [1], seed=f"solo-{match_id}", cap_ms=10_000)
            assert result.status == "finished", result.reason
            replay = replay_of(result)
            expected = _engine_ranks(game_string, replay["steps"])
            assert [s.rank for s in result.seats] == expected == replay["result_ranks"]
            ranks += expected
    if game_string.startswith("lafleur"):
        assert 2 in ranks  # random play loses to the hardest opponent: the loss must show


async def test_a_faulting_solo_seat_loses() -> None:
    async with Harness(TOKENS) as h:
        h.start_bot(SilentBot(), "tok-solo")
        result = await h.run_match(9, "lafleur(players=1)", [1], seed="solo-9", cap_ms=200, margin_ms=20)
    assert result.seats[0].verdict == "timeout"
    assert result.seats[0].rank == 2


def test_result_ranks_for_one_seat() -> None:
    assert result_ranks([Verdict.NORMAL], [1]) == (1,)
    assert result_ranks([Verdict.NORMAL], [2]) == (2,)
    assert result_ranks([Verdict.TIMEOUT], None) == (2,)
    assert result_ranks([Verdict.NORMAL, Verdict.NORMAL], [2, 1]) == (2, 1)


def test_the_ladder_accepts_a_solo_loss_and_nothing_beyond() -> None:
    seat = {"seat": 0, "bot_id": 1, "verdict": "normal", "score": 3.0}
    base = {"status": "finished", "replay_json": "{}"}
    _parse_result({**base, "seats": [{**seat, "rank": 2}]})
    with pytest.raises(ResultError):
        _parse_result({**base, "seats": [{**seat, "rank": 3}]})
    with pytest.raises(ResultError):
        _parse_result({**base, "seats": [{**seat, "rank": 3}, {**seat, "seat": 1, "bot_id": 2, "rank": 1}]})
