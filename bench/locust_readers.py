"""Locust readers of the web site, for ``bench/bench_ten_million.py`` (run by it with ``locust --headless``).

Each simulated reader reads one page, then waits (``PARTERRE_BENCH_WAIT``: ``low,high`` seconds,
drawn uniformly; default ``0.5,1.5``), and again: half of the time a game's leaderboard (a game
drawn at random; page 1 in rank order four times in five, else another page and sort), half of the
time a bot page (a bot drawn uniformly among ``PARTERRE_BENCH_BOTS`` ids). The requests are named
``leaderboard`` and ``bot page`` in Locust's statistics, whose 99th percentiles the bench judges.
"""

from __future__ import annotations

import os
import random

from locust import FastHttpUser, between, task

BOTS = int(os.environ.get("PARTERRE_BENCH_BOTS", "10000"))
GAMES = ("floriferous", "lafleur", "flowar")
SORTS = ("rank", "name", "elo", "games", "win_rate", "avg_score", "last_played")
_low, _high = (float(x) for x in os.environ.get("PARTERRE_BENCH_WAIT", "0.5,1.5").split(","))


class Reader(FastHttpUser):
    """A visitor reading leaderboards and bot pages."""

    wait_time = between(_low, _high)

    @task
    def leaderboard(self) -> None:
        game = random.choice(GAMES)
        if random.random() < 0.8:
            path = f"/leaderboard/{game}"
        else:
            path = f"/leaderboard/{game}?page={random.randint(1, 20)}&sort={random.choice(SORTS)}"
        self.client.get(path, name="leaderboard")

    @task
    def bot_page(self) -> None:
        self.client.get(f"/bots/{random.randint(1, BOTS)}", name="bot page")
