"""Run a built-in bot: the back end of ``parterre bot run KIND --token T``.

Kinds: ``random``, ``greedy`` (reference bots), ``search`` (paired Monte Carlo over determinizations,
:mod:`bots.search`) and the misbehaving test bots ``slow``, ``illegal``, ``drop``, ``garbage``, ``silent``.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from bots.handicap import HandicapBot
from bots.misbehaving import DropBot, GarbageBot, IllegalBot, SilentBot, SlowBot
from bots.reference import GreedyBot, RandomBot
from bots.sdk import Bot
from bots.search import SearchBot

BOT_KINDS: dict[str, type[Bot]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "search": SearchBot,
    "handicap": HandicapBot,
    "slow": SlowBot,
    "illegal": IllegalBot,
    "drop": DropBot,
    "garbage": GarbageBot,
    "silent": SilentBot,
}
"""Bot kind name -> class."""

RUN_OPTIONS = ("reconnect", "stop_after_matches", "initial_backoff_s", "max_backoff_s")
"""Keyword arguments of :func:`run_bot` that go to ``Bot.arun`` rather than the bot."""


def make_bot(kind: str, **options: Any) -> Bot:
    """Build a bot of ``kind``.

    Args:
        kind: a key of :data:`BOT_KINDS`.
        **options: constructor arguments (``name``, ``version``,
            ``max_concurrent_matches``, ``seed``, ``delay_ms``, ``mode``,
            ``at_decision``, ...); ``None`` values are dropped.

    Raises:
        ValueError: unknown kind, or an option the kind does not take.
    """
    cls = BOT_KINDS.get(kind)
    if cls is None:
        raise ValueError(f"unknown bot kind {kind!r}; choose one of {', '.join(BOT_KINDS)}")
    options = {k: v for k, v in options.items() if v is not None}
    accepted: set[str] = set()
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is not None:
            accepted |= set(inspect.signature(init).parameters) - {"self", "kwargs"}
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ValueError(f"bot kind {kind!r} does not take option(s) {', '.join(unknown)}; "
                         f"it takes {', '.join(sorted(accepted))}")
    return cls(**options)


def run_bot(kind: str, address: str, token: str, **kw: Any) -> Bot:
    """Build a bot and play until interrupted (blocking).

    Args:
        kind: ``random``, ``greedy``, ``search``, ``slow``, ``illegal``, ``drop``, ``garbage`` or ``silent``.
        address: referee ``host:port``.
        token: the bot's token.
        **kw: bot options (see :func:`make_bot`; ``max_matches`` is accepted
            for ``max_concurrent_matches``) and run options
            (:data:`RUN_OPTIONS`, see ``Bot.arun``); ``announce``: a callable
            given the one-line connection news (``Bot.announce``).

    Returns:
        The bot, after it stopped (its ``stats`` hold the results).

    Raises:
        ValueError: unknown kind or option.
        bots.sdk.AuthenticationError: the referee refused the token.
    """
    if "max_matches" in kw:  # the command line's --max-matches: matches at once
        kw.setdefault("max_concurrent_matches", kw.pop("max_matches"))
    run_kw = {k: kw.pop(k) for k in RUN_OPTIONS if k in kw and kw[k] is not None}
    announce = kw.pop("announce", None)
    bot = make_bot(kind, **kw)
    bot.announce = announce
    asyncio.run(bot.arun(address, token, **run_kw))  # not run(): that exits on a refused token
    return bot
