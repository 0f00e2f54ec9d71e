"""The Garden layout for each player count.

Rulebook: Floriferous, "Game Setup" (4 players), "Game Setup Reference —
2-Player and 3-Player Setup", "2-Player Extended Setup" and "Solo Setup".

Rows keep the rulebook's numbers (1..5, row 5 is always the Desire row), so a
2-player garden has rows 1, 3 and 5. Columns are numbered 1..5 (1..7 when
extended) in the order the Gardener Pawns visit them on the current day: left
to right on days 1 and 3, right to left on day 2. Both setup patterns (face-down
2nd/4th cards of row 1; Stones on the 1st/3rd/5th cards of row 3; Stones on all
of row 4) read the same from either end, so the visiting order fully describes
the layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

DESIRE_ROW: Final = 5
"""Rulebook number of the Desire row."""


@dataclass(frozen=True, slots=True)
class Layout:
    """The garden of one day, as data.

    Attributes:
        rows: rulebook row numbers in play, top to bottom (last = Desire row).
        columns: columns per day (5, or 7 extended) = rounds per day.
        face_down: per cell (``row_index * columns + column_index``), True when
            setup deals that card face-down.
        stone: per cell, True when setup puts a Stone on that card.
        pawn_rows: row indexes where the pawns start, top first (the Garden rows,
            never the Desire row); the starting player takes the first.
        row_index: ``row_index[rulebook_row]`` = index into ``rows``, -1 if absent.
    """

    rows: tuple[int, ...]
    columns: int
    face_down: tuple[bool, ...]
    stone: tuple[bool, ...]
    pawn_rows: tuple[int, ...]
    row_index: tuple[int, ...]

    @property
    def num_rows(self) -> int:
        """Rows in play (3, 4 or 5)."""
        return len(self.rows)

    @property
    def desire_index(self) -> int:
        """Row index of the Desire row (the last row)."""
        return len(self.rows) - 1

    @property
    def cells(self) -> int:
        """Cells per day."""
        return len(self.rows) * self.columns

    def garden_cells(self) -> int:
        """Garden cards dealt per day."""
        return (len(self.rows) - 1) * self.columns


ROWS_BY_PLAYERS: Final[dict[int, tuple[int, ...]]] = {
    1: (1, 3, 5),
    2: (1, 3, 5),
    3: (1, 3, 4, 5),
    4: (1, 2, 3, 4, 5),
}
"""Rows dealt per player count ("do not deal out row 2" for 3 players, "rows 2
and 4" for 2 players; solo uses the 2-player layout)."""


def _pattern_column(column: int) -> int:
    # "The 6th column is set up like the 4th, and the 7th is set up like the 5th."
    return {6: 4, 7: 5}.get(column, column)


def is_face_down(row: int, column: int) -> bool:
    """Setup deals this card face-down: 2nd and 4th cards of row 1 (6th like 4th).

    Args:
        row: rulebook row number.
        column: 1-based column.
    """
    return row == 1 and _pattern_column(column) in (2, 4)


def has_stone(row: int, column: int) -> bool:
    """Setup puts a Stone here: 1st/3rd/5th of row 3 (7th like 5th), all of row 4."""
    return (row == 3 and _pattern_column(column) in (1, 3, 5)) or row == 4


def layout_for(players: int, extended: bool = False) -> Layout:
    """The layout for a player count (1 = solo, which uses the 2-player layout).

    Raises:
        ValueError: players not in 1..4, or extended with more than 2 players.
    """
    if players not in ROWS_BY_PLAYERS:
        raise ValueError(f"Floriferous is for 1 to 4 players, not {players}")
    if extended and players > 2:
        raise ValueError("the extended setup is for 1 or 2 players")
    rows = ROWS_BY_PLAYERS[players]
    columns = 7 if extended else 5
    face_down = tuple(is_face_down(r, c) for r in rows for c in range(1, columns + 1))
    stone = tuple(has_stone(r, c) for r in rows for c in range(1, columns + 1))
    row_index = tuple(rows.index(r) if r in rows else -1 for r in range(DESIRE_ROW + 1))
    return Layout(
        rows=rows, columns=columns, face_down=face_down, stone=stone,
        pawn_rows=tuple(range(len(rows) - 1)), row_index=row_index,
    )
