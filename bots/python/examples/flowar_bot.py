"""A complete Flowar bot with the Python SDK (docs/bots.md, "Python").

Strategy, one decision at a time: deliver every Contract it can; take cards
and lines from the grid; place Workers where it costs the fewest Coins; avoid
Loans and firing Workers unless nothing else is legal. Ties are broken at
random.

    python flowar_bot.py --token T [--address 127.0.0.1:50051]
"""

from __future__ import annotations

import argparse
import logging
import os
import random
from typing import Any

from bots.sdk import Bot, DecisionRequest, MatchResult

KIND_SCORE = {"deliver": 10, "take_line": 6, "take_card": 6, "keep_contract": 1, "place": 4,
              "take_loan": -5, "fire": -3}


class FlowarBot(Bot):
    """Delivers first, places Workers cheaply, stays out of debt."""

    name = "flowar-example"
    games = ("flowar",)

    def __init__(self, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rng = random.Random(seed)

    def choose(self, request: DecisionRequest) -> int:
        # request.legal_actions: [{"kind": "place", "space": "contract", "worker": "trenti", "coins": 1}, ...]
        def score(action: dict[str, Any]) -> float:
            value = KIND_SCORE.get(action.get("kind", ""), 0)
            if action.get("kind") == "place":
                value -= 0.5 * action.get("coins", 0)
            return value

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
    FlowarBot(max_concurrent_matches=args.max_matches).run(args.address, args.token)


if __name__ == "__main__":
    main()
