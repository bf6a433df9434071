"""The in-memory channel layer of a single-process install, with a cheaper sweep.

Channels' ``InMemoryChannelLayer`` sweeps expired messages and group entries on
every ``receive`` and ``group_send``: a walk over every channel and every group
membership. Each consumer calls ``receive`` once when it starts and again after
each message, so a storm of N reconnects walks N times over ~2N memberships,
about a millisecond of CPU per phone at 1,500 phones. Here the sweep runs at
most once every :attr:`InMemoryChannelLayer.sweep_every` seconds; messages
expire after ``expiry`` (60 s) and memberships after ``group_expiry`` (a day),
so sweeping a second late changes nothing a client can see.
"""

from __future__ import annotations

import time

from channels.layers import InMemoryChannelLayer as ChannelsInMemoryChannelLayer


class InMemoryChannelLayer(ChannelsInMemoryChannelLayer):
    """Channels' in-memory layer; expired messages and memberships are swept at
    most once every ``sweep_every`` seconds instead of on every call."""

    #: Seconds between two sweeps of expired messages and group memberships.
    sweep_every = 1.0

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._swept_at = float("-inf")  # time.monotonic() of the last sweep

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._swept_at < self.sweep_every:
            return
        self._swept_at = now
        super()._clean_expired()

    async def flush(self) -> None:
        await super().flush()
        self._swept_at = float("-inf")
