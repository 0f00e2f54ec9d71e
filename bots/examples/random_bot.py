#!/usr/bin/env python3
"""A Parterre bot in plain Python, without the SDK: the stdio line protocol.

Run it behind the stdio adapter (docs/bots.md)::

    parterre connect --exec "python3 bots/examples/random_bot.py" --token T

It reads one JSON object per line on stdin and, for every
``decision_request``, prints the index of its choice on stdout (and flushes).
Strategy: in Floriferous, take the card with the most Stones on it; in any
other game, a random legal action. Anything written to stderr goes to the
adapter's log file for this child. Needs only the standard library.
"""

import json
import random
import sys
from typing import Any


def choose(request: dict[str, Any]) -> int:
    """Index of the chosen action in ``request["legal_actions"]``."""
    actions = request["legal_actions"]
    if request["game"] == "floriferous":
        takes = [a for a in actions if a["action"].get("kind") == "take"]
        if takes:
            best = max(a["action"].get("stones", 0) for a in takes)
            return int(random.choice([a["index"] for a in takes if a["action"].get("stones", 0) == best]))
    return random.randrange(len(actions))


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "decision_request":
            print(choose(message), flush=True)  # flush: stdout to a pipe is block-buffered
        elif kind == "match_started":
            print(f"match {message['match_id']}: {message['game_string']}, seat {message['seat']}", file=sys.stderr)
        elif kind == "match_ended":
            print(f"match {message['match_id']} ended: rank {message['rank']}, {message['verdict']}", file=sys.stderr)
        # other types may be added later: ignore them


if __name__ == "__main__":
    main()
