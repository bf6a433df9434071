"""A prepared static played from a phone through the real websocket router,
with no narrator connected; the dashboard sees the attempt live (issue 11,
statics)."""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse
from sesame.utils import get_token

from challenges.models import Challenge
from tests.challenges.test_prepared_statics import build_gaffling
from tests.challenges.wsutil import act, connect, drain, expect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture
def g(transactional_db, monkeypatch):
    return build_gaffling(monkeypatch)


@database_sync_to_async
def scan_from_phone(g) -> Challenge:
    """His phone signs in with the join link, scans the QR code, taps "Try it"."""
    client = Client()
    client.get(reverse("join"), {"token": get_token(g["player"], scope="join")})
    url = reverse("static_scan", args=[g["static"].token])
    response = client.post(url, {"msg_id": uuid.uuid4().hex, "character": g["steps"].pk})
    assert response.status_code == 302, response.content
    return Challenge.objects.get(prepared=g["static"])


async def test_a_qr_static_is_played_from_a_phone_with_no_narrator(g):
    phone, first = await connect(f"/ws/play/{g['steps'].pk}/", g["player"])
    challenge = await scan_from_phone(g)
    frames = await expect(phone, ("Static Social challenge", "the Gaffling"), frames=[first])
    reply, seen = await act(phone, action="challenge.bid", challenge=challenge.pk, bid="Persuasive")
    assert reply["status"] == "ok", reply
    reply, more = await act(phone, action="challenge.throw", challenge=challenge.pk, throw="paper")
    assert reply["status"] == "ok", reply
    frames = await expect(
        phone, "Success!", "knows the way to the caern", frames=[*frames, *seen, *more]
    )
    frames += await drain(phone)
    assert not any("Difficulty" in f or "difficulty 4" in f for f in frames)
    await phone.disconnect()


async def test_the_dashboard_sees_the_attempt_live(g):
    dashboard, _ = await connect(f"/ws/narrate/{g['session'].pk}/", g["narrator"])
    await scan_from_phone(g)
    await expect(dashboard, ("Steps-in-Gum", "the Gaffling"))
    await dashboard.disconnect()


async def test_the_dashboards_simple_test_puts_a_trait_at_stake(g):
    """The narrator's "simple.open" frame with ``at_stake``: he fails, and
    loses the Trait staked."""
    from challenges.models import TraitLoss

    dashboard, _ = await connect(f"/ws/narrate/{g['session'].pk}/", g["narrator"])
    phone, _ = await connect(f"/ws/play/{g['steps'].pk}/", g["player"])
    reply, _ = await act(
        dashboard,
        action="simple.open",
        character=g["steps"].pk,
        narrator_throw="paper",
        stakes="Hold your temper",
        at_stake="Friendly",
    )
    assert reply["status"] == "ok", reply
    challenge = await database_sync_to_async(Challenge.objects.latest)("created_at")
    reply, frames = await act(phone, action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert reply["status"] == "ok", reply
    await expect(phone, "Failure", frames=frames)
    lost = await database_sync_to_async(
        lambda: [x.trait.name for x in TraitLoss.objects.filter(challenge=challenge)]
    )()
    assert lost == ["Friendly"]
    await phone.disconnect()
    await dashboard.disconnect()
