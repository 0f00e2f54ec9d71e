"""The Redis broker transport of the workers: kombu's, with a lost connection's cleanup made safe.

When Redis goes away under a running worker, Celery first collects the broken
connection (kombu detaches the transport from it), then closes it; closing a
channel that still holds unacknowledged messages tries to put them back on the
queue through the detached transport, and kombu fails there with
``AttributeError: 'NoneType' object has no attribute 'hostname'``. That error is
not a connection error, so the worker's consumer ends with "Unrecoverable error"
instead of reconnecting (docs/faults.md D-06).

Here that restore raises a connection error instead, which Celery ignores as it
does any error of a lost connection; the messages are not lost: they stay in
Redis's unacknowledged set and are delivered again after the visibility timeout
(``workers.app.VISIBILITY_TIMEOUT_S``), and when Redis came back empty the
claim in PostgreSQL is the truth and the reaper queues the match again
(docs/architecture.md "Exactly-once recording").
"""

from __future__ import annotations

from typing import Any

import redis
from kombu import transport as kombu_transport
from kombu.transport import redis as kombu_redis


class QoS(kombu_redis.QoS):
    """kombu's Redis QoS whose restore of unacknowledged messages fails as a connection error when
    the channel's transport was detached from its connection (the connection was collected)."""

    def restore_unacked(self, client: Any = None) -> Any:
        """Put the unacknowledged messages back on their queues (kombu's), or raise.

        Raises:
            redis.exceptions.ConnectionError: the broker connection is gone (its transport detached).
        """
        if client is None and getattr(self.channel.connection, "client", None) is None:
            raise redis.exceptions.ConnectionError("broker connection lost: unacknowledged messages are "
                                                   "delivered again after the visibility timeout")
        return super().restore_unacked(client)


class Channel(kombu_redis.Channel):
    """kombu's Redis channel with :class:`QoS`."""

    QoS = QoS


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with :class:`Channel`."""

    Channel = Channel


def install() -> None:
    """Make ``redis://`` (and ``redis+socket://``) broker URLs use :class:`Transport` in this process."""
    kombu_transport.TRANSPORT_ALIASES["redis"] = f"{__name__}:Transport"
