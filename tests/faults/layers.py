"""Test channel layers that misbehave on purpose, wrapping Channels' in-memory layer.

- ``LossyChannelLayer`` drops a seeded fraction of group deliveries (one channel
  of one ``group_send``), as an overloaded or flapping Redis might.
- ``OutageChannelLayer`` can be taken down (every call raises ``ConnectionError``,
  pending receives fail at once) and brought back *empty*, having forgotten every
  group and queued message, as a Redis restarted without persistence does.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer


class LossyChannelLayer(InMemoryChannelLayer):
    """Drops each delivery of a ``group_send`` with probability ``drop`` (seeded)."""

    def __init__(self, drop: float = 0.05, seed: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.drop = drop
        self.rng = random.Random(seed)
        self.delivered = 0
        self.dropped: list[tuple[str, str, dict]] = []  # (group, channel, message)

    async def group_send(self, group: str, message: dict) -> None:
        self._clean_expired()
        for channel in list(self.groups.get(group, {})):  # join order: reproducible
            if self.rng.random() < self.drop:
                self.dropped.append((group, channel, message))
                continue
            self.delivered += 1
            with contextlib.suppress(ChannelFull):
                await self.send(channel, message)


class OutageChannelLayer(InMemoryChannelLayer):
    """An in-memory layer with an off switch: ``go_down()`` and ``come_back_empty()``."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.down_since: float | None = None
        self._outage = asyncio.Event()
        self.failures = 0

    def _check(self) -> None:
        if self.down_since is not None:
            self.failures += 1
            raise ConnectionError("channel layer is down (test outage)")

    def go_down(self) -> None:
        self.down_since = time.monotonic()
        self._outage.set()

    async def come_back_empty(self) -> None:
        await self.flush()  # groups and queued messages are gone
        self.down_since = None
        self._outage = asyncio.Event()

    async def receive(self, channel: str) -> dict:
        self._check()
        outage = self._outage
        receiving = asyncio.ensure_future(super().receive(channel))
        waiting = asyncio.ensure_future(outage.wait())
        try:
            await asyncio.wait({receiving, waiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            if not receiving.done():
                receiving.cancel()
        if receiving.done() and not receiving.cancelled():
            return receiving.result()
        self._check()
        raise ConnectionError("channel layer went down (test outage)")

    async def send(self, channel: str, message: dict) -> None:
        self._check()
        await super().send(channel, message)

    async def group_add(self, group: str, channel: str) -> None:
        self._check()
        await super().group_add(group, channel)

    async def group_send(self, group: str, message: dict) -> None:
        self._check()
        await super().group_send(group, message)
