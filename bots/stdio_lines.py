"""The ``parterre-stdio/1`` line protocol (docs/bots.md): the JSON lines a bot program reads on
stdin and the answers it writes on stdout, without any process handling.

:mod:`bots.stdio` runs the program and speaks this protocol to it; :mod:`workers.hosting.head_to_head`
speaks it to hosted bots in validation games. Lines are ASCII JSON with a fixed key order, so a
shell script can cut the first fields out without a JSON parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from enum import Enum
from typing import Any

from bots.sdk import DecisionRequest, MatchInfo, MatchResult, decode_action, decode_observation
from proto.contract import DEPRECATED_STDIO_KEYS, cap_debug

PROTOCOL = "parterre-stdio/1"
"""Version of the line protocol, sent in every ``match_started`` line."""

LINE_LIMIT = 1 << 20
"""Longest line (bytes) read from a child; a longer one counts as garbage."""

_INDEX = re.compile(r"[+-]?[0-9]+")
_INT32 = range(-(2**31), 2**31)


class Answer(Enum):
    """What a child's reply means when it is not a plain index."""

    GARBAGE = "garbage"
    """Not an integer: a Decision with no index is sent (``illegal_action``)."""
    RESIGN = "resign"
    """The child said ``resign``, or exited: a Resign is sent (``resigned``)."""
    NOTHING = "nothing"
    """No answer (the match ended first, or an adapter error): nothing is sent."""


def parse_answer(line: str) -> int | Answer:
    """Read one line of a child's stdout as an answer (its debug text left out: :func:`parse_answer_debug`).

    Returns:
        The index (any int32, even out of range: the referee judges it),
        :attr:`Answer.RESIGN` for ``resign``, else :attr:`Answer.GARBAGE`.

    Examples:
        >>> parse_answer(" 3 "), parse_answer("resign"), parse_answer("3.0")
        (3, <Answer.RESIGN: 'resign'>, <Answer.GARBAGE: 'garbage'>)
    """
    return parse_answer_debug(line)[0]


def parse_answer_debug(line: str) -> tuple[int | Answer, str]:
    """Read one line of a child's stdout as an answer and its debug text.

    An answer is the index in decimal, ``resign``, or (contract revision 3) a JSON object
    ``{"index": N, "debug": "..."}`` whose ``debug`` (a string, optional) is the decision's debug
    text, cut to ``proto.contract.DEBUG_MAX_BYTES`` (docs/bots.md, "Debug text"). An object
    without an integer ``index``, or whose ``debug`` is not a string, is garbage.

    Examples:
        >>> parse_answer_debug('{"index": 2, "debug": "most Stones"}')
        (2, 'most Stones')
        >>> parse_answer_debug('{"index": 2, "debug": 7}'), parse_answer_debug("4")
        ((<Answer.GARBAGE: 'garbage'>, ''), (4, ''))
    """
    text = line.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            return Answer.GARBAGE, ""
        index, debug = (obj.get("index"), obj.get("debug", "")) if isinstance(obj, dict) else (None, None)
        if type(index) is not int or index not in _INT32 or not isinstance(debug, str):
            return Answer.GARBAGE, ""
        return index, cap_debug(debug)
    return _plain_answer(text), ""


def _plain_answer(text: str) -> int | Answer:
    if text.lower() == "resign":
        return Answer.RESIGN
    if _INDEX.fullmatch(text):
        value = int(text)
        if value in _INT32:
            return value
    return Answer.GARBAGE


def _line(obj: Mapping[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode("ascii")


def match_started_line(info: MatchInfo) -> bytes:
    """The ``match_started`` line for ``info`` (keys in a fixed order, ASCII only)."""
    return _line({
        "type": "match_started", "protocol": PROTOCOL, "match_id": info.match_id, "game": info.game,
        "game_string": info.game_string, "options": info.options, "seat": info.seat,
        "num_players": info.num_players, "players": info.players, "time_control": info.time_control,
        "seed_commitment": info.seed_commitment, "attempt": info.attempt,
    })


def with_deprecated_keys(game: str, observation: Any) -> Any:
    """``observation`` with each renamed player key also under its old name, for one contract
    revision (:data:`proto.contract.DEPRECATED_STDIO_KEYS`; docs/bots.md, "Contract revisions"):
    a stdio bot that still reads the old key keeps reading the same value."""
    renamed = DEPRECATED_STDIO_KEYS.get(game.partition("(")[0])
    if not renamed or not isinstance(observation, dict) or not isinstance(observation.get("players"), list):
        return observation
    for record in observation["players"]:
        if isinstance(record, dict):
            for old, new in renamed.items():
                if new in record and old not in record:
                    record[old] = record[new]
    return observation


def decision_request_line(request: DecisionRequest) -> bytes:
    """The ``decision_request`` line: ``type``, ``match_id``, ``seq``, ``num_actions`` come
    first, so that a shell script can cut them out without a JSON parser."""
    raw = request.raw
    return _line({
        "type": "decision_request", "match_id": raw.match_id, "seq": raw.seq, "num_actions": len(raw.legal_actions),
        "game": raw.game, "seat": raw.seat, "deadline_ms": raw.deadline_ms, "time_left_ms": raw.time_left_ms,
        "attempt": raw.attempt, "observation": with_deprecated_keys(raw.game, decode_observation(raw.observation)),
        "legal_actions": [{"index": i, "label": a.label, "action": decode_action(a)}
                          for i, a in enumerate(raw.legal_actions)],
    })


def match_ended_line(result: MatchResult) -> bytes:
    """The ``match_ended`` line (``rank``/``verdict`` are this seat's, null when unknown)."""
    return _line({
        "type": "match_ended", "match_id": result.match_id, "seat": result.seat, "status": result.status,
        "reason": result.reason, "rank": result.rank, "verdict": result.verdict, "ranks": result.ranks,
        "scores": result.scores, "verdicts": result.verdicts, "seed": result.seed, "attempt": result.attempt,
    })
