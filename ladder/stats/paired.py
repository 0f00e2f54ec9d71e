"""The duplicate model of ``parterre regress``: candidate and baseline on the same deals.

A **deal** is a seed; every sample of the test is one deal, played by both
bots, so the luck of the deal (and of the seat) cancels inside the sample.
Deals are independent (fresh seeds), so the deal samples are i.i.d. whatever
the correlation *inside* a deal — the reason fishtest tests game pairs rather
than games (the pentanomial model). One deal gives one **duplicate score**
``y`` in [0, 1], the candidate's mean score in the deal's virtual games
against the baseline, defined below; the test is fishtest's GSPRT on the
expectation of ``y`` (:func:`ladder.stats.sprt.llr_expectation`), and the
reported Elo difference is ``elo(E[y])`` in **logistic Elo**, the definition
fishtest uses for games (an Elo difference *is* a transform of an expected
score).

Two-player games, candidate A against baseline B ("head to head")
    The deal is played twice, A in seat 0 and then B in seat 0. A's two scores
    (1 win, 1/2 tie, 0 loss) sum to the pair score 0, 1/2, 1, 3/2 or 2, so the
    deals are exactly fishtest's pentanomial samples and ``y`` is A's mean
    score per game. :class:`DuplicateTest` then calls
    :func:`~ladder.stats.sprt.llr_logistic` with the pentanomial counts, so the
    numbers are fishtest's.

N players (3 or 4; also 2 with a fixed opponent), candidate and baseline in the same seat
    The fixed opponents O_1..O_{N-1} (any bots; they may be copies) fill the
    other seats. The deal is played by the table (A, O_1, ..., O_{N-1}) in
    each of its N cyclic seat rotations, and by (B, O_1, ..., O_{N-1}) in the
    same N rotations, all 2N games on the same seed: in rotation k, A and B
    hold the same seat against the same opponents in the same seats. The
    multiplayer result is decomposed pairwise as everywhere in Parterre
    (ladder/README.md, "Ratings"): ``s_j`` is 1, 1/2 or 0 as the seat ranks above, level with or
    below opponent O_j. For each rotation k and opponent j the **virtual game**
    "A against B through O_j" scores

        u_kj = (1 + s_Aj - s_Bj) / 2        (in {0, 1/4, 1/2, 3/4, 1})

    (A wins it when A beat O_j and B lost to O_j on the same deal from the same
    seat; it is drawn when both did the same), and ``y`` is the mean of the
    ``N (N - 1)`` values ``u_kj`` of the deal.

Derivation of what the N-player test measures
    1. *Identical strength gives E[y] = 1/2 exactly.* If A and B are the same
       player (same distribution of play), the joint law of the deal's games is
       unchanged when A and B are swapped, which maps every ``u`` to ``1 - u``.
       So ``E[y] = 1/2``, i.e. ``elo = 0``, with no assumption about the game,
       the seats, the opponents or the correlation between the 2N games. H0 and
       H1 are statements about ``E[y]`` and the GSPRT needs only i.i.d. deals,
       so the test's error probabilities hold without a model of the game.
    2. *A stronger candidate raises E[y].* ``E[u_kj] = 1/2 + (E[s_Aj] - E[s_Bj]) / 2``:
       the virtual game rewards exactly the pairwise results the ladder's Elo
       and the Bradley-Terry fit count.
    3. *Scale.* Under a Bradley-Terry model with a deal- and seat-dependent
       bias ``b`` (``P(A beats O_j) = L(r_A - r_j + b)``, where ``L`` is the
       logistic curve of :func:`ladder.stats.scales.logistic`),
       ``E[u] = 1/2 + (L(r_A - r_j + b) - L(r_B - r_j + b)) / 2``; for small
       ``delta = r_A - r_B`` this is ``1/2 + delta * L'(r_B - r_j + b) / 2``,
       while a direct game would give ``1/2 + delta * L'(0)``. Since ``L'`` is
       largest at 0, the duplicate Elo ``elo(E[y])`` is **at most about half
       the Bradley-Terry difference** (exactly half, to first order, when the
       opponents are as strong as the baseline and the deal has no bias; less
       when the deal or the opponents make the results foregone). So N-player
       ``elo0``/``elo1`` are in duplicate Elo, a scale of its own: compare
       N-player figures with N-player figures.
    4. *Two players with a fixed opponent* (``--players 2 --opponents X``) is
       the case N = 2 of the same construction (one opponent, two rotations).

The per-deal values are kept exactly (:class:`fractions.Fraction`) so equal
scores share one category of the empirical distribution. Before computing the
GSPRT the two extreme scores 0 and 1 get 1e-3 samples when unobserved (the
regularisation fishtest applies to empty categories), so that both hypotheses
always have a maximum-likelihood distribution.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ladder.stats.scales import logistic
from ladder.stats.sprt import (
    REGULARIZATION,
    EloEstimate,
    Sprt,
    SprtState,
    elo_estimate,
    elo_estimate_values,
    llr_expectation,
    llr_logistic,
)

__all__ = [
    "DealResult",
    "DuplicateTest",
    "TrajectoryPoint",
    "head_to_head_deal",
    "paired_deal",
    "seat_pair_scores",
]

_HALF = Fraction(1, 2)


def _pair_score(rank_a: int, rank_b: int) -> Fraction:
    return Fraction(1) if rank_a < rank_b else _HALF if rank_a == rank_b else Fraction(0)


def seat_pair_scores(ranks: Sequence[int], seat: int) -> dict[int, Fraction]:
    """Pairwise scores of ``seat`` against every other seat of one finished match.

    Args:
        ranks: competition ranks per seat (1 = best; ties share a rank), length N.
        seat: the seat scored (0-based).

    Returns:
        ``{other seat: 1, 1/2 or 0}`` (ranked above, level, below).
    """
    return {j: _pair_score(ranks[seat], r) for j, r in enumerate(ranks) if j != seat}


@dataclass(frozen=True, slots=True)
class DealResult:
    """One deal's sample.

    Attributes:
        score: the duplicate score ``y`` of the candidate, in [0, 1] (exact).
        games: real games the deal took (2 head to head, 2N paired).
        virtual_games: number of values averaged into ``score`` (2 head to
            head, N(N-1) paired).
        pentanomial: for a head-to-head deal, the candidate's pair score times
            2 (0..4, the pentanomial category); None for paired deals.
    """

    score: Fraction
    games: int
    virtual_games: int
    pentanomial: int | None = None


def head_to_head_deal(ranks_candidate_first: Sequence[int], ranks_baseline_first: Sequence[int]) -> DealResult:
    """The sample of a two-player deal played in both seat orders.

    Args:
        ranks_candidate_first: ranks ``[candidate, baseline]`` of the game with
            the candidate in seat 0.
        ranks_baseline_first: ranks ``[baseline, candidate]`` of the game with
            the baseline in seat 0 (same seed).

    Returns:
        The deal result; ``pentanomial`` = 2 x pair score (0 = two losses, 4 = two wins).

    Raises:
        ValueError: a game without exactly two seats.
    """
    if len(ranks_candidate_first) != 2 or len(ranks_baseline_first) != 2:
        raise ValueError("a head-to-head deal is two 2-player games")
    pair = _pair_score(ranks_candidate_first[0], ranks_candidate_first[1]) + _pair_score(
        ranks_baseline_first[1], ranks_baseline_first[0]
    )
    return DealResult(score=pair / 2, games=2, virtual_games=2, pentanomial=int(pair * 2))


def paired_deal(
    candidate_games: Sequence[tuple[Sequence[int], int]], baseline_games: Sequence[tuple[Sequence[int], int]]
) -> DealResult:
    """The sample of an N-player deal: candidate and baseline in the same seats, same opponents.

    Args:
        candidate_games: per rotation, ``(ranks per seat, candidate's seat)``.
        baseline_games: per rotation, ``(ranks per seat, baseline's seat)``;
            same length and same seats as ``candidate_games``, and the other
            seats held by the same opponents (the caller's responsibility).

    Returns:
        The deal result with ``score = mean over rotations k and opponents j of
        (1 + s_Aj - s_Bj) / 2``.

    Raises:
        ValueError: no games, different numbers of games, or a rotation where
            the two bots sit in different seats or play different seat counts.
    """
    if not candidate_games or len(candidate_games) != len(baseline_games):
        raise ValueError("a paired deal needs the same (non-zero) number of candidate and baseline games")
    total = Fraction(0)
    count = 0
    for (ranks_a, seat_a), (ranks_b, seat_b) in zip(candidate_games, baseline_games, strict=True):
        if seat_a != seat_b or len(ranks_a) != len(ranks_b) or len(ranks_a) < 2:
            raise ValueError("candidate and baseline must hold the same seat of games with the same seat count")
        sa = seat_pair_scores(ranks_a, seat_a)
        sb = seat_pair_scores(ranks_b, seat_b)
        for j in sa:
            total += (1 + sa[j] - sb[j]) / 2
            count += 1
    return DealResult(score=total / count, games=2 * len(candidate_games), virtual_games=count)


@dataclass(frozen=True, slots=True)
class TrajectoryPoint:
    """The test after one more deal: ``deals`` and ``games`` so far, the LLR and the state."""

    deals: int
    games: int
    llr: float
    state: SprtState


@dataclass
class DuplicateTest:
    """A sequential test over deals (see the module docstring for the model).

    Args:
        sprt: hypotheses (logistic Elo; duplicate Elo for N players) and error probabilities.
        pentanomial: True for head-to-head deals (fishtest's pentanomial GSPRT);
            False for paired N-player deals (the generic GSPRT on ``y``).

    Attributes:
        scores: deals per exact score ``y``.
        games / deals: totals so far.
        trajectory: one :class:`TrajectoryPoint` per deal added.
        state: the current decision (stays decided once decided).
    """

    sprt: Sprt
    pentanomial: bool
    scores: Counter[Fraction] = field(default_factory=Counter)
    penta: list[int] = field(default_factory=lambda: [0] * 5)
    games: int = 0
    deals: int = 0
    trajectory: list[TrajectoryPoint] = field(default_factory=list)
    state: SprtState = SprtState.CONTINUE

    def add(self, deal: DealResult) -> SprtState:
        """Add one deal, recompute the LLR, record the trajectory point; return the state.

        A decided test stays decided (later deals are still counted, e.g. deals
        that were already running when it decided, but do not change the verdict).

        Raises:
            ValueError: a head-to-head test given a paired deal or the reverse.
        """
        if self.pentanomial != (deal.pentanomial is not None):
            raise ValueError("deal kind does not match the test (head to head vs paired)")
        self.scores[deal.score] += 1
        if deal.pentanomial is not None:
            self.penta[deal.pentanomial] += 1
        self.games += deal.games
        self.deals += 1
        llr = self.llr()
        if self.state is SprtState.CONTINUE:
            self.state = self.sprt.decide(llr)
        self.trajectory.append(TrajectoryPoint(self.deals, self.games, llr, self.state))
        return self.state

    def run(self, deals: Iterable[DealResult],
            on_deal: Callable[[TrajectoryPoint, DuplicateTest], None] | None = None) -> SprtState:
        """The sequential test: take deals one by one until it decides or ``deals`` runs out.

        The test is Wald's SPRT in its generalised form (the GSPRT of fishtest) on the
        expectation of the duplicate score ``y``: ``H0: elo = elo0`` against ``H1: elo = elo1``
        (``Sprt.elo0 < Sprt.elo1``, logistic Elo of candidate minus baseline; duplicate Elo for
        N players, see the module docstring). After each deal the log-likelihood ratio
        ``LLR = log(L(H1) / L(H0))`` of all deals so far is computed: head to head from the
        **pentanomial** counts of game pairs (:func:`~ladder.stats.sprt.llr_logistic`), N players
        from the empirical distribution of ``y`` (:func:`~ladder.stats.sprt.llr_expectation`),
        each hypothesis represented by the maximum-likelihood distribution with expected score
        ``logistic(elo_k)``. It is compared with Wald's bounds ``lower = log(beta / (1 - alpha))``
        and ``upper = log((1 - beta) / alpha)`` (±2.944 for alpha = beta = 0.05): ``LLR >= upper``
        accepts H1 (false with probability at most about ``alpha`` when ``elo = elo0``),
        ``LLR <= lower`` accepts H0 (false with probability at most about ``beta`` when
        ``elo = elo1``), anything between continues.

        Deals are taken in the iterable's order and no deal is drawn after the test decides
        (a generator is left suspended: close it to stop the games behind it). A test that had
        already decided takes no deal.

        Args:
            deals: the deals' samples, in deal order (the budget is the iterable's length).
            on_deal: called after each deal with its trajectory point and this test.

        Returns:
            The state: H0 or H1 when decided, CONTINUE when ``deals`` ran out first.

        Raises:
            ValueError: a deal of the wrong kind (:meth:`add`); whatever ``deals`` raises.
        """
        if self.state is not SprtState.CONTINUE:
            return self.state
        for deal in deals:
            state = self.add(deal)
            if on_deal is not None:
                on_deal(self.trajectory[-1], self)
            if state is not SprtState.CONTINUE:
                break
        return self.state

    def distribution(self) -> tuple[list[float], list[float]]:
        """``(values, counts)`` of the regularised empirical distribution of ``y``."""
        if self.pentanomial:
            return [i / 4 for i in range(5)], [float(c) if c else REGULARIZATION for c in self.penta]
        found: dict[Fraction, float] = {k: float(v) for k, v in self.scores.items()}
        for end in (Fraction(0), Fraction(1)):
            found.setdefault(end, REGULARIZATION)
        keys = sorted(found)
        return [float(k) for k in keys], [float(found[k]) for k in keys]

    def llr(self) -> float:
        """The current generalised log-likelihood ratio of H1 against H0 (0 before any deal)."""
        if self.deals == 0:
            return 0.0
        if self.pentanomial:
            return llr_logistic(self.sprt.elo0, self.sprt.elo1, self.penta)
        values, counts = self.distribution()
        return llr_expectation(values, counts, logistic(self.sprt.elo0), logistic(self.sprt.elo1))

    def estimate(self, confidence: float = 0.95) -> EloEstimate:
        """Elo difference (logistic of the mean duplicate score) with its interval.

        Raises:
            ValueError: no deal yet.
        """
        if self.deals == 0:
            raise ValueError("no deal played yet")
        if self.pentanomial:
            return elo_estimate(self.penta, confidence)
        values, counts = self.distribution()
        return elo_estimate_values(values, counts, confidence)
