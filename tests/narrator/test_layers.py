"""narrator.layers: Channels' in-memory layer with its expiry scan throttled.

Plain test functions running their scenario on a loop of its own in another
thread: the session's Playwright browser keeps an event loop running in the
main thread, where neither ``asyncio.run``, pytest-asyncio's runner nor
``async_to_sync`` can start another."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest
from channels.layers import InMemoryChannelLayer as ChannelsLayer

from narrator import layers
from narrator.layers import InMemoryChannelLayer


def run(scenario):
    """``scenario()``'s result, run by ``asyncio.run`` in a thread of its own."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, scenario()).result()


def test_a_group_send_reaches_every_member_once():
    layer = InMemoryChannelLayer()

    async def scenario():
        names = [await layer.new_channel() for _ in range(50)]
        for name in names:
            await layer.group_add("session.1", name)
        await layer.group_send("session.1", {"type": "session.updated", "time_out": True})
        return [await layer.receive(name) for name in names]

    got = run(scenario)
    assert got == [{"type": "session.updated", "time_out": True}] * 50


def test_the_expiry_scan_runs_once_per_interval_not_once_per_call(monkeypatch):
    scans = []
    monkeypatch.setattr(ChannelsLayer, "_clean_expired", lambda self: scans.append(1))
    layer = InMemoryChannelLayer()

    async def scenario():
        name = await layer.new_channel()
        await layer.group_add("g", name)
        for _ in range(200):
            await layer.group_send("g", {"type": "x"})
            await layer.receive(name)

    run(scenario)
    # Channels' own layer scans 400 times here (every group_send and receive).
    assert len(scans) == 1


def test_expired_messages_and_their_channel_still_go(monkeypatch):
    monkeypatch.setattr(layers, "CLEAN_INTERVAL", 0.0)
    layer = InMemoryChannelLayer(expiry=0)

    async def scenario():
        stale = await layer.new_channel()
        await layer.group_add("g", stale)
        await layer.send(stale, {"type": "old"})
        await asyncio.sleep(0.01)
        await layer.group_send("g", {"type": "new"})  # its scan drops the expired message
        return layer.groups.get("g", {})

    members = run(scenario)
    # An expired message removes its channel from every group, as in Channels.
    assert members == {}


@pytest.mark.parametrize("interval", [0.0, 3600.0])
def test_flush_forgets_everything_and_rescans(monkeypatch, interval):
    monkeypatch.setattr(layers, "CLEAN_INTERVAL", interval)
    layer = InMemoryChannelLayer()

    async def scenario():
        name = await layer.new_channel()
        await layer.group_add("g", name)
        await layer.send(name, {"type": "x"})
        await layer.flush()
        return layer.channels, layer.groups, layer._last_clean

    channels, groups, last = run(scenario)
    assert (channels, groups, last) == ({}, {}, float("-inf"))
