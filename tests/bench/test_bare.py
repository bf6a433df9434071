"""The bare baseline (``bench.bare``) is a fair yardstick (issue 14): no trip to
the database thread per message, and a ping answered with ``pong``."""

from __future__ import annotations

import json

import pytest
from channels.testing import WebsocketCommunicator

from bench import bare


@pytest.fixture
def no_database_hop(monkeypatch):
    """Fail any call of Channels' per-message ``aclose_old_connections``."""

    async def refused() -> None:
        raise AssertionError("a bare consumer took the database-thread hop")

    monkeypatch.setattr("channels.consumer.aclose_old_connections", refused)

    async def once_at_disconnect() -> None:
        """Channels' ``websocket_disconnect`` hops once more when a socket
        closes, in Narrator's consumers too (once a socket, not a message):
        not the hop this test is about, and no database to close here."""

    monkeypatch.setattr("channels.generic.websocket.aclose_old_connections", once_at_disconnect)


async def _connected(path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(bare.application, path)
    connected, _ = await communicator.connect()
    assert connected
    assert 'id="live"' in await communicator.receive_from()
    return communicator


async def test_a_bare_phone_throws_and_pings_without_the_database_thread(no_database_hop):
    a, b = await _connected("/ws/bare/play/3/"), await _connected("/ws/bare/play/3/")
    await a.send_to(text_data=json.dumps({"action": "ping", "v": ""}))
    assert json.loads(await a.receive_from()) == {"type": "pong"}
    await a.send_to(text_data=json.dumps({"id": "t1", "action": "throw"}))
    frames = [await a.receive_from(), await a.receive_from()]
    assert '{"type": "ack", "id": "t1"}' in frames
    assert any('data-throw="t1"' in f for f in frames)
    assert 'data-throw="t1"' in await b.receive_from()
    await a.disconnect()
    await b.disconnect()


async def test_a_bare_dashboard_pings_and_calls_time_out_without_the_database_thread(
    no_database_hop,
):
    phone, dashboard = await _connected("/ws/bare/play/1/"), await _connected("/ws/bare/narrate/")
    await dashboard.send_to(text_data=json.dumps({"action": "ping", "v": ""}))
    assert json.loads(await dashboard.receive_from()) == {"type": "pong"}
    await dashboard.send_to(text_data=json.dumps({"id": "t", "action": "session.time_out"}))
    assert json.loads(await dashboard.receive_from()) == {"type": "ack", "id": "t"}
    assert "time-out active" in await phone.receive_from()
    await phone.disconnect()
    await dashboard.disconnect()
