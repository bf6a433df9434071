"""Dashboards fed once per tick (issue 14, ``challenges.consumers.feed``):
the changes of a tick come as one frame per dashboard with every row where a
fresh dashboard puts it; a row changed twice shows its last version; changes
made during a flush come with the next; Time out does not wait."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from channels.db import database_sync_to_async
from django.db.models import F
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from hypothesis import given
from hypothesis import strategies as st

from challenges import services, views
from challenges.consumers import feed
from challenges.consumers.base import SENT_STAMPS_KEPT
from challenges.models import Challenge, MobScene, TraitLoss
from challenges.rows import committed_rows
from challenges.views.dashboard import _SECTIONS
from characters.models import GameSession, Presence
from tests.challenges.wsutil import act, expect
from tests.factories import opposed_challenge
from tests.faults.phones import Phone, current_dashboard_stamp, split_stamp
from tests.screen import rendered

pytestmark = pytest.mark.django_db(transaction=True)

ROW = re.compile(r'<article id="challenge-(\d+)" class="row')


async def _frames(dashboard: Phone, quiet: float = 0.5) -> list[str]:
    """The frames ``dashboard`` takes until ``quiet`` seconds pass without one."""
    before = dashboard.frames
    seen = []
    while not await dashboard.socket.receive_nothing(timeout=quiet, interval=0.01):
        frame = await dashboard.socket.receive_from()
        dashboard._take(frame)
        seen.append(frame)
    assert dashboard.frames == before + len(seen)
    return seen


async def _dashboard(game) -> Phone:
    """The narrator's dashboard of ``game``'s session, connected."""
    dashboard = Phone(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    await dashboard.connect()
    return dashboard


async def _watched_challenge(game) -> tuple[Phone, Challenge]:
    """Helen challenged Grady (bid Ferocious), then a dashboard connected."""
    challenge = await database_sync_to_async(opposed_challenge)(
        game["session"], game["helen"], game["grady"], bid="Ferocious"
    )
    return await _dashboard(game), challenge


async def _move_in_database(challenge: Challenge) -> None:
    """A move of ``challenge`` (its version one up) whose broadcast never came."""
    await database_sync_to_async(Challenge.objects.filter(pk=challenge.pk).update)(
        version=F("version") + 1
    )


async def _as_fresh(dashboard: Phone, session) -> None:
    """``dashboard`` shows what a fresh dashboard shows, with its stamp; then it closes."""
    fresh = Phone(dashboard.path, dashboard.user)
    stamp, html = split_stamp(await fresh.connect())
    await fresh.close()
    assert dashboard.view == rendered(html)
    assert dashboard.stamp == stamp == await current_dashboard_stamp(session)
    await dashboard.close()


def _bid(game, challenge, who="grady", bids=("Resilient",)):
    return services.challenge_bid(
        challenge_id=challenge.pk,
        character=game[who],
        bids=list(bids) if bids else None,
        user=game[f"{who}_player"],
        msg_id=uuid.uuid4().hex,
    )


async def test_the_changes_of_one_tick_come_as_one_frame_with_every_row_placed(game, settings):
    settings.DASHBOARD_TICK_SECONDS = 3.0  # every change below falls in one tick
    session, helen, grady = game["session"], game["helen"], game["grady"]
    dashboard = await _dashboard(game)

    def evening():
        first = opposed_challenge(session, helen, grady, bid="Ferocious")
        opposed_challenge(session, grady, helen, bid="Tough")
        opposed_challenge(
            session, helen, grady, bid="Quick", answer="Resilient", throws=("rock", "scissors")
        )
        _bid(game, first)  # a new stage: below the second
        opposed_challenge(session, grady, helen, bid="Tough")

    await database_sync_to_async(evening)()
    frames = await _frames(dashboard, quiet=4.0)
    assert len(frames) == 1, frames  # four challenges, a bid, Trait losses: one frame
    assert len(ROW.findall(frames[0])) == 4
    assert "roster-" in frames[0]  # the loser's roster row, in the same frame
    await _as_fresh(dashboard, session)


async def test_a_row_changed_twice_in_a_tick_shows_its_last_version(game, settings):
    settings.DASHBOARD_TICK_SECONDS = 2.0
    session = game["session"]
    dashboard = await _dashboard(game)

    def open_and_answer():
        challenge = opposed_challenge(session, game["helen"], game["grady"], bid="Ferocious")
        return _bid(game, challenge)

    answered = await database_sync_to_async(open_and_answer)()
    (frame,) = await _frames(dashboard, quiet=3.0)
    assert ROW.findall(frame) == [str(answered.pk)]  # rendered and placed once
    assert "Resilient" in frame  # Grady's answer: the last version
    await _as_fresh(dashboard, session)


async def test_a_change_made_during_a_flush_comes_with_the_next(game, settings, monkeypatch):
    settings.DASHBOARD_TICK_SECONDS = 0.2
    session = game["session"]
    dashboard, challenge = await _watched_challenge(game)
    render = feed.render_changes
    answered = []

    def render_then_answer(*args):
        changes = render(*args)  # the flush has read its rows...
        if not answered:
            answered.append(_bid(game, challenge))  # ...when Grady answers
        return changes

    monkeypatch.setattr(feed, "render_changes", render_then_answer)
    await database_sync_to_async(opposed_challenge)(
        session, game["grady"], game["helen"], bid="Tough"
    )  # a flush starts
    frames = await _frames(dashboard, quiet=1.5)
    assert len(frames) == 2 and "Resilient" not in frames[0] and "Resilient" in frames[1]
    await _as_fresh(dashboard, session)


async def test_time_out_does_not_wait_for_the_tick(game, settings):
    settings.DASHBOARD_TICK_SECONDS = 30.0
    session = game["session"]
    dashboard = await _dashboard(game)
    await database_sync_to_async(opposed_challenge)(
        session, game["helen"], game["grady"], bid="Ferocious"
    )  # its row waits for the tick
    reply, frames = await act(dashboard.socket, action="session.time_out")
    assert reply["status"] == "ok"
    frames = await expect(dashboard.socket, "Resume", frames=frames, timeout=5)
    assert not any(ROW.search(f) for f in frames)
    await dashboard.close()


async def test_a_dashboard_that_connects_mid_tick_shows_the_truth(game, settings):
    settings.DASHBOARD_TICK_SECONDS = 1.0
    session = game["session"]
    first = await _dashboard(game)
    play = database_sync_to_async(opposed_challenge)
    await play(session, game["helen"], game["grady"], bid="Ferocious")  # noted, not flushed
    late = await _dashboard(game)  # its view shows it already
    await play(session, game["grady"], game["helen"], bid="Tough")
    for dashboard in (first, late):
        await _frames(dashboard, quiet=2.0)
        await _as_fresh(dashboard, session)


@pytest.mark.parametrize(
    "where, remove",
    [("beforebegin:#challenge-7", [3]), ("beforeend:#recent-results", []), ("", [4, 9])],
)
def test_a_row_frame_is_the_one_of_the_oob_template(where, remove):
    row = mark_safe('<article id="challenge-3" class="row stage-resolved">…</article>')
    template = render_to_string(
        "challenges/_dashboard_row_oob.html", {"row_html": row, "where": where, "remove": remove}
    )
    assert feed.row_frame(row, where, remove) == template.rstrip("\n")


async def test_a_sessions_feed_goes_with_its_last_dashboard(game, settings):
    settings.DASHBOARD_TICK_SECONDS = 0.05
    session = game["session"]
    dashboard = await _dashboard(game)
    assert session.pk in feed._feeds
    await dashboard.close()
    assert session.pk not in feed._feeds


def test_the_roster_rows_of_a_tick_cost_the_queries_of_one(game):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import crowded_session

    session = game["session"]
    guests = crowded_session(session, characters=12, challenges=4)
    with CaptureQueriesContext(connection) as one:
        alone = views.roster_rows_context(session, [game["helen"].pk])
    ids = [game["helen"].pk, game["grady"].pk, *(g.pk for g in guests)]
    with CaptureQueriesContext(connection) as many:
        rows = views.roster_rows_context(session, ids)
    assert len(many) == len(one) and set(rows) == set(ids)
    row = "challenges/_roster_row.html"
    assert render_to_string(row, alone[game["helen"].pk]) == render_to_string(
        row, rows[game["helen"].pk]
    )
    assert views.roster_rows_context(session, []) == {}


PLACES = st.tuples(
    st.sampled_from([-1, 0, 1]), st.floats(min_value=-100, max_value=100), st.just(0)
)


def _moved_by_two_passes(
    places: dict[int, tuple], challenge_id: int, place: tuple, limit: int | None = None
) -> tuple[list[int], str]:
    """The reference for ``views.Placement.move`` (the dashboards' placing
    before issue 14, two passes over every row): put ``challenge_id`` at
    ``place`` among ``places`` (``{id: place}``, updated), at most ``limit``.
    Returns ``(ids, swap)``: the rows to take off the screen first (the row
    itself if it was on it), then the htmx out-of-band swap that inserts it,
    before the first row of its section that sorts after it
    (``"beforebegin:#challenge-ID"``) or at the end of its section
    (``"beforeend:#called-challenges"``, ``"beforeend:#open-challenges"``,
    ``"beforeend:#recent-results"``);
    ``""`` when it does not fit."""
    limit = views.DASHBOARD_LIMIT if limit is None else limit
    remove = [challenge_id] if places.pop(challenge_id, None) is not None else []
    places[challenge_id] = place

    def crowded() -> dict[int, tuple]:
        """The rows among which the last goes, while any must."""
        if isinstance(limit, views.Window):
            section = {pk: p for pk, p in places.items() if p[0] == place[0]}
            return section if len(section) > limit.cap(place[0]) else {}
        return places if len(places) > limit else {}

    while rows := crowded():
        gone = max(rows, key=rows.__getitem__)
        del places[gone]
        if gone != challenge_id:
            remove.append(gone)
    if challenge_id not in places:
        return remove, ""
    after = [(p, pk) for pk, p in places.items() if p[0] == place[0] and p > place]
    if after:
        return remove, f"beforebegin:#challenge-{min(after)[1]}"
    return remove, f"beforeend:#{_SECTIONS[place[0]]}"


@given(
    start=st.dictionaries(st.integers(1, 40), PLACES, max_size=12),
    moves=st.lists(st.tuples(st.integers(1, 40), PLACES), max_size=30),
    limit=st.integers(1, 15),
)
def test_a_placement_moves_rows_as_the_two_passes_do(start, moves, limit):
    """See :func:`test_a_windowed_placement_moves_rows_as_the_two_passes_do`."""
    _placed_as_two_passes(start, moves, limit)


@given(
    start=st.dictionaries(st.integers(1, 40), PLACES, max_size=12),
    moves=st.lists(st.tuples(st.integers(1, 40), PLACES), max_size=30),
    caps=st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)),
)
def test_a_windowed_placement_moves_rows_as_the_two_passes_do(start, moves, caps):
    """With a window per section (calls, open, results), each section keeps
    at most its own: the last row of the moved row's section goes."""
    _placed_as_two_passes(start, moves, views.Window(*caps))


def _placed_as_two_passes(start, moves, limit):
    """``views.Placement`` (kept in order) answers what the two passes over
    every row of :func:`_moved_by_two_passes` answer, after any moves, at any limit."""
    start = {pk: (p[0], p[1], -pk) for pk, p in start.items()}  # a place names its row
    places, placement = dict(start), views.Placement(start)
    for challenge_id, place in moves:
        place = (place[0], place[1], -challenge_id)
        expected = _moved_by_two_passes(places, challenge_id, place, limit)
        assert placement.move(challenge_id, place, limit) == expected
        assert placement.places == places


WHOLE_VIEW = 'id="roster" class="roster"'


async def _ping(dashboard: Phone) -> list[str]:
    """Ping with the dashboard's stamp; every frame up to the answer (a pong
    or a whole view), taken."""
    dashboard.take_waiting()
    await dashboard.socket.send_to(text_data=json.dumps({"action": "ping", "v": dashboard.stamp}))
    frames = []
    while not frames or (frames[-1].startswith("<!--v:") and WHOLE_VIEW not in frames[-1]):
        frames.append(await dashboard.socket.receive_from(timeout=10))
        dashboard._take(frames[-1])
    return frames


@pytest.mark.parametrize("behind", [SENT_STAMPS_KEPT + 4, 60])
async def test_a_ping_many_frames_behind_gets_pong_not_the_whole_view(
    game, settings, heartbeat_clock, behind
):
    """Issue 14: under load a dashboard reads its frames seconds late; its
    ping names a stamp sent many frames ago (more than the 16 a phone's
    socket keeps). Those frames arrive before the answer: pong, not the
    whole view (which drops the rows fed before it was read)."""
    settings.DASHBOARD_TICK_SECONDS = 0.01
    session = game["session"]
    dashboard, challenge = await _watched_challenge(game)
    before = dashboard.stamp
    held = []  # on their way: received here, not yet shown
    for _ in range(behind):  # a move per tick: a frame each, each with its stamp
        await _move_in_database(challenge)
        feed.feed_of(session).challenge_changed(challenge.pk, None)
        held.append(await dashboard.socket.receive_from(timeout=5))
    assert len({split_stamp(frame)[0] for frame in held}) == behind
    heartbeat_clock.advance(60)  # no snapshot answers: the exact check
    await dashboard.socket.send_to(text_data=json.dumps({"action": "ping", "v": before}))
    answer = await dashboard.socket.receive_from(timeout=5)
    assert json.loads(answer) == {"type": "pong"}
    for frame in held:
        assert WHOLE_VIEW not in frame
        dashboard._take(frame)
    await _as_fresh(dashboard, session)


async def test_a_frame_sent_while_a_ping_reads_its_parts_does_not_cost_the_whole_view(
    game, settings, heartbeat_clock, monkeypatch
):
    """Issue 14: a ping names the stamp last sent; while its answer reads the
    database, the feed sends the next tick's frame (a burst: the read waits
    behind the moves). That frame reaches the screen before the answer, so
    the answer is pong, not the whole view (which, mid-burst, dropped the
    rows fed before it and listed no result with 750 challenges open: 420
    of 9,000 results never reached a dashboard)."""
    from challenges.consumers.narrate import NarrateConsumer

    settings.DASHBOARD_TICK_SECONDS = 0.01
    session = game["session"]
    dashboard, challenge = await _watched_challenge(game)
    read = NarrateConsumer.current_parts
    raced = []

    async def racing(consumer):
        if not raced:  # the move commits and its frame goes out during the read
            raced.append(True)
            await _move_in_database(challenge)
            feed.feed_of(session).challenge_changed(challenge.pk, None)
            await feed.feed_of(session).flushed()
        return await read(consumer)

    monkeypatch.setattr(NarrateConsumer, "current_parts", racing)
    heartbeat_clock.advance(60)  # no snapshot answers: the exact check
    frames = await _ping(dashboard)
    assert raced
    assert [WHOLE_VIEW in f for f in frames] == [False, False], frames
    assert ROW.findall(frames[0]) == [str(challenge.pk)]
    assert json.loads(frames[1]) == {"type": "pong"}
    await _as_fresh(dashboard, session)


async def test_a_ping_while_rows_wait_for_the_tick_gets_them_then_pong(game, settings):
    settings.DASHBOARD_TICK_SECONDS = 1.0
    session = game["session"]
    dashboard = await _dashboard(game)
    challenge = await database_sync_to_async(opposed_challenge)(
        session, game["helen"], game["grady"], bid="Ferocious"
    )  # its row waits for the tick: the database is ahead of the screen
    row, answer = await _ping(dashboard)
    assert ROW.findall(row) == [str(challenge.pk)]
    assert json.loads(answer) == {"type": "pong"}  # not a whole view
    await _as_fresh(dashboard, session)


async def _lost_move(game) -> tuple[Phone, Challenge]:
    """A dashboard connected after Helen challenged Grady, then a move of that
    challenge whose broadcast was lost: the feed has nothing to wait for."""
    dashboard, challenge = await _watched_challenge(game)
    await _move_in_database(challenge)
    return dashboard, challenge


async def test_a_ping_after_a_lost_broadcast_gets_the_row_repaired_then_pong(game, settings):
    """Issue 14: not the whole view (~0.5 s at 1,500 characters): the rows
    the screen shows at another version than the database's."""
    settings.DASHBOARD_TICK_SECONDS = 0.05
    session = game["session"]
    dashboard, challenge = await _lost_move(game)
    row, answer = await _ping(dashboard)
    assert ROW.findall(row) == [str(challenge.pk)] and WHOLE_VIEW not in row
    assert json.loads(answer) == {"type": "pong"}
    await _as_fresh(dashboard, session)


async def test_a_repaired_row_this_worker_kept_is_not_read_again(game, settings, monkeypatch):
    """Issue 14: a repair asks the feed for the version it just read, so a
    row this worker kept at that version (its mover committed it here, the
    broadcast did not come) is rendered from memory, not read anew."""
    settings.DASHBOARD_TICK_SECONDS = 0.05
    session = game["session"]
    dashboard, challenge = await _lost_move(game)
    moved = await Challenge.objects.aget(pk=challenge.pk)
    committed_rows.remember(moved)  # as the mover's commit would have
    asked: list[tuple[int, int | None]] = []
    get = committed_rows.get

    def spy(challenge_id: int, version: int | None):
        asked.append((challenge_id, version))
        return get(challenge_id, version)

    monkeypatch.setattr(committed_rows, "get", spy)
    reads = Challenge.objects.filter
    monkeypatch.setattr(
        Challenge.objects, "filter", lambda *a, **k: pytest.fail("read again") or reads(*a, **k)
    )
    row, answer = await _ping(dashboard)
    assert asked == [(challenge.pk, moved.version)]
    assert ROW.findall(row) == [str(challenge.pk)]
    assert json.loads(answer) == {"type": "pong"}
    monkeypatch.undo()
    await _as_fresh(dashboard, session)


async def test_a_lost_trait_loss_is_repaired_by_her_roster_row(game, settings):
    settings.DASHBOARD_TICK_SECONDS = 0.05
    session, helen = game["session"], game["helen"]
    dashboard = await _dashboard(game)

    @database_sync_to_async
    def lose_one() -> None:  # a loss written with no broadcast
        TraitLoss.objects.create(session=session, character=helen, trait=helen.traits.first())

    await lose_one()
    row, answer = await _ping(dashboard)
    assert f'id="roster-{helen.pk}"' in row and WHOLE_VIEW not in row
    assert json.loads(answer) == {"type": "pong"}
    await _as_fresh(dashboard, session)


@database_sync_to_async
def _time_out_unannounced(session) -> None:
    GameSession.objects.filter(pk=session.pk).update(time_out=True)


@database_sync_to_async
def _departure_unannounced(session) -> None:
    Presence.objects.filter(session=session, character__name="Grady").update(status="absent")


@pytest.mark.parametrize(
    "lost", [_time_out_unannounced, _departure_unannounced], ids=["time out", "a departure"]
)
async def test_a_lost_change_beyond_the_rows_gets_the_whole_view(game, settings, lost):
    """Time out shows in the controls, a departure in the static/simple
    choices too: no row repairs them."""
    settings.DASHBOARD_TICK_SECONDS = 0.05
    session = game["session"]
    dashboard = await _dashboard(game)
    await lost(session)
    (view,) = await _ping(dashboard)
    assert WHOLE_VIEW in view
    await _as_fresh(dashboard, session)


async def test_a_repair_that_did_not_take_is_followed_by_the_whole_view(
    game, settings, monkeypatch
):
    """If the rows a repair sent never came (here: the feed renders nothing),
    the next ping finds the same row at the same version and gets the whole view."""
    settings.DASHBOARD_TICK_SECONDS = 0.05
    session = game["session"]
    dashboard, challenge = await _lost_move(game)
    render = feed.render_changes
    monkeypatch.setattr(feed, "render_changes", lambda *args: feed.Changes(seq=render(*args).seq))
    (answer,) = await _ping(dashboard)
    assert json.loads(answer) == {"type": "pong"}
    (view,) = await _ping(dashboard)
    assert WHOLE_VIEW in view
    monkeypatch.undo()
    await _as_fresh(dashboard, session)


async def test_a_mob_scene_is_rendered_once_per_tick_for_every_dashboard(settings, monkeypatch):
    """Issue 14: each dashboard rendered the mob scenes' section on every move
    of a scene and of its test (~30% of a worker in an evening with mob
    scenes); now the feed renders it once per tick for all of them, in the
    frame of the tick's rows, and each ends as a fresh dashboard shows it."""
    from tests.challenges.test_mob_services import mob_table, three_on_dee

    settings.DASHBOARD_TICK_SECONDS = 2.0  # the whole scene falls in one tick
    t = await database_sync_to_async(mob_table)()
    game = {"session": t["session"], "narrator": t["narrator"]}
    dashboards = [await _dashboard(game) for _ in range(3)]
    render = feed.render_mobs
    renders = []

    def counted(session):
        renders.append(session.pk)
        return render(session)

    monkeypatch.setattr(feed, "render_mobs", counted)
    test = await database_sync_to_async(three_on_dee)(t)  # 9 moves of a scene, a test opened
    for dashboard in dashboards:
        (frame,) = await _frames(dashboard, quiet=3.0)
        assert '<section id="mob-dashboard"' in frame
        assert f"challenge-{test.pk}" in frame  # the test's row, in the same frame
    assert renders == [t["session"].pk]  # once, for the three dashboards
    for dashboard in dashboards:
        await _as_fresh(dashboard, t["session"])


async def test_a_lost_mob_scene_broadcast_is_repaired_by_its_section_then_pong(settings):
    """Issue 14: the mob scenes' section comes through the feed, so a ping
    that finds it behind gets it, not the whole view."""
    from tests.challenges.test_mob_services import mob_table, opened

    settings.DASHBOARD_TICK_SECONDS = 0.05
    t = await database_sync_to_async(mob_table)()
    session = t["session"]
    mob = await database_sync_to_async(opened)(t)
    dashboard = await _dashboard({"session": session, "narrator": t["narrator"]})
    await database_sync_to_async(MobScene.objects.filter(pk=mob.pk).update)(
        version=F("version") + 1
    )  # a move whose broadcast was lost
    section, answer = await _ping(dashboard)
    assert '<section id="mob-dashboard"' in section and WHOLE_VIEW not in section
    assert json.loads(answer) == {"type": "pong"}
    await _as_fresh(dashboard, session)


async def _two_dashboards_hear_one_channel(game) -> None:
    """Two dashboards of one session on this worker: the group holds the
    feed's one channel, not theirs; a challenge's row and a presence set
    (passed on to each dashboard's channel: a whole view) reach both, within
    a second; with the last one gone the feed's channel leaves the group and
    its listener ends."""
    from channels.layers import get_channel_layer

    from challenges.realtime import narrators_group

    session = game["session"]
    first, second = await _dashboard(game), await _dashboard(game)
    rows_feed = feed._feeds[session.pk]
    group = narrators_group(session.pk)
    layer = get_channel_layer()
    members = await _members(layer, group)
    assert members == {rows_feed.channel}
    assert rows_feed.channel.startswith("specific.")  # channels-redis pulls the sockets' list

    challenge = await database_sync_to_async(opposed_challenge)(
        session, game["helen"], game["grady"], bid="Ferocious"
    )
    for dashboard in (first, second):
        frames = await _frames(dashboard, quiet=1.0)
        assert any(f'id="challenge-{challenge.pk}"' in f for f in frames), frames

    await _grady_takes_a_break(game)
    for dashboard in (first, second):
        # Raw: the simulated screen is the live part, without the page's choices.
        frame = await dashboard.socket.receive_from(timeout=1.0)
        assert await dashboard.socket.receive_nothing(timeout=0.5)
        assert 'id="roster"' in frame and 'id="challenge-list"' in frame  # the whole view

    listener = rows_feed.listener
    await first.close()
    assert rows_feed.listener is listener and not listener.done()  # one dashboard left
    await second.close()
    assert listener.done() and rows_feed.listener is None
    assert await _members(layer, group) == set()
    assert session.pk not in feed._feeds


async def _grady_takes_a_break(game) -> None:
    """A narrator sets Grady on a break (a presence set: whole dashboards)."""
    await database_sync_to_async(services.presence_set)(
        session=game["session"],
        character=game["grady"],
        status="break",
        user=game["narrator"],
        msg_id=uuid.uuid4().hex,
    )


async def _members(layer, group: str) -> set[str]:
    """The channels in ``group`` on ``layer`` (in-memory or channels-redis)."""
    if hasattr(layer, "groups"):
        return set(layer.groups.get(group, {}))
    connection = layer.connection(layer.consistent_hash(group))
    return {m.decode() for m in await connection.zrange(layer._group_key(group), 0, -1)}


async def test_a_worker_hears_a_sessions_events_once_for_all_its_dashboards(game):
    await _two_dashboards_hear_one_channel(game)


@pytest.mark.redis
async def test_a_worker_hears_a_sessions_events_once_for_all_its_dashboards_on_redis(game):
    """The same through channels-redis: the feed's channel is pulled with the
    sockets' (a channel of another prefix waited up to 5 s behind their
    blocking pull), and the test's loop ends cleanly (no receive left)."""
    await _two_dashboards_hear_one_channel(game)


# Whole views shared by the dashboards asking at once (feed.SharedRead) -------


def _threaded_reads():
    """A ``SharedRead`` whose reads run in a thread of their own, each
    waiting for ``go`` (so a test decides when a read begins and ends), and
    the log of ``(flag, number)`` each read was called with."""
    import asyncio
    import threading

    go = threading.Event()
    calls: list[tuple[bool, int]] = []

    def read(flag: bool) -> int:
        number = len(calls) + 1
        calls.append((flag, number))
        assert go.wait(5)
        return number

    return feed.SharedRead(run=lambda work: asyncio.to_thread(work)), read, go, calls


async def test_dashboards_asking_before_a_read_begins_share_it_with_their_flags_ored():
    import asyncio

    shared, read, go, calls = _threaded_reads()
    go.set()
    first, second, third = await asyncio.gather(
        shared.get(read, False), shared.get(read, True), shared.get(read, False)
    )
    assert first == second == third == 1
    assert calls == [(True, 1)]  # one read, with the choices one of them asked for


async def test_a_dashboard_asking_once_a_read_began_gets_a_read_that_begins_after():
    """A read that has begun may have missed a commit made before the call
    (a presence set whose event asked for the view): never joined."""
    import asyncio

    shared, read, go, calls = _threaded_reads()
    first = asyncio.ensure_future(shared.get(read, False))
    async with asyncio.timeout(5):
        while not calls:  # the first read has begun (and waits for go)
            await asyncio.sleep(0.01)
    later = [asyncio.ensure_future(shared.get(read, flag)) for flag in (False, True)]
    await asyncio.sleep(0.05)
    go.set()
    assert await first == 1
    assert [await f for f in later] == [2, 2]  # the two later ones share the second
    assert calls == [(False, 1), (True, 2)]


async def test_a_failed_shared_read_fails_every_dashboard_that_shared_it():
    import asyncio

    def read(flag: bool) -> int:
        raise RuntimeError("the database is gone")

    shared = feed.SharedRead(run=lambda work: asyncio.to_thread(work))
    results = await asyncio.gather(shared.get(read), shared.get(read), return_exceptions=True)
    assert [str(r) for r in results] == ["the database is gone"] * 2
    assert await asyncio.gather(shared.get(lambda flag: 7)) == [7]  # the next read is new


async def test_a_presence_set_reads_the_whole_dashboard_once_for_three_dashboards(
    game, monkeypatch
):
    """Issue 14: a presence set (and dashboards connecting at once) asked each
    dashboard for its whole view, ~0.8 s of the database thread each at 1,500
    characters; now the dashboards asking before a read begins share it.
    Each still ends showing what a fresh dashboard shows, choices included."""
    from challenges.consumers.narrate import NarrateConsumer

    session = game["session"]
    dashboards = [await _dashboard(game) for _ in range(3)]
    reads = []
    read_view = NarrateConsumer._read_view

    def counted(self, choices):
        reads.append(choices)
        return read_view(self, choices)

    monkeypatch.setattr(NarrateConsumer, "_read_view", counted)
    await _grady_takes_a_break(game)
    for dashboard in dashboards:
        # Raw: the simulated screen is the live part, without the page's choices.
        frame = await dashboard.socket.receive_from(timeout=2.0)
        assert await dashboard.socket.receive_nothing(timeout=0.3)
        dashboard.stamp = split_stamp(frame)[0]
        assert 'id="roster"' in frame and 'id="challenge-list"' in frame  # the whole view
        assert 'hx-swap-oob="innerHTML:#static-character"' in frame  # the choices
    assert reads == [True]  # one read for the three, with the choices
    for dashboard in dashboards:
        assert dashboard.stamp == await current_dashboard_stamp(session)
        await dashboard.close()


async def test_a_shared_read_that_failed_before_it_began_is_not_joined_again():
    import asyncio

    tries = []

    async def run(work):
        tries.append(work)
        if len(tries) == 1:
            raise ConnectionError("no database thread")  # before work() began
        return work()

    shared = feed.SharedRead(run=run)
    with pytest.raises(ConnectionError):
        await shared.get(lambda flag: 1)
    assert await asyncio.wait_for(shared.get(lambda flag: 2), 5) == 2
    assert len(tries) == 2


def test_a_ticks_results_each_reach_the_dashboard_whatever_their_commit_order(monkeypatch):
    """Three results in one tick, the newest first, with room for two: each is
    inserted at its turn (the oldest first), so each reaches the dashboard's
    frame, and the window keeps the two newest. In commit order the oldest
    never reached it."""
    from challenges import heartbeat
    from challenges.consumers import feed as feeds
    from challenges.consumers.narrate import NarrateConsumer

    window = views.Window(called=1, open=1, results=2)
    monkeypatch.setattr(views.dashboard, "DASHBOARD_LIMIT", window)  # Placement reads it there
    consumer = NarrateConsumer.__new__(NarrateConsumer)
    consumer.places = views.Placement()
    consumer.known = heartbeat.Tally(1)
    consumer.known_roster = heartbeat.Tally(3)
    consumer.fed = set()
    rows = [
        (pk, f'<article id="challenge-{pk}">{pk}</article>', 1, (1, -since, -pk))
        for pk, since in ((3, 30.0), (2, 20.0), (1, 10.0))
    ]
    parts = "".join(consumer._place(feeds.Changes(seq=1, rows=rows)))
    for pk in (1, 2, 3):
        assert f">{pk}</article>" in parts
    assert set(consumer.places.places) == {2, 3}
    assert set(consumer.known.rows) == {2, 3}
