"""OpenSpiel-style resampling leak test, with a card-knowledge model written from the rulebooks.

Method (cf. OpenSpiel's ``resample_from_infostate`` tests): take the history ``h``
of a seeded random game; for an observer (a seat, or ``None`` for the spectator)
and a horizon ``t``, build a second history ``h'`` that the observer cannot tell
from ``h`` at any step ``u <= t`` *according to the model*, replay it through the
public API, and require that everything the referee would send the observer —
``observation(seat)`` and, at its decisions, the whole ``DecisionRequest``
(observation JSON and typed message, every legal action's index, label, JSON
and typed message, seat, game, seq) — is byte-identical at every such step.

The model (one module per game, :class:`GameModel`) never reads the engine's
"public"/"seen" bookkeeping. From the rulebook it says, for each *zone* of the
full state (``State.full_state()``, the engine's ground truth), whether the
zone is face-up (``public``), shown to its owner only (``owner``), or face-down
to everybody (``hidden``), and whether it is a *shuffled* face-down deck. The
knowledge of an observer is then a plain rule, applied at every step:

* a card in a zone the observer sees becomes *known* to it;
* a card that moves between zones stays known (the observer watched it go,
  e.g. a market card taken into an opponent's hand);
* a card that enters a shuffled deck is forgotten (a reshuffle of a discard
  pile into the deck makes every later face-down draw anonymous again).

A card *occurrence* is the stretch of play between a draw from a deck and the
card's return into a shuffled deck. An occurrence is *seen up to t* when its
card is known to the observer at its last step ``<= t``.

Building ``h'``: a bijection ``sigma`` (card in ``h`` -> card in ``h'``) starts as
the identity. Walking ``h``:

* a chance draw of card ``c`` whose occurrence is seen up to ``t`` draws ``c``
  again (``sigma`` is re-permuted inside the deck, a set, so that
  ``sigma(c) = c``);
* a chance draw whose occurrence is *not* seen draws another card ``d`` of the
  same deck (uniformly among the engine's chance outcomes at that node, ``d != c``
  when there is a choice, never a card that a later seen draw up to ``t`` needs)
  — this both swaps the card for an unseen one and changes the deck order;
* other chance outcomes (first player, dice-like draws, automaton cards drawn
  face-up) are replayed as they are;
* every player action is relabelled through ``sigma`` (each string field that is
  a card id, lists included; a relabelled set of cards is matched with the legal
  action listing the same cards in another order). A seat's hidden choice (keep
  this Contract, choose this Character) thus follows its relabelled card. If the relabelled
  action is illegal in ``h'`` (a hidden card's properties changed what the
  owner may do), the replay stops there: the steps compared so far stand and
  the stop is counted (``stopped_illegal``). It is not resampled, because a
  different action would be a different public history.

The model's own view of the observer (visible zones' contents, sizes and known
cards of the others, and the public scalar fields the rulebook shows, see each
game module) is computed for ``h`` and ``h'`` at every step. Where they differ,
the two histories are legitimately distinguishable (e.g. a solo automaton paid
with a relabelled card and scored differently); comparison stops there and is
counted (``stopped_public``). A leak is a step where the model views agree and
the engine's messages do not.

Observers are every seat and the spectator (``observation(None)``). Horizons
per observer: the end of the game and steps just before a card drawn face-down
(for that observer) becomes known to it, where the most is relabelled. Seats
are driven by a :data:`Driver` (uniform, weighted to cycle decks, or a bot).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from games.api import CHANCE, Action, State
from games.registry import load_game
from referee.codec import GameCodec

PUBLIC, OWNER, HIDDEN = "public", "owner", "hidden"


@dataclass(frozen=True)
class Zone:
    """Where cards lie in a full state.

    Attributes:
        name: zone name, unique in a state (``"hand.1"``).
        cards: card ids in the zone (order kept as the engine gives it).
        vis: ``public`` (face-up), ``owner`` (its owner sees it), ``hidden``.
        owner: seat of an ``owner`` zone.
        shuffled: a face-down deck: entering it makes a card anonymous again.
        ordered: the order is public (e.g. a discard pile); else compared as a set.
    """

    name: str
    cards: tuple[str, ...]
    vis: str = PUBLIC
    owner: int | None = None
    shuffled: bool = False
    ordered: bool = False

    def visible_to(self, observer: int | None) -> bool:
        return self.vis == PUBLIC or (self.vis == OWNER and observer is not None and observer == self.owner)


class GameModel:
    """Per-game knowledge model (subclass per game, written from its rulebook)."""

    game_name: str = ""

    def __init__(self, num_players: int) -> None:
        self.num_players = num_players  # seats; a solo automaton is seat 1 of the engine's state

    def zones(self, fs: dict[str, Any]) -> list[Zone]:
        """Every card zone of a full state."""
        raise NotImplementedError

    def public(self, fs: dict[str, Any], observer: int | None) -> Any:
        """JSON-able non-card facts the observer is shown (public ones and its own private ones)."""
        raise NotImplementedError

    def drawn_card(self, action: dict[str, Any]) -> str | None:
        """The card a chance outcome draws from a shuffled deck (its id), else None."""
        raise NotImplementedError

    def card_ids(self) -> frozenset[str]:
        """Every card id the relabelling may rewrite in actions."""
        raise NotImplementedError

    def automaton_turn(self, action: dict[str, Any], after: list[Zone]) -> bool:
        """Is this step a solo automaton's turn or face-down gain? For the path counts."""
        return False


def located(model: GameModel, fs: dict[str, Any], universe: frozenset[str] | None = None) -> list[Zone]:
    """The model's zones of a full state, checked: no card twice, every card of ``universe``
    (the cards of the initial state) somewhere."""
    zones = model.zones(fs)
    seen: Counter[str] = Counter()
    for z in zones:
        seen.update(z.cards)
    dup = [c for c, n in seen.items() if n > 1]
    assert not dup, f"model: cards in two zones at once: {dup}"
    missing = (universe or frozenset()) - set(seen)
    assert not missing, f"model: cards in no zone: {sorted(missing)[:8]}"
    return zones


class Knower:
    """Known cards of one observer, updated state by state (the three rules of the module docstring)."""

    def __init__(self, observer: int | None) -> None:
        self.observer = observer
        self.known: set[str] = set()

    def update(self, zones: list[Zone]) -> frozenset[str]:
        for z in zones:
            if z.shuffled:
                self.known.difference_update(z.cards)
            elif z.visible_to(self.observer):
                self.known.update(z.cards)
        return frozenset(self.known)


def knowledge(zoned: Iterable[list[Zone]], observer: int | None) -> list[frozenset[str]]:
    """Known cards of ``observer`` after each state."""
    k = Knower(observer)
    return [k.update(zones) for zones in zoned]


def model_view(model: GameModel, fs: dict[str, Any], zoned: list[Zone], known: frozenset[str],
               observer: int | None) -> str:
    """What the model says the observer may know: the basis of "indistinguishable"."""
    zones: dict[str, Any] = {}
    for z in zoned:
        if z.visible_to(observer):
            zones[z.name] = list(z.cards) if z.ordered else sorted(z.cards)
        else:
            zones[z.name] = [len(z.cards), sorted(c for c in z.cards if c in known)]
    return _dump({"zones": zones, "public": model.public(fs, observer)})


Driver = Callable[[State, list[Action], random.Random], Action]
"""Chooses a seat's action: ``driver(state, legal, rng)``."""


def uniform(state: State, legal: list[Action], rng: random.Random) -> Action:
    """Uniform random play (the drivers of the engines' own random tests)."""
    return rng.choice(legal)


def weighted(weight: Callable[[Action], float]) -> Driver:
    """Random play with weights (to steer play into rare paths such as reshuffles)."""
    def drive(state: State, legal: list[Action], rng: random.Random) -> Action:
        return rng.choices(legal, weights=[weight(a) for a in legal])[0]
    return drive


def play_random(game_string: str, seed: int, driver: Driver = uniform) -> list[tuple[int, Action]]:
    """History of a seeded game: the engine's chance law from ``random.Random(seed)``, seats by ``driver``."""
    state = load_game(game_string).new_initial_state()
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(state.sample_chance(rng))
        else:
            state.apply_action(driver(state, state.legal_actions(), rng))
    return list(state.history)


def relabel(value: Any, sigma: dict[str, str], ids: frozenset[str]) -> Any:
    if isinstance(value, str):
        return sigma.get(value, value) if value in ids else value
    if isinstance(value, list):
        return [relabel(v, sigma, ids) for v in value]
    if isinstance(value, dict):
        return {k: (v if k == "kind" else relabel(v, sigma, ids)) for k, v in value.items()}
    return value


def decision_request(codec: GameCodec, state: State, seat: int, seq: int) -> bytes:
    """The bytes of the DecisionRequest the referee sends (referee/room.py ``_decide``: the codec's
    wire bytes, both encodings), with the fields outside the game (match, clock, attempt) fixed."""
    return codec.decision_request(1, seq, state.observation(seat), state.legal_actions(), 1000, 1000, seat, 1)


@dataclass
class Counts:
    """How often each path was exercised (printed by the test)."""

    games: int = 0
    steps: int = 0
    decisions_checked: int = 0
    observations_checked: int = 0
    replays: int = 0
    relabelled_draws: int = 0
    reshuffles: int = 0
    hidden_redraws: int = 0
    automaton_turns: int = 0
    stopped_public: int = 0
    stopped_illegal: int = 0
    extra: Counter[str] = field(default_factory=Counter)

    def line(self, name: str) -> str:
        extra = " ".join(f"{k}={v}" for k, v in sorted(self.extra.items()))
        return (f"{name}: games={self.games} steps={self.steps} replays={self.replays} "
                f"decisions_checked={self.decisions_checked} observations_checked={self.observations_checked} "
                f"relabelled_draws={self.relabelled_draws} reshuffles={self.reshuffles} "
                f"hidden_redraws_after_reshuffle={self.hidden_redraws} automaton_turns={self.automaton_turns} "
                f"stopped_public={self.stopped_public} stopped_illegal={self.stopped_illegal} {extra}").rstrip()


@dataclass(frozen=True)
class Leak:
    game: str
    seed: int
    observer: int | None
    horizon: int
    step: int
    what: str

    def __str__(self) -> str:
        return (f"{self.game} seed {self.seed}: observer {self.observer} (horizon {self.horizon}) sees a "
                f"difference at step {self.step} ({self.what}) between two histories it cannot tell apart")


def check_game(model_cls: type[GameModel], game_string: str, seed: int, counts: Counts,
               horizons: int,
               driver: Driver = uniform) -> list[Leak]:
    """Run the resampling check on one seeded game for every observer; return the leaks found."""
    game = load_game(game_string)
    model = model_cls(game.num_players)
    history = play_random(game_string, seed, driver)
    rng = random.Random(seed * 7919 + 17)
    codec = GameCodec(game.name)
    ids = model.card_ids()
    # Replay h once: full states, observations, requests per observer.
    state = game.new_initial_state()
    states = [_snapshot(state)]
    for _, a in history:
        state.apply_action(a)
        states.append(_snapshot(state))
    universe = frozenset(c for z in located(model, states[0]) for c in z.cards)
    zoned = [located(model, fs, universe) for fs in states]
    decks = [frozenset(c for z in zones if z.shuffled for c in z.cards) for zones in zoned]
    counts.games += 1
    counts.steps += len(history)
    _count_paths(model, history, zoned, decks, counts)
    observers: list[int | None] = [*range(game.num_players), None]
    leaks: list[Leak] = []
    for observer in observers:
        known = knowledge(zoned, observer)
        views = [model_view(model, fs, zs, k, observer) for fs, zs, k in zip(states, zoned, known, strict=True)]
        ref = _engine_messages(game, codec, history, observer, len(history))
        for t in _horizons(model, history, decks, known, horizons, rng):
            leak = _check_horizon(model, game, codec, history, decks, known, views, ref, observer, t, rng, ids,
                                  counts)
            if leak is not None:
                leaks.append(Leak(game_string, seed, observer, t, leak[0], leak[1]))
                break
    return leaks


def _horizons(model: GameModel, history: list[tuple[int, Action]], decks: list[frozenset[str]],
              known: list[frozenset[str]], k: int, rng: random.Random) -> list[int]:
    """The end of the game, and up to ``k - 1`` horizons just before a card drawn
    face-down (for this observer) becomes known to it: the longest stretches
    where it is hidden, so that it is relabelled (random ones when there are none)."""
    n = len(history)
    cands: set[int] = set()
    for i, (p, a) in enumerate(history):
        c = model.drawn_card(a.to_json()) if p == CHANCE else None
        if c is None or c in known[i + 1]:
            continue
        for j in range(i + 2, n + 1):
            if c in decks[j]:
                break
            if c in known[j]:
                cands.add(j - 1)
                break
    pool = sorted(cands) or list(range(1, n))
    return [n, *sorted(rng.sample(pool, min(k - 1, len(pool))))]


def _count_paths(model: GameModel, history: list[tuple[int, Action]], zoned: list[list[Zone]],
                 decks: list[frozenset[str]], counts: Counts) -> None:
    drawn: set[str] = set()
    for i, (p, a) in enumerate(history):
        back = decks[i + 1] - decks[i]
        if back:
            counts.reshuffles += 1
            zone = next(z for z in zoned[i + 1] if z.shuffled and back & set(z.cards))
            counts.extra[f"reshuffle:{zone.name}"] += 1
        if p == CHANCE:
            c = model.drawn_card(a.to_json())
            if c is not None:
                if c in drawn:
                    counts.extra["redraws"] += 1
                    zone = next(z for z in zoned[i + 1] if c in z.cards)
                    if zone.vis != PUBLIC:
                        counts.hidden_redraws += 1
                drawn.add(c)
        if model.automaton_turn(a.to_json(), zoned[i + 1]):
            counts.automaton_turns += 1


def _engine_messages(game: Any, codec: GameCodec, history: list[tuple[int, Action]], observer: int | None,
                     t: int) -> list[tuple[str, bytes | None]]:
    state = game.new_initial_state()
    out = [_messages(codec, state, observer, 0)]
    seq = 0
    for p, a in history[:t]:
        state.apply_action(a)
        if p != CHANCE:
            seq += 1
        out.append(_messages(codec, state, observer, seq))
    return out


def _messages(codec: GameCodec, state: State, observer: int | None, seq: int) -> tuple[str, bytes | None]:
    obs = _dump(state.observation(observer))
    req = None
    if observer is not None and state.current_player() == observer:
        req = decision_request(codec, state, observer, seq + 1)
    return obs, req


def _check_horizon(model: GameModel, game: Any, codec: GameCodec, history: list[tuple[int, Action]],
                   decks: list[frozenset[str]], known: list[frozenset[str]], views: list[str],
                   ref: list[tuple[str, bytes | None]], observer: int | None, t: int, rng: random.Random,
                   ids: frozenset[str], counts: Counts) -> tuple[int, str] | None:
    """Build h' for (observer, t), replay it, compare; return (step, what) of a leak."""
    counts.replays += 1
    # Occurrences: for each chance draw at step i (card c out of the deck in state i+1),
    # its end is the first later state with c back in a shuffled deck.
    keep: dict[int, bool] = {}
    needed_after: dict[int, set[str]] = {}
    kept_draws: list[tuple[int, str]] = []
    for i, (p, a) in enumerate(history[:t]):
        if p != CHANCE:
            continue
        c = model.drawn_card(a.to_json())
        if c is None:
            continue
        last = t
        for j in range(i + 1, t + 1):
            if c in decks[j]:
                last = j - 1
                break
        keep[i] = c in known[max(last, i + 1)]
        if keep[i]:
            kept_draws.append((i, c))
    for i in keep:
        needed_after[i] = {c for j, c in kept_draws if j > i}
    sigma: dict[str, str] = {}
    inv: dict[str, str] = {}

    def image(c: str) -> str:
        return sigma.get(c, c)

    def preimage(c: str) -> str:
        return inv.get(c, c)

    def assign(c: str, d: str) -> None:
        """sigma(c) := d, swapping with the deck card that mapped to d."""
        c2 = preimage(d)
        old = image(c)
        sigma[c], inv[d] = d, c
        sigma[c2], inv[old] = old, c2

    state = game.new_initial_state()
    seq = 0
    knower = Knower(observer)
    knower.update(located(model, _snapshot(state)))
    for u, (p, a) in enumerate(history[:t]):
        if p == CHANCE and u in keep:
            data = a.to_json()
            c = model.drawn_card(data)
            assert c is not None
            if keep[u]:
                d = c
            else:
                same = [o for o in state.legal_actions() if _same_draw(model, o.to_json(), data)]
                pool = [o for o in same if model.drawn_card(o.to_json()) not in needed_after[u]]
                other = [o for o in pool if model.drawn_card(o.to_json()) != c] or pool
                assert other, f"no card to draw instead of {c} at step {u}"
                # the type: ignore below: drawn_card is str | None: asserted below
                d = model.drawn_card(rng.choice(other).to_json())  # type: ignore[assignment]
                assert d is not None
                if d != c:
                    counts.relabelled_draws += 1
            assign(c, d)
            twin = game.action_from_json({**data, **_card_fields(model, data, d)})
        else:
            twin = game.action_from_json(relabel(a.to_json(), sigma, ids))
        legal = state.legal_actions()
        if twin not in legal:  # a relabelled set of cards may be listed in another order
            key = _unordered(twin.to_json())
            twin = next((o for o in legal if _unordered(o.to_json()) == key), twin)
        if twin not in legal:
            counts.stopped_illegal += 1
            if os.environ.get("LEAKMODEL_DEBUG"):
                print("stopped_illegal", observer, t, u, a.to_json(), twin.to_json())
            return None
        state.apply_action(twin)
        if p != CHANCE:
            seq += 1
        fs = _snapshot(state)
        zones = located(model, fs)
        view = model_view(model, fs, zones, knower.update(zones), observer)
        if view != views[u + 1]:
            counts.stopped_public += 1
            if os.environ.get("LEAKMODEL_DEBUG"):
                print("stopped_public", observer, t, u + 1, _first_diff(views[u + 1], view))
            return None
        obs, req = _messages(codec, state, observer, seq)
        counts.observations_checked += 1
        if obs != ref[u + 1][0]:
            return u + 1, f"observation differs: {_first_diff(ref[u + 1][0], obs)}"
        if req is not None:
            counts.decisions_checked += 1
            if req != ref[u + 1][1]:
                return u + 1, "DecisionRequest (legal actions / labels / typed messages) differs"
    return None


def _unordered(data: dict[str, Any]) -> str:
    return _dump({k: sorted(v) if isinstance(v, list) else v for k, v in data.items()})


def _snapshot(state: State) -> dict[str, Any]:
    """A copy of the full state (some engines return their live lists)."""
    # the type: ignore below: orjson.loads is typed Any
    return orjson.loads(orjson.dumps(state.full_state(), option=orjson.OPT_NON_STR_KEYS))  # type: ignore[no-any-return]


def _dump(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()


def _card_fields(model: GameModel, data: dict[str, Any], card: str) -> dict[str, Any]:
    return {k: card for k, v in data.items() if k != "kind" and v == model.drawn_card(data)}


def _same_draw(model: GameModel, other: dict[str, Any], data: dict[str, Any]) -> bool:
    if model.drawn_card(other) is None:
        return False
    c = model.drawn_card(data)
    return {k: v for k, v in other.items() if v != model.drawn_card(other)} == \
        {k: v for k, v in data.items() if v != c}


def _first_diff(a: str, b: str) -> str:
    da, db = json.loads(a), json.loads(b)
    out: list[str] = []

    def walk(x: Any, y: Any, path: str) -> None:
        if len(out) >= 3:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(x.get(k), y.get(k), f"{path}.{k}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (p, q) in enumerate(zip(x, y, strict=True)):
                walk(p, q, f"{path}[{i}]")
        elif x != y:
            out.append(f"{path}: {x!r} vs {y!r}")

    walk(da, db, "")
    return "; ".join(out)
