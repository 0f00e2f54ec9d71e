"""Final scoring, tie-breaks and Achievements (Rulebook: Flowar, "End of the Game",
"Achievements", solo "End of the Game").

Final MP = MP tokens + 3 without Torches − the Torch table − 3 per unpaid Loan.
Ties are broken, in order, by: most fulfilled Contracts left below the Player
Board, most Flower Baskets left on the Player Board, most Coins, lowest Guild
Tile number. In solo the player defeats Taxus with more final MP (the same
tie-breaks apply; Taxus has no Contracts or Baskets).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final

from games.api import Outcome, ranks_from_keys
from games.flowar.cards import FLOWER_BASKETS, NO_TORCH_BONUS, UNPAID_LOAN_MP, torch_penalty
from games.flowar.termination import FlowarTermination

if TYPE_CHECKING:
    from games.flowar.state_protocol import FlowarStateProtocol

TIE_BREAKS: Final[tuple[str, ...]] = (
    "most fulfilled Contracts below the Player Board",
    "most Flower Baskets left on the Player Board",
    "most Coins left",
    "lowest Guild Tile number",
)
"""The rulebook's four tie-breaks, in order."""
ACHIEVEMENTS: Final[tuple[str, ...]] = (
    "no_loans", "three_loans_paid_back", "no_torches", "layoffs_struck_every_type", "two_strikes_called_off",
    "fresh_flowers_only", "two_contracts_per_kingdom", "exchanged_every_round", "defeated_taxus",
    "four_contracts_at_once",
)
"""The ten Achievements, in the rulebook's order (Rulebook: "Achievements")."""
REASON: Final = FlowarTermination.ROUND_4_COMPLETE


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One side's final score.

    Attributes:
        mp_tokens: MP earned during the game.
        no_torch_bonus: +3 with no Torch, else 0.
        torch_penalty: MP lost to Torches (positive number).
        loan_penalty: MP lost to unpaid Loans (positive number).
        total: the final MP.
        torches / loans / coins / contracts_below / baskets / guild: the end-of-game counts.
    """

    mp_tokens: int
    no_torch_bonus: int
    torch_penalty: int
    loan_penalty: int
    total: int
    torches: int
    loans: int
    coins: int
    contracts_below: int
    baskets: int
    guild: int

    def to_json(self) -> dict[str, int]:
        """Every field by name, in declaration order (what ``dataclasses.asdict`` gives, without its deep copy)."""
        return {name: getattr(self, name) for name in _BREAKDOWN_FIELDS}


_BREAKDOWN_FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in fields(Breakdown))


def breakdown(mp: int, torches: int, loans: int, coins: int, below: int, baskets: int, guild: int) -> Breakdown:
    """Final MP of one side (Rulebook: "End of the Game", steps 1-4)."""
    bonus = NO_TORCH_BONUS if torches == 0 else 0
    pen = torch_penalty(torches)
    loan = UNPAID_LOAN_MP * loans
    return Breakdown(mp, bonus, pen, loan, mp + bonus - pen - loan, torches, loans, coins, below, baskets, guild)


def tie_break_keys(b: Breakdown) -> tuple[int, ...]:
    """Sort key, higher is better: total MP, then the four tie-breaks."""
    return (b.total, b.contracts_below, b.baskets, b.coins, -b.guild)


def tie_breaks_used(parts: list[Breakdown]) -> tuple[str, ...]:
    """The tie-break steps needed to order tied totals (empty when no tie)."""
    keys = [tie_break_keys(b) for b in parts]
    used: list[str] = []
    for step in range(1, 5):
        prefix = [k[:step] for k in keys]
        if len(set(prefix)) < len(prefix):
            used.append(TIE_BREAKS[step - 1])
    return tuple(used)


def _breakdowns(st: FlowarStateProtocol) -> list[Breakdown]:
    out = []
    for s in range(st._num_players):
        baskets = sum(FLOWER_BASKETS[x] for x in st._fresh[s] + st._wilt[s])
        out.append(breakdown(st._mp[s], st._torches[s], st._loans[s], st._coins[s],
                             sum(len(b) for b in st._below[s]), baskets, st._guild[s]))
    return out


def achievements(st: FlowarStateProtocol, seat: int, defeated_taxus: bool) -> dict[str, bool]:
    """The ten Achievements of ``seat`` (Rulebook: "Achievements")."""
    delivered = st._delivered[seat]
    total = sum(delivered)
    values = (
        st._loans_taken[seat] == 0,
        st._loans_paid[seat] >= 3,
        st._torches[seat] == 0,
        st._layoff_strikes[seat] == 7,
        st._strikes_off[seat] >= 2,
        total > 0 and st._fresh_deliveries[seat] == total,
        all(d >= 2 for d in delivered),
        st._exchanged[seat] == 15,
        defeated_taxus,
        st._at_once[seat] >= 4,
    )
    return dict(zip(ACHIEVEMENTS, values, strict=True))


def outcome_of(st: FlowarStateProtocol) -> Outcome:
    """The Outcome of a finished match: scores in MP, ranks, tie-breaks, details.

    ``details``: ``breakdown`` (per seat, see :class:`Breakdown`, plus
    ``delivered`` per kingdom and ``achievements``), ``start_player``; solo
    adds ``taxus`` (his breakdown) and ``defeated_taxus``; a solo seat's rank is
    1 when it defeated Taxus and 2 when he won.
    """
    parts = _breakdowns(st)
    scores = tuple(float(b.total) for b in parts)
    details: dict[str, Any] = {"start_player": st._start}
    if st._solo:
        tx = breakdown(st._taxus_mp, st._taxus_torches, st._taxus_loans, st._taxus_coins, 0, 0, st._taxus_guild)
        won = tie_break_keys(parts[0]) > tie_break_keys(tx)
        details["taxus"] = tx.to_json()
        details["defeated_taxus"] = won
        tie_breaks = tie_breaks_used([parts[0], tx])
        # Rulebook (solo, "End of the Game"): "Have you managed to defeat Taxus?" The seat ranks
        # 1 when it defeated him, 2 when Taxus won (a lost solo game is never reported as rank 1).
        ranks: tuple[int, ...] = (1,) if won else (2,)
    else:
        won = False
        ranks = ranks_from_keys([tie_break_keys(b) for b in parts])
        tie_breaks = tie_breaks_used(parts)
    details["breakdown"] = [
        {**b.to_json(), "seat": s, "delivered": list(st._delivered[s]),
         "achievements": achievements(st, s, won)}
        for s, b in enumerate(parts)
    ]
    return Outcome(scores, ranks, REASON, tie_breaks, details)
