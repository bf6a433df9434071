"""A dashboard with 100 present characters and 300 challenges in the session:
a fixed number of queries (not one per row or per character), a page of a
bounded size, its render time printed (not asserted: machines differ). A
real event's crowd (150 characters, 600 challenges, 100 of them open): the
socket's first view fits in 64 KiB, and each update in 8 KiB.

Figures on the 2-core development machine (SQLite): 13 queries for the page,
as for a session of two; the crowd's first view 56 KB (368 KB when it listed
300 challenges)."""

from __future__ import annotations

import re
import time

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from challenges import views
from tests.factories import crowded_session

pytestmark = pytest.mark.django_db

PAGE_BYTES_AT_MOST = 600_000  # the rows and 100 roster rows, with their markup
FIRST_VIEW_BYTES_AT_MOST = 64 * 1024  # a crowd's first view: one frame any server sends
UPDATE_BYTES_AT_MOST = 8 * 1024  # a move's frame to a dashboard: its changed rows


def _page(client: Client, session) -> tuple[int, bytes, float]:
    """(queries, body, seconds) of one GET of the dashboard."""
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        response = client.get(reverse("narrate", args=[session.pk]))
        seconds = time.perf_counter() - start
    assert response.status_code == 200
    return len(queries), response.content, seconds


def test_a_crowded_dashboard_costs_the_queries_of_a_small_one(game):
    client = Client()
    client.force_login(game["narrator"])
    session = game["session"]
    small, _, _ = _page(client, session)

    crowded_session(session, characters=100, challenges=300)
    crowded, body, seconds = _page(client, session)
    html = body.decode()

    assert crowded == small, f"{crowded} queries with 300 challenges, {small} with none"
    window = views.DASHBOARD_LIMIT  # 100 open and 200 results, no call
    assert len(re.findall(r'<article id="challenge-\d+"', html)) == window.open + window.results
    assert len(re.findall(r'<li id="roster-\d+"', html)) == 102  # the guests, Helen, Grady
    assert len(body) <= PAGE_BYTES_AT_MOST, f"{len(body)} bytes"
    print(
        f"\n[dashboard] 102 present, 300 challenges: {crowded} queries, "
        f"{len(body) / 1000:.0f} KB, {seconds * 1000:.0f} ms to build and render"
    )


def test_a_crowded_dashboards_websocket_view_costs_as_few_queries(game):
    session = game["session"]
    with CaptureQueriesContext(connection) as small:
        render_to_string("challenges/narrate_live.html", views.dashboard_context(session))
    crowded_session(session, characters=100, challenges=300)
    with CaptureQueriesContext(connection) as crowded:
        start = time.perf_counter()
        html = render_to_string("challenges/narrate_live.html", views.dashboard_context(session))
        seconds = time.perf_counter() - start
    assert len(crowded) == len(small)
    print(
        f"\n[dashboard] websocket view: {len(crowded)} queries, {len(html) / 1000:.0f} KB, "
        f"{seconds * 1000:.0f} ms"
    )


def test_every_open_challenge_stays_listed_beyond_the_limit(game):
    """400 challenges, 9 open: the listed are every open one (the oldest first
    made too), then the newest results, a window of each; the heartbeat counts
    the same ones."""
    from challenges import heartbeat
    from challenges.models import Challenge

    session = game["session"]
    crowded_session(session, characters=10, challenges=400, open_every=50)
    first = Challenge.objects.order_by("id").first()
    assert not first.is_resolved
    context = views.dashboard_context(session)
    listed = {row.pk for row in context["rows"]}
    open_ids = set(Challenge.objects.exclude(stage="resolved").values_list("id", flat=True))
    assert len(open_ids) < views.DASHBOARD_LIMIT.open
    assert len(listed) == len(open_ids) + views.DASHBOARD_LIMIT.results
    assert first.pk in listed and open_ids <= listed
    newest = Challenge.objects.filter(stage="resolved").order_by("-stage_since", "-id")
    assert set(newest.values_list("id", flat=True)[: views.DASHBOARD_LIMIT.results]) <= listed
    versions = {row.pk: row.challenge.version for row in context["rows"]}
    parts = heartbeat.dashboard_parts(session.pk, views.DASHBOARD_LIMIT)
    assert parts["challenges"] == heartbeat.aggregate(versions)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_crowds_dashboard_gets_a_first_view_under_64_kib_and_small_updates(game):
    """150 characters present, 600 challenges tonight, 100 of them open."""
    import json
    import uuid

    from channels.db import database_sync_to_async

    from tests.challenges.wsutil import connect, drain

    session = game["session"]
    await database_sync_to_async(crowded_session)(
        session, characters=148, challenges=600, open_every=6
    )
    dashboard, first = await connect(f"/ws/narrate/{session.pk}/", game["narrator"])
    assert len(first.encode()) <= FIRST_VIEW_BYTES_AT_MOST, f"{len(first.encode())} bytes"
    assert len(re.findall(r'<li id="roster-\d+"', first)) == 150
    window = views.DASHBOARD_LIMIT  # 100 open and 500 results, no call
    assert len(re.findall(r'<article id="challenge-\d+"', first)) == window.open + window.results

    # The narrator voids the longest waiting challenge: its row moves to the results.
    oldest = int(re.search(r'<article id="challenge-(\d+)"', first).group(1))
    await dashboard.send_json_to(
        {"id": uuid.uuid4().hex, "action": "challenge.void", "challenge": oldest, "reason": "Gone"}
    )
    frames = await drain(dashboard, quiet=1.0)
    assert any(f'id="challenge-{oldest}"' in frame for frame in frames), frames
    sizes = [len(frame.encode()) for frame in frames]
    assert max(sizes) <= UPDATE_BYTES_AT_MOST, sizes
    assert {"ack"} == {json.loads(f)["type"] for f in frames if f.startswith("{")}
    await dashboard.disconnect()
    print(f"\n[dashboard] crowd of 150: first view {len(first.encode())} bytes, updates {sizes}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_busy_tick_goes_out_in_frames_of_8_kib_only_the_last_stamped(game, settings):
    """Every open challenge listed voided in one tick (a burst of moves, or a
    worker behind): the rows go out in several frames of at most 8 KiB, only
    the last carrying the stamp, and the screen ends as a fresh view shows it."""
    from channels.db import database_sync_to_async

    from challenges import services
    from challenges.models import Challenge
    from tests.faults.phones import Phone, split_stamp
    from tests.screen import rendered

    settings.DASHBOARD_TICK_SECONDS = 0.5
    session = game["session"]
    await database_sync_to_async(crowded_session)(
        session, characters=60, challenges=200, open_every=2
    )
    dashboard = Phone(f"/ws/narrate/{session.pk}/", game["narrator"])
    await dashboard.connect()
    listed = [
        int(a["id"].split("-")[1]) for a in dashboard.screen.doc.select("#open-challenges article")
    ]
    assert len(listed) == views.DASHBOARD_LIMIT.open

    def void_them():
        for pk in listed:
            services.challenge_void(
                challenge_id=pk, reason="a long reason " * 8, user=game["narrator"], msg_id=f"v{pk}"
            )

    frames: list[str] = []
    taken = dashboard._take

    def keep(frame):
        frames.append(frame)
        return taken(frame)

    dashboard._take = keep
    await database_sync_to_async(void_them)()
    await dashboard.settle(quiet=1.0)
    views_of_rows = [f for f in frames if not f.startswith("{")]
    assert len(views_of_rows) > 1, [len(f) for f in frames]
    assert max(len(f.encode()) for f in views_of_rows) <= 8 * 1024
    stamped = [f.startswith("<!--v:") for f in views_of_rows]
    assert stamped[-1] and stamped.count(True) < len(stamped)
    # The open ones beyond the window come in with the next heartbeat's repair.
    await dashboard.heartbeat()
    await dashboard.settle(quiet=1.0)
    fresh = Phone(dashboard.path, dashboard.user)
    stamp, html = split_stamp(await fresh.connect())
    await fresh.close()
    assert dashboard.view == rendered(html) and dashboard.stamp == stamp
    assert not await database_sync_to_async(
        Challenge.objects.filter(pk__in=listed).exclude(stage="resolved").exists
    )()
    await dashboard.close()
