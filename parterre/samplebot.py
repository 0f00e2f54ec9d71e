"""A sample bot for a deployed stack: ``python -m parterre.samplebot KIND --name NAME``.

Used by the two sample bots of ``docker-compose.yml``. It needs no token
handed to it: it registers bot ``NAME`` if it does not exist, or gives it a
fresh token (the old one stops working), then plays with that token until
stopped — so a restarted container always gets in. Run one process per
name (a second one would take the first one's token away).

Reads the usual settings (``PARTERRE_DATABASE_URL``, ``PARTERRE_REDIS_URL``,
``PARTERRE_REFEREE_ADDRESS``). For real bots use ``parterre bot register``
once and ``parterre bot run`` / ``parterre connect`` with the token.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence

log = logging.getLogger("parterre.samplebot")


def ensure_token(name: str, *, owner: str = "sample") -> tuple[int, str]:
    """Register bot ``name`` or rotate its token; returns ``(bot_id, token)``.

    Raises:
        parterre.embedded.EmbeddedServiceError, ladder.errors.DatabaseUnavailableError: no database/Redis.
    """
    import redis

    from ladder import bots, db
    from parterre import embedded
    from parterre import settings as settings_mod

    services = embedded.resolve(settings_mod.load(), need_redis=True)
    db.migrate(services.database_url)
    pool = db.make_pool(services.database_url, min_size=1, max_size=2)
    client = redis.Redis.from_url(embedded.redis_py_url(services.redis_url))
    try:
        existing = bots.find_bot(pool, name)
        if existing is None:
            return bots.register_bot(pool, name, version="1", owner=owner, redis=client)
        return existing.id, bots.issue_token(pool, existing.id, redis=client)
    finally:
        pool.close()
        client.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Register (or re-key) the bot, then play until stopped; retries while the stack comes up."""
    from bots.cli import run_bot
    from parterre import logging as plog
    from parterre import settings as settings_mod

    p = argparse.ArgumentParser(prog="python -m parterre.samplebot", description=__doc__.split("\n")[0])
    p.add_argument("kind", help="reference bot kind: random or greedy")
    p.add_argument("--name", required=True, help="bot name on the ladder")
    p.add_argument("--max-matches", type=int, default=4, help="matches at once (default 4)")
    p.add_argument("--attempts", type=int, default=30, help="tries to reach the database first (2 s apart)")
    args = p.parse_args(argv)
    plog.configure("bot")
    for attempt in range(1, args.attempts + 1):
        try:
            bot_id, token = ensure_token(args.name)
            break
        except Exception as exc:  # database or Redis not up yet: the stack is starting
            log.warning("cannot register %s yet (try %d): %s", args.name, attempt, exc)
            time.sleep(2)
    else:
        return 1
    address = settings_mod.load().referee_address
    log.info("bot %s (%s) plays on %s", args.name, args.kind, address, extra={"bot_id": bot_id})
    run_bot(args.kind, address, token, name=args.name, max_matches=args.max_matches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
