"""The client's HTTP/2 keepalive pings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Keepalive"]


@dataclass(frozen=True)
class Keepalive:
    """HTTP/2 keepalive pings the client sends while a call is open (an attached session's stream).

    A ping every ``time`` seconds keeps a quiet stream's connection inside the idle timeouts of load
    balancers, NATs and firewalls (60 s and more is common); a server whose answer takes longer than
    ``timeout`` seconds counts as gone, the connection is closed and attached sessions re-attach
    (within 50 s by default). The Parkway server accepts client pings at any interval.
    ``Keepalive(enabled=False)`` sends none.

    Raises:
        ValueError: when ``time`` or ``timeout`` is not a positive number of seconds.
    """

    enabled: bool = True
    time: float = 30.0
    timeout: float = 20.0

    def __post_init__(self) -> None:
        for name in ("time", "timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"Keepalive.{name}: expected seconds, got {value!r}")
            if not math.isfinite(value) or value <= 0 or value * 1000 > 2**31 - 1:
                raise ValueError(
                    f"Keepalive.{name}: expected a positive number of seconds, got {value!r}"
                )

    def channel_options(self) -> list[tuple[str, Any]]:
        """The grpcio channel options of these pings; none when disabled."""
        if not self.enabled:
            return []
        return [
            ("grpc.keepalive_time_ms", round(self.time * 1000)),
            ("grpc.keepalive_timeout_ms", round(self.timeout * 1000)),
            # Pings only while a call is open: an idle channel has no stream to keep alive.
            ("grpc.keepalive_permit_without_calls", 0),
            # grpcio stops pinging after 2 pings without data frames by default; an attached
            # session's stream may carry none for a long time, so the count is unlimited.
            ("grpc.http2.max_pings_without_data", 0),
        ]
