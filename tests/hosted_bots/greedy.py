"""A hosted Python bot (docs/hosted.md): the project's greedy strategy, random with probability P.

P is the first argument (0 = the greedy bot itself). It uses the SDK the sandbox offers on
PYTHONPATH=/sdk (``bots.strategies`` and ``games``) and speaks the stdio line protocol."""

import json
import random
import sys

from bots.strategies import STRATEGIES

P = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
rng = random.Random(sys.argv[2] if len(sys.argv) > 2 else "hosted")
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "decision_request":
        continue
    legal = msg["legal_actions"]
    strategy = STRATEGIES.get(("greedy", msg["game"]))
    if strategy is None or rng.random() < P:
        print(rng.randrange(len(legal)), flush=True)
    else:
        print(strategy(msg["observation"], [a["action"] for a in legal], msg["seat"]), flush=True)
