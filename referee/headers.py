"""gRPC metadata keys and sentinels shared by the referee's services and its cluster links."""

from __future__ import annotations

SERVICE_TOKEN_HEADER = "x-parterre-service-token"
"""Metadata key workers (and relaying referees) put the service token in."""
RELAY_BOT_HEADER = "x-parterre-relay-bot"
"""Metadata of a relay stream: the bot id it carries."""
RELAY_FROM_HEADER = "x-parterre-relay-from"
"""Metadata of a relay stream: the id of the referee the bot is connected to."""
RELAY_CLOSE_NONCE = -1
"""``Pong.nonce`` a lender sends last on a relay it closes on purpose (the bot left, or the
loan is over). A relay that ends without it ended abruptly: its referee died. (A stream
cancelled by its client reads as a plain end on the server, so the end alone cannot tell.)"""
CLOSING_ERROR_HEADER = "x-parterre-error-bin"
"""Trailing metadata of every bot stream the referee ends or refuses: the serialized ``RefereeError``
(code and reason) of the closing ``Error`` message. It arrives with the gRPC status even when that
message could not be written (a write still held by flow control, a window that stayed full), so a
client always learns why its stream was closed (docs/bots.md, "Reconnecting")."""
