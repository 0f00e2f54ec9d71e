"""A complete Floriferous bot with the Python SDK (docs/bots.md, "Python").

Strategy: take the card with the most Stones on it, a face-up card before a
face-down one; in any other decision (or game), a random legal action.

    python floriferous_bot.py --token T [--address 127.0.0.1:50051]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
from typing import Any

from bots.sdk import Bot, DecisionRequest, MatchResult


class FloriferousBot(Bot):
    """Greedy on Stones; reads only the legal actions' JSON."""

    name = "floriferous-example"
    games = ("floriferous",)

    def __init__(self, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rng = random.Random(seed)

    def choose(self, request: DecisionRequest) -> int:
        # request.legal_actions: [{"kind": "take", "row": 3, "card": "F12", "stones": 1}, ...]
        # request.observation: the FloriferousObservation as a dict (garden, players, bounties, ...)
        def score(action: dict[str, Any]) -> float:
            if action.get("kind") != "take":
                return 0.0
            return float(1 + 2 * action.get("stones", 0) + (1 if action.get("card") else 0))

        scores = [score(a) for a in request.legal_actions]
        best = max(scores)
        index = self.rng.choice([i for i, s in enumerate(scores) if s == best])
        # shown only to this bot's owner, beside the step (docs/bots.md, "Debug text")
        request.debug(f"best of {len(scores)} actions, score {best:g}; chose {request.labels[index]}")
        return index

    def on_match_ended(self, result: MatchResult) -> None:
        logging.info("match %d: rank %s, %s (%s)", result.match_id, result.rank, result.verdict, result.reason)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token", default=os.environ.get("PARTERRE_BOT_TOKEN"), help="default $PARTERRE_BOT_TOKEN")
    parser.add_argument("--address", default=os.environ.get("PARTERRE_REFEREE_ADDRESS", "127.0.0.1:50051"))
    parser.add_argument("--max-matches", type=int, default=1, help="matches at once")
    args = parser.parse_args()
    if not args.token:
        parser.error("a token is required: --token T or PARTERRE_BOT_TOKEN")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    FloriferousBot(max_concurrent_matches=args.max_matches).run(args.address, args.token)


if __name__ == "__main__":
    main()
