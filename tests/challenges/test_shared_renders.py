"""Renderings shared across connections of one worker (the bench's fixes)."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async

from challenges.views import SharedRenders
from tests.challenges.wsutil import act, connect, drain, helen_challenges_grady


def test_a_shared_rendering_is_made_once_per_key():
    renders = SharedRenders()
    calls = []
    for _ in range(3):
        assert renders.get(("row", 1, 2, 3), lambda: calls.append(1) or "<row>") == "<row>"
    assert len(calls) == 1


def test_a_rendering_without_a_key_is_never_kept():
    renders = SharedRenders()
    calls = []
    for _ in range(3):
        renders.get(None, lambda: calls.append(1) or "<row>")
    assert len(calls) == 3 and not renders.items


def test_shared_renderings_forget_the_oldest_beyond_their_size():
    renders = SharedRenders(size=2)
    for key in ("a", "b", "c"):
        renders.get((key,), lambda key=key: key)
    assert list(renders.items) == [("b",), ("c",)]


@pytest.mark.django_db(transaction=True)
async def test_two_dashboards_get_the_same_row_for_one_challenge(game):
    path = f"/ws/narrate/{game['session'].pk}/"
    first, _ = await connect(path, game["narrator"])
    second, _ = await connect(path, game["narrator"])
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    reply, _ = await act(
        helen, action="challenge.open", defender=str(game["grady"].pk), bid="physical:Ferocious"
    )
    assert reply["status"] == "ok"
    rows = [[f for f in await drain(d) if "challenge-" in f] for d in (first, second)]
    assert rows[0] and rows[0] == rows[1]
    assert "Helen" in rows[0][0] and "Ferocious" in rows[0][0]
    for communicator in (first, second, helen):
        await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_time_out_reaches_a_phone_as_its_banner(game):
    narrator, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    await drain(helen)
    reply, _ = await act(narrator, action="session.time_out")
    assert reply["status"] == "ok"
    frames = await drain(helen)
    assert any('class="time-out active"' in f and "Time out!" in f for f in frames)
    session = await database_sync_to_async(lambda: type(game["session"]).objects.get())()
    assert session.time_out
    for communicator in (narrator, helen):
        await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_a_bid_sends_the_challengers_phone_only_the_changed_card(game):
    helen, grady, _, grady_frames = await helen_challenges_grady(game)
    challenge_id = _card_id(grady_frames)
    reply, _ = await act(grady, action="challenge.bid", challenge=challenge_id, bid="Resilient")
    assert reply["status"] == "ok"
    frames = await drain(helen)
    assert frames and all('id="live"' not in f for f in frames)
    assert any(
        _unstamped(f).startswith(f'<article id="card-{challenge_id}" class="card stage-throws')
        and 'hx-swap-oob="true"' in f
        for f in frames
    )
    for communicator in (helen, grady):
        await communicator.disconnect()


def _unstamped(frame: str) -> str:
    """A view frame without its heartbeat stamp (``<!--v:STAMP-->``)."""
    return re.sub(r"^<!--v:\w+-->", "", frame).lstrip()


def _card_id(frames: list[str]) -> int:
    for frame in frames:
        if found := re.search(r'id="card-(\d+)"', frame):
            return int(found.group(1))
    raise AssertionError("no card in the frames")
