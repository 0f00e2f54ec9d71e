"""``parterre remote``: ids are ASCII digits; anything else is a name or a one-line error."""

from __future__ import annotations

import pytest

from parterre.commands.common import CliError
from parterre.commands.remote import _ids, bot_ids


@pytest.mark.parametrize("text", ["²", "１２", "1,²", "1,x"])
def test_ids_are_ascii_digits_or_a_one_line_error(text: str) -> None:
    with pytest.raises(CliError, match="expected comma-separated integers"):
        _ids("--players", text)
    assert _ids("--players", " 2, 3 ,") == [2, 3]


def test_a_unicode_digit_bot_item_is_looked_up_as_a_name(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def fake_call(method: str, path: str, **_: object) -> object:
        calls.append(path)
        if path == "/api/account/bots":
            return [{"name": "１２", "id": 99}]
        if path.startswith("/api/house-bots"):  # a list, as the site answers
            return [{"name": "house-random", "bot_id": 3}]
        return {"rows": [], "pages": 1}

    monkeypatch.setattr("parterre.commands.remote.call", fake_call)
    # Full-width "１２" is the caller's bot 99, not bot 12; "7" is an id and needs no lookup.
    assert bot_ids("１２,7", "floriferous(players=2)", {}) == [99, 7]
    with pytest.raises(CliError, match="no bot named '²'"):
        bot_ids("²,7", "floriferous(players=2)", {})
