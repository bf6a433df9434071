"""Sockets opened without a valid login are cheap and throttled per address
(``challenges.ratelimit.FailedLogins``, ``BaseConsumer.sign_in``): no session
cookie is refused (4401) without a trip to the database thread; each failed
login is charged to its address, and past the burst that address's
handshakes are refused unaccepted, unread, until its bucket refills. Valid
logins cost nothing: a venue's phones behind one address reconnect freely."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from challenges.consumers import base
from challenges.ratelimit import FailedLogins
from narrator import wsauth
from narrator.asgi import application
from tests.challenges.wsutil import WAIT, _session_cookie


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_per_address_refills_and_forgets_the_oldest():
    clock = Clock()
    logins = FailedLogins(rate=0.5, burst=2, most=2, clock=clock)
    assert logins.allowed("a")
    logins.failed("a")
    logins.failed("a")
    assert not logins.allowed("a")
    assert logins.allowed("b")  # another address is not held back
    clock.now += 2.0  # 0.5 a second: one failure to spare again
    assert logins.allowed("a")
    logins.failed("a")
    assert not logins.allowed("a")
    logins.failed("b")
    logins.failed("c")  # a third address: the least recently charged ("a") is forgotten
    assert set(logins.buckets) == {"b", "c"}
    assert logins.allowed("a")


@pytest.fixture
def clock():
    """Failed logins counted on a clock of the test's (burst 3, 0.5 a second)."""
    clock = Clock()
    base._failed_logins = FailedLogins(rate=0.5, burst=3, clock=clock)
    return clock


@pytest.fixture
def lookups(monkeypatch) -> list[int]:
    """Every login looked up on the database thread, counted."""
    calls: list[int] = []
    real = wsauth.resolve_user

    def counted(scope):
        calls.append(1)
        return real(scope)

    monkeypatch.setattr(wsauth, "resolve_user", counted)
    return calls


async def _knock(path: str, address: str, cookie: str | None = None) -> str:
    """Open a socket from ``address``: "refused" (handshake refused),
    "closed:CODE", or "open" (its view came)."""
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
    if cookie is not None:
        headers.append((b"cookie", f"sessionid={cookie}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    communicator.scope["client"] = (address, 40000)
    connected, _ = await communicator.connect(timeout=WAIT)
    if not connected:
        return "refused"
    first = await communicator.receive_output(timeout=WAIT)
    await communicator.disconnect()
    if first["type"] == "websocket.close":
        return f"closed:{first.get('code')}"
    return "open"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_sockets_without_a_login_are_refused_unread_past_the_burst(world, clock, lookups):
    path = f"/ws/play/{world['helen'].pk}/"
    assert [await _knock(path, "203.0.113.9") for _ in range(3)] == ["closed:4401"] * 3
    assert lookups == [], "no cookie: nothing to look up on the database thread"
    assert await _knock(path, "203.0.113.9") == "refused"
    assert await _knock(path, "203.0.113.9", "forged-session-key-0123456789abcd") == "refused"
    assert lookups == []
    # Another address still gets its answer; a valid login there opens.
    assert await _knock(path, "198.51.100.7", "forged-session-key-0123456789abcd") == (
        "closed:4401"
    )
    assert len(lookups) == 1
    helen = await _session_cookie(world["helen_player"])
    assert await _knock(path, "198.51.100.7", helen) == "open"
    clock.now += 2.0  # one failure to spare again
    assert await _knock(path, "203.0.113.9") == "closed:4401"
    assert await _knock(path, "203.0.113.9") == "refused"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_valid_logins_from_one_address_are_never_held_back(world, clock):
    """A hall's phones behind one NAT reconnect far more than the burst."""
    helen = await _session_cookie(world["helen_player"])
    grady = await _session_cookie(world["grady_player"])
    for _ in range(5):
        assert await _knock(f"/ws/play/{world['helen'].pk}/", "192.0.2.1", helen) == "open"
        assert await _knock(f"/ws/play/{world['grady'].pk}/", "192.0.2.1", grady) == "open"
        assert await _knock(f"/ws/narrate/{world['session'].pk}/", "192.0.2.1", grady) == (
            "closed:4403"  # signed in, not his: not a failed login
        )
