"""The Flowar game declaration: options, variants, initial state.

Rulebook: Flowar, with its solo mode "Do You Dare to Face Taxus Alone?".
Registered as ``flowar`` (``games.registry``)::

    >>> from games.registry import load_game
    >>> game = load_game("flowar(players=3)")
    >>> game.num_players
    3
    >>> state = game.new_initial_state()
    >>> state.current_player()          # the Kingdom Favors are dealt first
    -1
"""

from __future__ import annotations

from typing import ClassVar

from games.api import Game, GameInfo, OptionSpec
from games.flowar.actions import ALL_ACTIONS
from games.flowar.state import FlowarState


class FlowarGame(Game):
    """Flowar for 1 to 4 players (1 = solo against Taxus).

    Options:
        players: 1..4 (default 4). 1 is the solo mode against Taxus.
        first_game_favors: use only Kingdom Favors 1-6, as the rulebook
            recommends for a first game (Rulebook: "Game Setup", step 3).

    Raises:
        InvalidOptionError: unknown option or bad value.
    """

    INFO = GameInfo(
        name="flowar",
        long_name="Flowar",
        min_players=1,
        max_players=4,
        options=(
            OptionSpec("players", int, 4, (1, 2, 3, 4),
                       "seats; 1 = solo against Taxus (Rulebook: \"Do You Dare to Face Taxus Alone?\")"),
            OptionSpec("first_game_favors", bool, False, None,
                       "only Kingdom Favors 1-6, recommended for a first game (Rulebook: \"Game Setup\", step 3)"),
        ),
        # Upper bound on decisions: 4 rounds x 4 seats x at most 7 turns (5 Workers,
        # a hire, a pass) x at most ~80 decisions in a turn (a 4-Contract delivery
        # with exchanges), plus setup; random play needs ~1,000.
        max_game_length=10_000,
    )
    ACTIONS = ALL_ACTIONS
    RULES_REVISIONS: ClassVar[tuple[str, ...]] = (
        "the rules as first implemented: Kingdom Favor 18 also at a strike outside the seat's own turn "
        "(another seat's turn, the Round Setup)",
        "Kingdom Favor 18 only in the seat's own turn (Rulebook: \"Kingdom Favors\": \"In your turn, you may "
        "discard 1 fulfilled Contract\"; 2026-12-06)",
        "the mandatory placement judged on the position an action leads to, strikes it calls or calls off "
        "included (hire, layoff, Kingdom Favors 5 and 19); Kingdom Favor 13 takes the round's one Guild action; "
        "Taxus exchanges no Coins after Round 4 (Rulebook: \"End of the Game\": \"Do not perform the end of "
        "Round steps after Round 4\"; 2026-12-07)",
    )
    PLAIN_FULL_STATE: ClassVar[bool] = True  # ints, strs, bools, lists, str-keyed dicts (Game docs)
    VARIANTS: ClassVar[tuple[str, ...]] = (
        "flowar(players=1)",
        "flowar(players=1,first_game_favors=true)",
        "flowar(players=2)",
        "flowar(players=2,first_game_favors=true)",
        "flowar(players=3)",
        "flowar(players=3,first_game_favors=true)",
        "flowar(players=4)",
        "flowar(players=4,first_game_favors=true)",
    )
    """Game strings of every variant the conformance tests and golden files cover."""

    def new_initial_state(self) -> FlowarState:
        """The state before the first chance action (the first Kingdom Favor)."""
        return FlowarState(self)
