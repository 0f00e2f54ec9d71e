"""The public State calls every engine shares, compiled with the engines: :class:`StateHotPath`.

:class:`games.api.State` owns the public interface and its checks, in plain Python.
A search bot calls ``current_player()``, ``legal_actions()``, ``sample_chance()``
and ``apply_action()`` at every step, so these calls also live here, with the
same behaviour, written on the fields every engine keeps: ``_cur`` (the seat to
act, :data:`~games.api.CHANCE` or :data:`~games.api.TERMINAL`), ``_legal_cache``
and ``_sampled``. Every game's state class names it as its first base (before its
rules mixins and :class:`games.api.State`), so it finds these methods before
:class:`games.api.State`'s, and the mypyc build (setup.py ``COMPILED``) runs them
natively, reading the fields from fixed slots (a native base class, not a trait: a
trait's field is looked up among the class's traits at every read). The state class
itself defines the hooks below (``_apply``, ``_legal_actions``, ``_sample_chance``):
this class comes before the mixins in the method resolution order, so a hook a
mixin implements is named again in the state class. Anything out of the ordinary
(a terminal state, an action that is neither the drawn outcome nor an object of the
legal list) goes to :class:`games.api.State`'s checking version.
"""

from __future__ import annotations

import random
from typing import cast

from games.api import CHANCE, TERMINAL, Action, Game, State
from games.trusted import holds


class StateHotPath:
    """The hot public calls of :class:`games.api.State`, on the fields every engine keeps."""

    game: Game
    history: list[tuple[int, Action]]
    _legal_cache: list[Action] | None  # games.api.State's: the legal list of this position, once built
    _sampled: Action | None  # games.api.State's: what sample_chance() drew here
    _cur: int  # the seat to act, CHANCE or TERMINAL

    # -- hooks: the state class defines each of them (it comes before this class in the method resolution order)
    def _apply(self, action: Action) -> None:
        """Apply an action already known to be legal (:meth:`games.api.State._apply`)."""
        raise NotImplementedError

    def _legal_actions(self) -> list[Action]:
        """Legal actions of the seat to act (:meth:`games.api.State._legal_actions`)."""
        raise NotImplementedError

    def _sample_chance(self, rng: random.Random) -> Action:
        """Draw a chance outcome with ``rng`` (:meth:`games.api.State._sample_chance`)."""
        raise NotImplementedError

    # -- the framework's side --------------------------------------------------------------------------
    def _current_player(self) -> int:
        return self._cur

    def current_player(self) -> int:
        """Seat number to act, or :data:`CHANCE`, or :data:`TERMINAL`."""
        return self._cur

    def is_terminal(self) -> bool:
        """True when the game is over."""
        return self._cur == TERMINAL

    def is_chance_node(self) -> bool:
        """True when the next action is a chance outcome."""
        return self._cur == CHANCE

    def sample_chance(self, rng: random.Random) -> Action:
        """Draw the next chance outcome with ``rng`` (see :meth:`games.api.State.sample_chance`)."""
        if self._cur != CHANCE:
            return State.sample_chance(cast(State, self), rng)  # raises GameError
        action = self._sample_chance(rng)
        self._sampled = action
        return action

    def legal_actions(self) -> list[Action]:
        """Legal actions now, a copy (see :meth:`games.api.State.legal_actions`)."""
        cache = self._legal_cache
        if cache is None:
            cache = self._legal_actions() if self._cur >= 0 else State.legal_actions(cast(State, self))
            self._legal_cache = cache
        return cache[:]

    def apply_action(self, action: Action) -> None:
        """Check and apply ``action`` (see :meth:`games.api.State.apply_action`).

        Trusted without the check, as there: the action sample_chance() drew for
        this position, or one of the objects of its legal list.
        """
        if action is not self._sampled and not holds(self._legal_cache, action):
            State.apply_action(cast(State, self), action)  # checks; raises GameOverError / InvalidActionError / ...
            return
        player = self._cur
        self._apply(action)
        self.history.append((player, action))
        self._legal_cache = None
        self._sampled = None
