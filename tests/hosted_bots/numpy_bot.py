"""A hosted Python bot of the ``python3.11-numpy`` runtime (docs/hosted.md): numpy chooses its moves.

Each legal action scores the Stones it takes (``action.stones``, 0 where the game has none) plus noise from a
seeded ``numpy.random.Generator`` (the first argument, default 7); it plays the argmax. At its start it prints
numpy's version and file to stderr, so that a test sees whose numpy it got."""

import json
import sys

import numpy as np

rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
print(f"numpy {np.__version__} {np.__file__}", file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "decision_request":
        continue
    legal = msg["legal_actions"]
    stones = np.array([float(a["action"].get("stones", 0)) if isinstance(a["action"], dict) else 0.0 for a in legal])
    print(int(np.argmax(stones + rng.random(len(legal)))), flush=True)
