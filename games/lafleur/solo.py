"""The solo opponent automaton (a mixin of :class:`LaFleurState`).

Rulebook: La Fleur, "Solo Mode" and "Solo Difficulties & Challenges". The
opponent is player 1 of the state (no seat, no decisions): it never has
Artisans or a Companion, keeps its Flower cards face-down, and on its turn

1. discards the rightmost face-up Flower card;
2. takes the top Garden Feature (its ability scores when applicable; rewards
   tied to Companions, Garden Features or Artisans never do);
3. draws one Flower card per Visitor in the Visitor area and gains the Allure
   on them (a Wild card: the type most frequent among the Visitors, the
   first displayed on a tie; none if no Visitor has a type), discarding them
   in the order drawn;
4. (hardest) gains the Allure of the first 3 Visitors displayed (2 if only 2).

Normal and harder opponents also gain, each round after the Visitors are
revealed, 1 Allure of the type most frequent among the Visitors (drawing more
Visitors while none has a type; those go to the bottom of the deck).

Decisions (see docs/rules/la-fleur.md): the opponent's Garden Features give
it no Allure (its Allure comes from steps 3-4 and the difficulty); the round
gain happens at the start of the round, before anyone places an Artisan.
"""

from __future__ import annotations

from collections.abc import Sequence

from mypy_extensions import trait

from games.lafleur.cards import D_FEATURE, D_FLOWER, D_VISITOR, FEATURES, FLOWERS, VISITOR_ALLURE
from games.lafleur.constants import P_PLACE
from games.lafleur.state_protocol import LaFleurStateProtocol


def most_frequent_type(visitors: Sequence[int]) -> int:
    """Allure type most frequent among ``visitors`` (first displayed wins a tie); -1 if none has one."""
    counts = [0] * 5
    first = [len(visitors)] * 5
    for i, v in enumerate(visitors):
        t = VISITOR_ALLURE[v]
        if t >= 0:
            counts[t] += 1
            first[t] = min(first[t], i)
    best = max(counts)
    if best == 0:
        return -1
    return min((t for t in range(5) if counts[t] == best), key=lambda t: first[t])


@trait  # a mypyc trait: the compiled state class may mix several in (docs/architecture.md)
class SoloMixin(LaFleurStateProtocol):
    """The solo opponent's turn, its round gain and the player's own turn in solo."""

    def _slide(self: LaFleurStateProtocol) -> None:
        """Rulebook: "Solo Mode": slide Garden Features down and Flower cards to the right before refilling."""
        cards = [x for x in self._market if x >= 0]
        self._market = [-1] * (len(self._market) - len(cards)) + cards
        feats = [x for x in self._display if x >= 0]
        self._display = feats + [-1] * (len(self._display) - len(feats))

    def _t_solo_player(self: LaFleurStateProtocol) -> None:
        """Rulebook: "Solo Mode", TURNS: place all your Artisans on your turn, 1 at a time."""
        if not all(self._placed[0]):
            self._tasks.append(("_t_solo_player",))
            self._ask(P_PLACE, 0)

    def _t_automaton(self: LaFleurStateProtocol) -> None:
        for i in range(len(self._market) - 1, -1, -1):  # 1. the rightmost Flower card
            x = self._market[i]
            if x >= 0:
                self._market[i] = -1
                self._discards[D_FLOWER].append(x)
                break
        t = [("_t_draw", D_FEATURE, ("auto_feature",)), ("_t_auto_flowers",)]
        if self._difficulty == "hardest":
            t.append(("_t_auto_hardest",))
        self._push(t)

    def _auto_feature(self: LaFleurStateProtocol, x: int) -> None:
        """2. The top Garden Feature goes in front of the opponent."""
        self._features[1].append(x)
        counts = FEATURES[x].counts
        for t in range(5):
            self._feature_allure[1][t] += counts[t]
        ab = FEATURES[x].ability
        if ab.timing == "when_acquired":
            self._apply_ability(1, ab, FEATURES[x].id)

    def _t_auto_flowers(self: LaFleurStateProtocol) -> None:
        """3. One Flower card per Visitor present."""
        self._push([("_t_draw", D_FLOWER, ("auto_allure",))] * len(self._visitors))

    def _auto_allure(self: LaFleurStateProtocol, x: int) -> None:
        card = FLOWERS[x]
        if card.symbols:
            for t in card.symbols:
                self._allure[1][t] += 1
        else:
            t = most_frequent_type(self._visitors)
            if t >= 0:
                self._allure[1][t] += 1
        self._discards[D_FLOWER].append(x)

    def _t_auto_hardest(self: LaFleurStateProtocol) -> None:
        """4. Hardest: the Allure of the first 3 Visitors displayed (or 2)."""
        for v in self._visitors[:3]:
            t = VISITOR_ALLURE[v]
            if t >= 0:
                self._allure[1][t] += 1

    def _t_solo_allure(self: LaFleurStateProtocol) -> None:
        """Normal/harder: +1 Allure of the most frequent type among the Visitors."""
        t = most_frequent_type(self._visitors + self._visitor_search)
        if t >= 0 or not self._available(D_VISITOR) or len(self._visitor_search) > 40:
            if t >= 0:
                self._allure[1][t] += 1
            self._visitor_bottom.extend(self._visitor_search)
            self._visitor_search: list[int] = []
            return
        self._tasks.append(("_t_solo_allure",))
        self._draw(D_VISITOR, ("solo_extra",))
