"""``parterre regress``: is the candidate a regression of the baseline? (docs/regression.md)

The candidate and the baseline play the same **deals** (seeds), so the luck of
the deal cancels (:mod:`ladder.stats.paired` has the model and its
derivation):

* two players, no opponents: each deal is played twice, candidate against
  baseline in both seat orders — a game pair, fishtest's pentanomial sample;
* N players (or two with ``--opponents X``): the fixed opponents fill the
  other seats; the candidate's table and the baseline's table each play the
  deal in every cyclic seat rotation, so both bots hold every seat of the same
  deal against the same opponents.

After each deal the generalised SPRT of :class:`ladder.stats.paired.DuplicateTest`
is updated (:meth:`~ladder.stats.paired.DuplicateTest.run`, the loop the hosted bots'
regression test uses too); the run stops as soon as it decides, or when the next deal would
exceed ``max_games``. Hypotheses (logistic Elo, candidate minus baseline):
``H0: elo = elo0`` and ``H1: elo = elo1``, ``elo0 < elo1``.

=====  ==================================================================
exit   meaning
=====  ==================================================================
0      H1 accepted: not a regression (the candidate is at least ``elo1``)
1      H0 accepted: a regression (the candidate is at most ``elo0``)
2      undecided when the game budget ran out
3      the run could not be made (bad arguments, no worker, a failed match)
=====  ==================================================================

Backends (how the games are played):

* ``referee`` — in this process: a real referee (gRPC on 127.0.0.1, a free
  port, a static token store) and the built-in bots as real SDK bots
  connected to it, exactly as ``referee.testing.Harness`` does. Needs neither
  PostgreSQL nor Redis. The default for ``builtin:`` specs.
* ``direct`` — in this process, no referee and no gRPC: the rules engine is
  driven like the referee drives it (chance from ``random.Random(seed)``,
  each seat given its observation and the legal actions' JSON in the
  referee's order) and the bots' ``choose`` is called directly. About twice
  as fast; for benches and tests (``--backend direct``).
* ``ladder`` — registered bots: a ``duplicate`` tournament in PostgreSQL, one
  deal at a time planned with :func:`ladder.tournaments.plan_duplicate_deal`
  and run by the Celery workers through the referee; the matches are rated
  like any other. Chosen when the bots are not ``builtin:`` specs, and only
  when a Celery worker answers a ping.

Bot specs: ``builtin:KIND[:OPT=VALUE,...]`` with KIND a key of
:data:`bots.cli.BOT_KINDS` (``builtin:greedy``, ``builtin:random``,
``builtin:handicap:p=0.3``) — or a registered bot's name or id.

Modules: :mod:`~parterre.regress.spec` (bot specs), :mod:`~parterre.regress.plan`
(seats and deals), :mod:`~parterre.regress.runners` (the ``Runner`` interface,
``referee`` and ``ladder`` backends), :mod:`~parterre.regress.direct` (the
``direct`` backend, on :func:`bots.local.play_local`), :mod:`~parterre.regress.report`
(the run and its output).
"""

from __future__ import annotations

from parterre.regress.direct import DirectRunner, play_direct
from parterre.regress.plan import RegressPlan, deal_seed, make_plan, rotations
from parterre.regress.report import (
    EXIT_CODES,
    EXIT_ERROR,
    RegressReport,
    auto_every,
    describe,
    print_json,
    print_text,
    run_regress,
    summary_lines,
    trajectory_line,
)
from parterre.regress.runners import (
    IN_PROCESS_TIME_CONTROL,
    LADDER_TIME_CONTROL,
    LadderRunner,
    RefereeRunner,
    Runner,
)
from parterre.regress.spec import DIRECT_KINDS, BotSpec, Ranks, RegressError, parse_spec

__all__ = [
    "DIRECT_KINDS",
    "EXIT_CODES",
    "EXIT_ERROR",
    "IN_PROCESS_TIME_CONTROL",
    "LADDER_TIME_CONTROL",
    "BotSpec",
    "DirectRunner",
    "LadderRunner",
    "Ranks",
    "RefereeRunner",
    "RegressError",
    "RegressPlan",
    "RegressReport",
    "Runner",
    "auto_every",
    "deal_seed",
    "describe",
    "make_plan",
    "parse_spec",
    "play_direct",
    "print_json",
    "print_text",
    "rotations",
    "run_regress",
    "summary_lines",
    "trajectory_line",
]
