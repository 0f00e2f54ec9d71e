"""Bot specs of ``parterre regress``: ``builtin:KIND[:OPT=VALUE,...]`` or a registered bot's name or id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DIRECT_KINDS = ("random", "greedy", "handicap", "search")
"""Built-in kinds the ``direct`` backend can play (plain ``choose`` functions, no protocol tricks)."""

Ranks = tuple[int, ...]
"""Competition ranks per seat of one finished match."""


class RegressError(RuntimeError):
    """The run cannot be made or cannot go on (bad spec, no worker, a match that did not finish)."""


def _coerce(value: str) -> Any:
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot of a regress run.

    Attributes:
        text: the spec as given.
        kind: the built-in kind (``greedy``, ``handicap``, ...), or None for a registered bot.
        options: constructor options of a built-in bot (``{"p": 0.3}``).
        ref: a registered bot's name or id (None for a built-in).
    """

    text: str
    kind: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    ref: str | None = None

    @property
    def builtin(self) -> bool:
        """True for ``builtin:`` specs."""
        return self.kind is not None

    def make(self, seed: str | None = None, **extra: Any) -> Any:
        """Build the built-in bot (a :class:`bots.sdk.Bot`), seeded unless the spec sets ``seed``.

        Raises:
            RegressError: not a built-in, or options the kind does not take.
        """
        from bots.cli import make_bot

        if self.kind is None:
            raise RegressError(f"{self.text!r} is a registered bot, not a built-in")
        options = dict(self.options)
        if seed is not None and "seed" not in options and self.kind in DIRECT_KINDS:
            options["seed"] = seed
        options.update(extra)
        try:
            return make_bot(self.kind, **options)
        except ValueError as exc:
            raise RegressError(f"{self.text}: {exc}") from None


def parse_spec(text: str) -> BotSpec:
    """Parse a bot spec: ``builtin:KIND[:OPT=VALUE,...]`` or a registered bot's name or id.

    Values are ints or floats when they parse as such (``p=0.3``), else text.

    Raises:
        RegressError: empty spec, unknown built-in kind, or a malformed option.
    """
    from bots.cli import BOT_KINDS

    text = text.strip()
    if not text:
        raise RegressError("empty bot spec")
    if not text.startswith("builtin:"):
        return BotSpec(text=text, ref=text)
    _, _, rest = text.partition(":")
    kind, _, opts = rest.partition(":")
    if kind not in BOT_KINDS:
        raise RegressError(f"{text!r}: unknown built-in kind {kind!r}; choose one of {', '.join(BOT_KINDS)}")
    options = []
    for item in filter(None, (o.strip() for o in opts.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise RegressError(f"{text!r}: option {item!r} is not KEY=VALUE")
        options.append((key, _coerce(value)))
    return BotSpec(text=text, kind=kind, options=tuple(options))
