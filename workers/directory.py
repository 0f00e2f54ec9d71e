"""Where the referees are and which bots are online: the presence referees
publish in Redis (referee/cluster.py; referee/README.md "Several referees").

Workers do not import ``referee``; the key names below are the contract, and
``tests/referee/test_multireferee.py`` checks they equal ``referee.cluster``'s.

* ``parterre:referees``: set of referee ids (``parterre`` is the namespace,
  ``PARTERRE_CLUSTER_NAMESPACE``);
* ``parterre:referee:<id>``: JSON ``{"id", "address", "control_address",
  "relay_address", "rooms", "at", "bots": {"<bot id>": {"free", "capacity",
  "sessions", "games"}}}``, expiring a few seconds after the referee stops
  refreshing it (so a dead referee and its bots disappear on their own).
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

NAMESPACE = "parterre"
"""Default prefix of the cluster's keys; ``PARTERRE_CLUSTER_NAMESPACE`` overrides it."""
REFEREES_KEY = "{ns}:referees"
REFEREE_KEY = "{ns}:referee:{id}"


def namespace() -> str:
    """The cluster namespace from the environment (``PARTERRE_CLUSTER_NAMESPACE``, default ``parterre``)."""
    from workers.settings import settings

    return settings().cluster_namespace


@dataclass(frozen=True, slots=True)
class BotPresence:
    """A bot connected to one referee.

    Attributes:
        free: matches it can still take there.
        capacity: matches it plays at once there (all its streams).
        games: game names it announced (empty: it did not say; it may play any).
    """

    free: int
    capacity: int
    games: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RefereeInfo:
    """One live referee.

    Attributes:
        id: referee id.
        address: its bot endpoint.
        control_address: where ``MatchControl`` is served.
        rooms: matches it is running.
        bots: bot id -> :class:`BotPresence`.
    """

    id: str
    address: str
    control_address: str
    rooms: int = 0
    bots: dict[int, BotPresence] = field(default_factory=dict)


def _redis_client(redis_url: str, *, socket_timeout_s: float = 2.0) -> Any:
    import redis

    url = redis_url
    if url.startswith("redis+socket://"):
        url = "unix://" + url[len("redis+socket://"):]
    return redis.Redis.from_url(url, socket_timeout=socket_timeout_s, socket_connect_timeout=2.0)


def read_referees(redis_url: str | None = None, *, client: Any = None, ns: str | None = None) -> list[RefereeInfo]:
    """Every referee whose presence has not expired, sorted by id.

    Args:
        redis_url: the shared Redis (redis-py or Celery ``redis+socket://`` form).
        client: a redis-py client to use instead.
        ns: key namespace (default :func:`namespace`).

    Returns:
        The live referees; an empty list when Redis cannot be reached (logged).
    """
    try:
        ns = ns or namespace()
        r = client if client is not None else _redis_client(redis_url or "")
        ids = sorted(x.decode() if isinstance(x, bytes) else str(x) for x in r.smembers(REFEREES_KEY.format(ns=ns)))
        if not ids:
            return []
        values = r.mget([REFEREE_KEY.format(ns=ns, id=i) for i in ids])
    except Exception as exc:  # redis raises several connection classes
        log.warning("cannot read referee presence from Redis: %s", exc)
        return []
    out = []
    for rid, raw in zip(ids, values, strict=True):
        if raw is None:
            continue
        try:
            rec = json.loads(raw)
            bots = {
                int(b): BotPresence(int(v.get("free", 0)), int(v.get("capacity", 0)), tuple(v.get("games", ())))
                for b, v in rec.get("bots", {}).items()
            }
            out.append(RefereeInfo(rid, str(rec["address"]), str(rec.get("control_address") or rec["address"]),
                                   int(rec.get("rooms", 0)), bots))
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("ignoring malformed presence of referee %s", rid)
    return out


def online_bots(referees: Sequence[RefereeInfo], game: str | None = None) -> dict[int, BotPresence]:
    """Bots connected to at least one live referee (merged over referees).

    Args:
        referees: from :func:`read_referees`.
        game: keep only bots that announced this game, or announced none.
    """
    merged: dict[int, BotPresence] = {}
    for ref in referees:
        for bot_id, p in ref.bots.items():
            if game is not None and p.games and game not in p.games:
                continue
            old = merged.get(bot_id)
            if old is None:
                merged[bot_id] = p
            else:
                merged[bot_id] = BotPresence(old.free + p.free, old.capacity + p.capacity,
                                             tuple(sorted(set(old.games) | set(p.games))))
    return merged


def choose_referees(configured: Sequence[str], referees: Sequence[RefereeInfo], seat_bot_ids: Sequence[int],
                    *, rng: random.Random | None = None) -> list[str]:
    """``MatchControl`` addresses to try for a match, best first.

    A referee is better when more of the match's bots are connected to it
    with free capacity (fewer seats to relay), then when it runs fewer rooms;
    equal ones are shuffled. Configured addresses that no presence record
    names (a referee without Redis, or not yet published) come last, in the
    order given.

    Args:
        configured: addresses from ``PARTERRE_REFEREE_ADDRESS`` (comma-separated).
        referees: live referees (may be empty: then ``configured`` is returned).
        seat_bot_ids: the match's bots.
        rng: randomness for ties (tests pass a seeded one).
    """
    rng = rng or random.Random()
    scored = []
    for ref in referees:
        here = sum(1 for b in seat_bot_ids if ref.bots.get(int(b), BotPresence(0, 0)).free > 0)
        scored.append((-here, ref.rooms, rng.random(), ref.control_address))
    ordered = [addr for *_, addr in sorted(scored)]
    for addr in configured:
        if addr and addr not in ordered:
            ordered.append(addr)
    return ordered
