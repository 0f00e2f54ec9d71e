"""The plan of a regress run: who sits where in each deal, and how a deal's ranks become one SPRT sample."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bots.local import deal_seed as deal_seed  # re-exported: a run's deals (parterre.regress.deal_seed)
from ladder.stats.paired import DealResult, head_to_head_deal, paired_deal
from parterre.regress.spec import BotSpec, Ranks, RegressError, parse_spec


@dataclass(frozen=True, slots=True)
class RegressPlan:
    """What a regress run plays.

    Attributes:
        game_string: canonical game string (seat count included).
        players: seats per match.
        candidate / baseline: the two bots compared.
        opponents: the fixed opponents (empty = head to head, two players only).
    """

    game_string: str
    players: int
    candidate: BotSpec
    baseline: BotSpec
    opponents: tuple[BotSpec, ...] = ()

    @property
    def head_to_head(self) -> bool:
        """Candidate against baseline directly (two players, no opponents)."""
        return not self.opponents

    @property
    def game(self) -> str:
        """The game's registry name."""
        return self.game_string.split("(", 1)[0]

    @property
    def games_per_deal(self) -> int:
        """Matches one deal takes: 2 head to head, else 2 x players."""
        return 2 if self.head_to_head else 2 * self.players

    def roles(self) -> list[tuple[str, BotSpec]]:
        """``[("candidate", spec), ("baseline", spec), ("opponent1", spec), ...]``."""
        return [("candidate", self.candidate), ("baseline", self.baseline)] + [
            (f"opponent{i + 1}", o) for i, o in enumerate(self.opponents)
        ]

    def tables(self, ids: Mapping[str, Any]) -> list[list[Any]]:
        """Tables of a deal in rotation-0 seat order, from role -> bot id.

        Head to head: one table ``[candidate, baseline]`` (its two rotations are
        the two seat orders). Paired: ``[candidate, O1, ...]`` and ``[baseline, O1, ...]``.
        """
        opps = [ids[f"opponent{i + 1}"] for i in range(len(self.opponents))]
        if self.head_to_head:
            return [[ids["candidate"], ids["baseline"]]]
        return [[ids["candidate"], *opps], [ids["baseline"], *opps]]

    def deal_result(self, ranks: Sequence[Sequence[Ranks]]) -> DealResult:
        """The deal's sample from ``ranks[table][rotation]`` (rotation k seats ``table[k:] + table[:k]``)."""
        n = self.players
        if self.head_to_head:
            return head_to_head_deal(ranks[0][0], ranks[0][1])
        seats = [(n - k) % n for k in range(n)]  # where the table's first bot sits in rotation k
        cand = [(ranks[0][k], seats[k]) for k in range(n)]
        base = [(ranks[1][k], seats[k]) for k in range(n)]
        return paired_deal(cand, base)


def make_plan(
    game: str, candidate: str, baseline: str, opponents: Sequence[str] = (), players: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> RegressPlan:
    """Validate the arguments of a run and build its plan.

    ``players`` defaults to ``len(opponents) + 1`` (2 without opponents). With
    three or more players and no opponents given, built-in runs use
    ``builtin:greedy`` opponents.

    Raises:
        RegressError: bad spec, wrong number of opponents, a player count or
            option the game does not allow.
    """
    from games.api import GameError
    from ladder.tournaments import game_string_for

    cand, base = parse_spec(candidate), parse_spec(baseline)
    opps = [parse_spec(o) for o in opponents]
    n = players if players is not None else (len(opps) + 1 if opps else 2)
    if n < 2:
        raise RegressError("a regress run needs at least 2 players")
    if not opps and n > 2:
        if not (cand.builtin and base.builtin):
            raise RegressError(f"{n} players need {n - 1} opponents (--opponents X,Y,...)")
        opps = [parse_spec("builtin:greedy")] * (n - 1)
    if opps and len(opps) != n - 1:
        raise RegressError(f"{n} players need {n - 1} opponent(s), got {len(opps)}")
    try:
        gs = game_string_for(game, options, n)
    except (GameError, ValueError) as exc:
        raise RegressError(str(exc)) from None
    return RegressPlan(gs, n, cand, base, tuple(opps))


def rotations(table: Sequence[Any]) -> list[list[Any]]:
    t = list(table)
    return [t[k:] + t[:k] for k in range(len(t))]
