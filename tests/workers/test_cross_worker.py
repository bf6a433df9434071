"""Two Daphne workers sharing PostgreSQL and Redis: phones on different workers
play together, and a narrator's Time out on one worker reaches phones on the other."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge, Event
from tests.workers.conftest import session_cookie
from tests.workers.phone import Phone

pytestmark = [
    pytest.mark.workers,
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.django_db(transaction=True),
    pytest.mark.asyncio,
]


async def _phone(name, path, user, workers, worker):
    return await Phone(name, path, await session_cookie(user), workers).connect(worker)


@database_sync_to_async
def _latest_challenge() -> Challenge:
    return Challenge.objects.latest("pk")


@database_sync_to_async
def _resolved_events(challenge_id: int) -> int:
    return Event.objects.filter(challenge_id=challenge_id, kind="resolved").count()


async def test_players_on_different_workers_complete_a_challenge(game, start_workers):
    a, b = start_workers(2)
    helen = await _phone("helen", f"/ws/play/{game['helen'].pk}/", game["helen_player"], [a, b], a)
    grady = await _phone("grady", f"/ws/play/{game['grady'].pk}/", game["grady_player"], [a, b], b)
    try:
        began = time.monotonic()
        seen = len(grady.views)
        reply = await helen.act(
            action="challenge.open", defender=str(game["grady"].pk), bid="physical:Ferocious"
        )
        assert reply["status"] == "ok", reply
        await grady.wait_for_view("Bid Resilient", since=seen)
        print(
            f"challenge opened on {a.name} shown on {b.name} after {time.monotonic() - began:.3f}s"
        )
        challenge = await _latest_challenge()

        reply = await grady.act(action="challenge.bid", challenge=challenge.pk, bid="Resilient")
        assert reply["status"] == "ok", reply
        helen_seen, grady_seen = len(helen.views), len(grady.views)
        assert (await helen.act(action="challenge.throw", challenge=challenge.pk, throw="rock"))[
            "status"
        ] == "ok"
        assert (
            await grady.act(action="challenge.throw", challenge=challenge.pk, throw="scissors")
        )["status"] == "ok"
        await helen.wait_for_view("You win!", since=helen_seen)
        await grady.wait_for_view("You lose: your <bdi>Resilient</bdi> is lost.", since=grady_seen)
        print(f"challenge across two workers played in {time.monotonic() - began:.3f}s")
        challenge = await _latest_challenge()
        assert (challenge.stage, challenge.outcome) == ("resolved", "challenger_wins")
        assert await _resolved_events(challenge.pk) == 1
    finally:
        await helen.close()
        await grady.close()


async def test_a_time_out_on_one_worker_reaches_phones_on_the_other(game, start_workers):
    a, b = start_workers(2)
    workers = [a, b]
    narrator = await _phone(
        "narrator", f"/ws/narrate/{game['session'].pk}/", game["narrator"], workers, a
    )
    helen = await _phone("helen", f"/ws/play/{game['helen'].pk}/", game["helen_player"], workers, b)
    grady = await _phone("grady", f"/ws/play/{game['grady'].pk}/", game["grady_player"], workers, b)
    try:
        seen = {phone: len(phone.views) for phone in (helen, grady)}
        began = time.monotonic()
        assert (await narrator.act(action="session.time_out"))["status"] == "ok"
        acked = time.monotonic() - began
        for phone in (helen, grady):
            frame = await phone.wait_for_view("Time out!", since=seen[phone])
            assert 'id="time-out"' in frame
        print(
            f"time out on {a.name}: acknowledged in {acked * 1000:.1f} ms, "
            f"on both phones on {b.name} in {(time.monotonic() - began) * 1000:.1f} ms"
        )

        # The other worker refuses play until Resume.
        reply = await helen.act(
            action="challenge.open", defender=str(game["grady"].pk), bid="physical:Ferocious"
        )
        assert reply["type"] == "error" and "Time out" in reply["message"], reply

        seen = {phone: len(phone.views) for phone in (helen, grady)}
        began = time.monotonic()
        assert (await narrator.act(action="session.resume"))["status"] == "ok"
        for phone in (helen, grady):
            await phone.wait_for_view('id="time-out" class="time-out"', since=seen[phone])
        print(f"resume reached {b.name} in {(time.monotonic() - began) * 1000:.1f} ms")
        reply = await helen.act(
            action="challenge.open", defender=str(game["grady"].pk), bid="physical:Ferocious"
        )
        assert reply["status"] == "ok", reply
    finally:
        for phone in (narrator, helen, grady):
            await phone.close()


async def test_dashboards_on_both_workers_show_a_challenge_played_on_one(game, start_workers):
    """Issue 14: a dashboard is fed its rows by its own worker's feed, from the
    events of a challenge committed on the other worker (rows it never kept)
    as well as on its own."""
    a, b = start_workers(2)
    path = f"/ws/narrate/{game['session'].pk}/"
    here = await _phone("here", path, game["narrator"], [a, b], a)
    there = await _phone("there", path, game["narrator"], [a, b], b)
    helen = await _phone("helen", f"/ws/play/{game['helen'].pk}/", game["helen_player"], [a, b], a)
    grady = await _phone("grady", f"/ws/play/{game['grady'].pk}/", game["grady_player"], [a, b], a)
    try:
        seen = {dashboard: len(dashboard.views) for dashboard in (here, there)}
        reply = await helen.act(
            action="challenge.open", defender=str(game["grady"].pk), bid="physical:Ferocious"
        )
        assert reply["status"] == "ok", reply
        challenge = await _latest_challenge()
        for move in (
            grady.act(action="challenge.bid", challenge=challenge.pk, bid="Resilient"),
            helen.act(action="challenge.throw", challenge=challenge.pk, throw="rock"),
            grady.act(action="challenge.throw", challenge=challenge.pk, throw="scissors"),
        ):
            assert (await move)["status"] == "ok"
        row = f'id="challenge-{challenge.pk}" class="row stage-resolved'
        for dashboard in (here, there):
            await dashboard.wait_for_view(row, since=seen[dashboard])
            await dashboard.wait_for_view('id="roster-', since=seen[dashboard])
    finally:
        for phone in (here, there, helen, grady):
            await phone.close()
