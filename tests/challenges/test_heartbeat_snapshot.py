"""Issue 14: a current phone's heartbeat answered from the worker's snapshot.

- ``heartbeat.session_play_parts`` (one query for a whole session) gives every
  character exactly ``heartbeat.play_parts`` (hypothesis, random sessions);
- a current phone's ping costs no query once the snapshot is read;
- a broadcast dropped on purpose is repaired by the first ping from
  ``SNAPSHOT_SECONDS`` after its commit on (the stated bound), and a ping
  before that is answered ``pong`` at worst (never a wrong view);
- a snapshot answers ``pong`` only if it holds exactly the socket's parts and
  was read after they were set (a table of cases).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import transaction
from django.db.backends import utils as db_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from challenges import heartbeat, services
from challenges.consumers.base import (
    HEARTBEAT_MARK,
    UNKNOWN_STAMP_MESSAGE,
    UNKNOWN_STAMP_SECONDS,
)
from challenges.consumers.play import PlayConsumer
from challenges.models import Challenge, Combat, DiceRoll, MobScene, StoryCombat, TraitLoss
from challenges.realtime import collecting, send_collected
from characters.models import Chronicle, GameSession, Presence, Trait
from tests.challenges.test_bns_flow import _by_night
from tests.challenges.test_phone_frames import _phones
from tests.challenges.test_story_pages import _story_evening
from tests.factories import make_character, narrated_chronicle
from tests.faults.phones import Phone, current_play_stamp


@pytest.fixture
def queries(monkeypatch):
    """Every SQL statement run in this process, on any thread (the database thread too)."""
    seen: list[str] = []
    execute, executemany = db_utils.CursorWrapper.execute, db_utils.CursorWrapper.executemany

    def counted(method):
        def run(self, sql, *args, **kwargs):
            seen.append(sql)
            return method(self, sql, *args, **kwargs)

        return run

    monkeypatch.setattr(db_utils.CursorWrapper, "execute", counted(execute))
    monkeypatch.setattr(db_utils.CursorWrapper, "executemany", counted(executemany))
    return seen


# --- one query for the whole session equals one query per phone -----------------

_people = st.lists(
    st.tuples(
        st.sampled_from(["none", "present", "break", "absent"]),
        st.integers(min_value=0, max_value=6),
    ),
    min_size=2,
    max_size=5,
)


@st.composite
def _evenings(draw):
    people = draw(_people)
    n = len(people)
    who = st.integers(min_value=0, max_value=n - 1)
    challenges = draw(
        st.lists(
            st.tuples(who, st.none() | who, st.integers(min_value=1, max_value=9)), max_size=12
        )
    )
    losses = draw(st.lists(who, max_size=6))
    # (participants, version, minutes ago: ties in created_at happen)
    mobs = draw(
        st.lists(
            st.tuples(
                st.sets(who, min_size=1, max_size=3),
                st.integers(min_value=1, max_value=9),
                st.integers(min_value=0, max_value=3),
            ),
            max_size=6,
        )
    )
    time_out, ended, other_open = draw(st.booleans()), draw(st.booleans()), draw(st.booleans())
    return people, challenges, losses, mobs, time_out, ended, other_open


# bns combats and Storytelling fights (participants, version, minutes ago) and
# rolls (roller or none, opponent or none, version)
@st.composite
def _extras(draw):
    n = draw(st.integers(min_value=2, max_value=5))
    who = st.integers(min_value=0, max_value=n - 1)
    fights = st.lists(
        st.tuples(
            st.sets(who, min_size=1, max_size=3),
            st.integers(min_value=1, max_value=9),
            st.integers(min_value=0, max_value=3),
        ),
        max_size=5,
    )
    rolls = st.lists(
        st.tuples(st.none() | who, st.none() | who, st.integers(min_value=1, max_value=9)),
        max_size=6,
    )
    return n, draw(fights), draw(fights), draw(rolls)


def _build(people, challenges, losses, mobs, time_out, ended, other_open):
    table = narrated_chronicle(f"Snap {uuid.uuid4().hex[:6]}")
    session, chronicle = table["session"], table["chronicle"]
    characters = []
    for n, (status, health) in enumerate(people):
        character = make_character(chronicle, f"P{n}", traits=[("Strong", "physical", 5)])
        Presence.objects.filter(session=session, character=character).delete()
        if status != "none":
            Presence.objects.create(
                session=session, character=character, status=status, health=health
            )
        characters.append(character)
    now = datetime.now(tz=UTC)
    Challenge.objects.bulk_create(
        Challenge(
            session=session,
            kind="opposed",
            challenger=characters[first],
            defender=None if second is None else characters[second],
            category="physical",
            stage="bids",
            stage_since=now,
            state={},
            version=version,
        )
        for first, second, version in challenges
    )
    for n in losses:
        trait = Trait.objects.filter(character=characters[n]).first()
        TraitLoss.objects.create(session=session, character=characters[n], trait=trait)
    for people_in, version, ago in mobs:
        mob = MobScene.objects.create(
            session=session, category="physical", stage="choosing", state={}, version=version
        )
        mob.participants.set([characters[n] for n in people_in])
        MobScene.objects.filter(pk=mob.pk).update(created_at=now - timedelta(minutes=ago))
    if ended:
        GameSession.objects.filter(pk=session.pk).update(ended_at=now)
        if other_open:
            GameSession.objects.create(chronicle=chronicle, name="Next")
    GameSession.objects.filter(pk=session.pk).update(time_out=time_out)
    return session, characters


@pytest.mark.django_db
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_evenings())
def test_one_query_for_the_session_gives_every_phone_its_exact_parts(evening):
    with transaction.atomic():
        session, characters = _build(*evening)
        nobody, snapshot = heartbeat.session_play_parts(session.pk)
        elsewhere = Chronicle.objects.create(name=f"Other {uuid.uuid4().hex[:6]}")
        stranger = make_character(elsewhere, "Stranger", present=False)
        for character in [*characters, stranger]:
            exact = heartbeat.play_parts(character.pk, session.pk, session.chronicle_id)
            assert snapshot.get(character.pk, nobody) == exact, character.name
        transaction.set_rollback(True)


@pytest.mark.django_db
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_extras())
def test_the_combat_roll_and_fight_parts_of_a_snapshot_are_each_phones_exact_ones(extras):
    n, combats, fights, rolls = extras
    with transaction.atomic():
        session, characters = _build([("present", 6)] * n, [], [], [], False, False, False)
        now = datetime.now(tz=UTC)
        for model, made in ((Combat, combats), (StoryCombat, fights)):
            for people_in, version, ago in made:
                row = model.objects.create(session=session, state={}, version=version)
                row.participants.set([characters[i] for i in people_in])
                model.objects.filter(pk=row.pk).update(created_at=now - timedelta(minutes=ago))
        for roller, opponent, version in rolls:
            DiceRoll.objects.create(
                session=session,
                character=None if roller is None else characters[roller],
                opponent=None if opponent is None else characters[opponent],
                kind="contested",
                label="Roll",
                version=version,
            )
        extra = heartbeat.session_extra_parts(session.pk, heartbeat.EXTRA_PARTS)
        snapshot = heartbeat.Snapshot(0.0, *heartbeat._play_rows(session.pk), extra)
        for character in characters:
            parts = snapshot.parts_of(character.pk)
            assert parts["combat"] == heartbeat.combat_part(session.pk, character.pk)
            assert parts["roll"] == heartbeat.rolls_part(session.pk, character.pk)
            assert parts["fight"] == heartbeat.fight_part(session.pk, character.pk)
        transaction.set_rollback(True)


def test_an_unknown_part_is_refused():
    with pytest.raises(ValueError, match="No such heartbeat part"):
        heartbeat.session_extra_parts(1, ("dice",))


@pytest.mark.django_db
def test_a_session_that_does_not_exist_has_an_empty_snapshot():
    assert heartbeat.session_play_parts(10**6) == (None, {})


# --- through the real router ---------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_current_phones_ping_costs_no_query(game, queries, heartbeat_clock, monkeypatch):
    monkeypatch.setattr(services.clocks, "tick_wanted", lambda session_id: False)
    helen, grady = await _phones(game)
    assert await helen.heartbeat() == {"type": "pong"}  # reads the snapshot: one query
    assert len(queries) >= 1
    queries.clear()
    for phone in (helen, grady, helen):
        assert await phone.heartbeat() == {"type": "pong"}
    assert queries == []
    await helen.close()
    await grady.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_current_phones_ping_digests_her_stamp_once(game, heartbeat_clock, monkeypatch):
    """The heartbeats' fixed cost (issue 14): a ping answered from the snapshot
    works out the socket's stamp once, not once for the echo's default and
    again for the comparison."""
    monkeypatch.setattr(services.clocks, "tick_wanted", lambda session_id: False)
    helen, grady = await _phones(game)
    assert await helen.heartbeat() == {"type": "pong"}  # the snapshot is read
    digests = []
    digest = heartbeat.digest

    def counted(parts):
        digests.append(parts)
        return digest(parts)

    monkeypatch.setattr(heartbeat, "digest", counted)
    for phone in (helen, grady):
        assert await phone.heartbeat() == {"type": "pong"}
    assert len(digests) == 2
    await helen.close()
    await grady.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize("ruleset", ["bns", "storytelling"])
async def test_a_current_phones_ping_costs_no_query_in_every_ruleset(
    ruleset, queries, heartbeat_clock, monkeypatch
):
    """A bns phone's stamp has ``combat``, a storytelling phone's ``roll`` and
    ``fight``: the snapshot holds them too, so her ping is answered from memory."""
    monkeypatch.setattr(services.clocks, "tick_wanted", lambda session_id: False)
    if ruleset == "bns":
        world = await database_sync_to_async(_by_night)()
        people = [(world["rosa"], world["rosa_player"]), (world["tooth"], world["tooth_player"])]
    else:
        world = await database_sync_to_async(_story_evening)()
        people = [(world["iris"], world["player"])]
    phones = [Phone(f"/ws/play/{character.pk}/", user) for character, user in people]
    for phone in phones:
        await phone.connect()
    assert await phones[0].heartbeat() == {"type": "pong"}  # reads the snapshot
    assert queries
    queries.clear()
    for phone in [*phones, phones[0]]:
        assert await phone.heartbeat() == {"type": "pong"}
    assert queries == []
    for phone in phones:
        await phone.close()


@database_sync_to_async
def _open_without_broadcast(game) -> None:
    """Grady challenges Helen; the broadcasts of that move are dropped on purpose."""
    _open_holding_broadcast(game)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_dropped_broadcast_is_repaired_by_the_first_ping_after_the_bound(
    game, heartbeat_clock
):
    helen, grady = await _phones(game)
    assert await helen.heartbeat() == {"type": "pong"}  # a snapshot is read now
    await _open_without_broadcast(game)
    await helen.settle(0.2)
    assert "Tough" not in helen.view  # the broadcast is lost
    # Within SNAPSHOT_SECONDS of the snapshot, her ping is still answered from
    # it: pong, her screen unchanged (the repair waits for the bound).
    heartbeat_clock.advance(heartbeat.SNAPSHOT_SECONDS / 2)
    assert await helen.heartbeat() == {"type": "pong"}
    # The first ping from SNAPSHOT_SECONDS after the commit on repairs it.
    heartbeat_clock.advance(heartbeat.SNAPSHOT_SECONDS)
    assert await helen.heartbeat() is None  # her whole view
    assert "Tough" in helen.view
    assert helen.stamp == await current_play_stamp(game["helen"], game["session"])
    assert await helen.heartbeat() == {"type": "pong"}
    await helen.close()
    await grady.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_ping_racing_a_broadcast_on_its_way_gets_pong_behind_it_not_a_whole_view(
    game, heartbeat_clock, settings
):
    settings.HEARTBEAT_RECHECK_SECONDS = 0.3
    helen, grady = await _phones(game)
    held = await database_sync_to_async(_open_holding_broadcast)(game)
    heartbeat_clock.advance(heartbeat.SNAPSHOT_SECONDS * 2)  # no snapshot answers: exact check
    # Her ping reaches the server after the commit, before the move's broadcast:
    # the database is ahead of her screen, but no answer yet (a recheck is queued).
    await helen.socket.send_to(text_data=json.dumps({"action": "ping", "v": helen.stamp}))
    assert await helen.socket.receive_nothing(timeout=0.1)
    await send_collected(held)  # the broadcast arrives, ahead of the recheck
    card = await helen.socket.receive_from(timeout=5)
    assert 'id="live"' not in card and "Tough" in card  # her new card, not her whole view
    helen._take(card)
    assert helen._take(await helen.socket.receive_from(timeout=5)) == {"type": "pong"}
    assert helen.stamp == await current_play_stamp(game["helen"], game["session"])
    await helen.close()
    await grady.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_ping_that_crossed_a_frame_on_its_way_gets_pong_not_a_whole_view(
    game, heartbeat_clock
):
    """Issue 14: her ping names the stamp she showed when she sent it; the
    move's card was already on its way to her (sent after that stamp). The
    card arrives before the answer, so the answer is pong, not her whole
    view (under load, nearly every ping crossed a frame and each cost one)."""
    helen, grady = await _phones(game)
    before = helen.stamp
    held = await database_sync_to_async(_open_holding_broadcast)(game)
    await send_collected(held)
    card = await helen.socket.receive_from(timeout=5)  # on its way: not yet taken
    heartbeat_clock.advance(heartbeat.SNAPSHOT_SECONDS * 2)  # no snapshot answers: exact check
    await helen.socket.send_to(text_data=json.dumps({"action": "ping", "v": before}))
    assert json.loads(await helen.socket.receive_from(timeout=5)) == {"type": "pong"}
    helen._take(card)
    assert helen.stamp != before
    assert helen.stamp == await current_play_stamp(game["helen"], game["session"])
    await helen.close()
    await grady.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize(("rechecks", "whole_view"), [(3, False), (1, True)])
async def test_a_broadcast_later_than_the_first_recheck_still_spares_the_whole_view(
    game, heartbeat_clock, settings, rechecks, whole_view
):
    """Issue 14: on a busy worker a move's broadcast may come after the first
    recheck; up to ``HEARTBEAT_RECHECKS`` looks, each twice as late, wait
    for it before the whole view."""
    settings.HEARTBEAT_RECHECK_SECONDS = 0.2
    settings.HEARTBEAT_RECHECKS = rechecks
    helen, grady = await _phones(game)
    held = await database_sync_to_async(_open_holding_broadcast)(game)
    heartbeat_clock.advance(heartbeat.SNAPSHOT_SECONDS * 2)  # no snapshot answers: exact check
    await helen.socket.send_to(text_data=json.dumps({"action": "ping", "v": helen.stamp}))
    if whole_view:  # one look only, 0.2 s later: the whole view
        view = await helen.socket.receive_from(timeout=5)
        assert 'id="live"' in view and HEARTBEAT_MARK in view
        helen._take(view)
    else:  # the first look (0.2 s) is past, the second (0.4 s later) not yet
        assert await helen.socket.receive_nothing(timeout=0.35)
        await send_collected(held)
        card = await helen.socket.receive_from(timeout=5)
        assert 'id="live"' not in card and "Tough" in card
        helen._take(card)
        assert helen._take(await helen.socket.receive_from(timeout=5)) == {"type": "pong"}
    assert helen.stamp == await current_play_stamp(game["helen"], game["session"])
    await helen.close()
    await grady.close()


def _open_holding_broadcast(game) -> list:
    """Grady challenges Helen; the move's broadcasts are returned, not sent."""
    with collecting() as outbox:
        services.challenge_open(
            session=game["session"],
            challenger=game["grady"],
            defender=game["helen"],
            category="physical",
            bids=["Tough"],
            is_attack=True,
            user=game["grady_player"],
            msg_id=uuid.uuid4().hex,
        )
    return list(outbox)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_ping_echoing_another_stamp_is_checked_exactly(game, queries):
    helen, grady = await _phones(game)
    assert await helen.heartbeat() == {"type": "pong"}  # the snapshot is read
    queries.clear()
    # A phone showing an older screen than the socket last sent (a frame lost
    # on the way): never answered from memory.
    await helen.socket.send_to(text_data=json.dumps({"action": "ping", "v": "0" * 16}))
    view = await helen.socket.receive_from(timeout=10)
    assert helen._take(view) is None
    assert queries  # the exact check and the view
    # Marked as a heartbeat's answer (a move's whole view is not: the bench tells them apart).
    assert view.startswith(f"<!--v:{helen.stamp}-->{HEARTBEAT_MARK}")
    await helen.close()
    await grady.close()


# --- the rule, case by case ----------------------------------------------------------

_MINE: heartbeat.Parts = {
    "session": (0, 0),
    "screen": (2, 5, 9, 1, 6, 0),
    "seat": (3,),
    "mob": (0, 0),
}


def _consumer(parts, stamped_at, **extra) -> PlayConsumer:
    consumer = PlayConsumer.__new__(PlayConsumer)
    consumer.session = type("S", (), {"pk": 3})()
    consumer.character = type("C", (), {"pk": 7})()
    consumer.stamp_parts = dict(parts)
    consumer.stamped_at = stamped_at
    for name, value in extra.items():
        setattr(consumer, name, value)
    return consumer


def _row_of(parts: heartbeat.Parts) -> tuple[int, ...]:
    """The values of a snapshot row (after the character id) holding ``parts``."""
    return (*parts["session"], *parts["screen"], *parts["seat"], *parts["mob"])


_BNS: heartbeat.Parts = {**_MINE, "combat": (1, 4)}
_STORY: heartbeat.Parts = {**_MINE, "roll": (2, 3, 11), "fight": (1, 2)}


def _changed(part: str, index: int, parts: heartbeat.Parts = _MINE) -> heartbeat.Parts:
    values = list(parts[part])
    values[index] += 1
    return {**parts, part: tuple(values)}


# (case, the snapshot's parts of her, consumer attributes, snapshot read at
# (seconds after her stamp was set), answered from memory)
_CASES = [
    ("the same parts, read after her stamp", _MINE, {}, 0.5, True),
    ("the same parts, read before her stamp", _MINE, {}, -1.0, False),
    ("the same parts, read at the instant of her stamp", _MINE, {}, 0.0, False),
    ("time out differs", _changed("session", 0), {}, 0.5, False),
    ("session ended", _changed("session", 1), {}, 0.5, False),
    ("a challenge more", _changed("screen", 0), {}, 0.5, False),
    ("a move (versions)", _changed("screen", 1), {}, 0.5, False),
    ("a newer challenge", _changed("screen", 2), {}, 0.5, False),
    ("a Trait lost", _changed("screen", 3), {}, 0.5, False),
    ("health", _changed("screen", 4), {}, 0.5, False),
    ("a break", _changed("screen", 5), {}, 0.5, False),
    ("another session opened", _changed("seat", 0), {}, 0.5, False),
    ("a mob scene", _changed("mob", 0), {}, 0.5, False),
    ("a mob scene moved", _changed("mob", 1), {}, 0.5, False),
    ("she has no row: another's parts", None, {}, 0.5, False),
    ("her combat, in a bns snapshot", _BNS, {"combat_rounds": True}, 0.5, True),
    ("a combat moved (bns)", _changed("combat", 1, _BNS), {"combat_rounds": True}, 0.5, False),
    ("her rolls and fights (storytelling)", _STORY, {"dice_pools": True}, 0.5, True),
    ("a roll moved", _changed("roll", 1, _STORY), {"dice_pools": True}, 0.5, False),
    ("a fight moved", _changed("fight", 0, _STORY), {"dice_pools": True}, 0.5, False),
    ("no session", _MINE, {"session": None}, 0.5, False),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("snapshot_parts", "extra", "read_after", "answered"),
    [case[1:] for case in _CASES],
    ids=[case[0] for case in _CASES],
)
async def test_a_snapshot_answers_pong_only_for_exactly_her_parts_read_after_her_stamp(
    snapshot_parts, extra, read_after, answered, monkeypatch
):
    moment = 1000.0  # now; her stamp was set half a second ago
    monkeypatch.setattr(heartbeat, "now", lambda: moment)
    extra = {"combat_rounds": False, "dice_pools": False, **extra}
    kinds = ("combat",) * extra["combat_rounds"] + ("roll", "fight") * extra["dice_pools"]
    mine = {**_MINE, **({"combat": _BNS["combat"]} if "combat" in kinds else {})}
    if "roll" in kinds:
        mine.update(roll=_STORY["roll"], fight=_STORY["fight"])
    consumer = _consumer(mine, moment - 0.5, **extra)
    nobody = (None, *_row_of(_changed("screen", 0)))  # another phone's
    rows = {} if snapshot_parts is None else {7: (7, *_row_of(snapshot_parts))}
    by_kind = {kind: {} if snapshot_parts is None else {7: snapshot_parts[kind]} for kind in kinds}
    heartbeat.phones.latest[3, kinds] = heartbeat.Snapshot(
        consumer.stamped_at + read_after, nobody, rows, by_kind
    )
    assert await consumer.current_in_snapshot() is answered


def test_a_socket_knows_the_stamps_it_sent_lately_the_latest_last():
    """``shown_after_frames``: a stamp among the last ``sent_stamps_kept``
    sent stands for the latest; an older one, or one never sent, for itself.
    A phone keeps 16, a dashboard 1024 (it gets a frame per feed tick)."""
    from challenges.consumers.narrate import NarrateConsumer
    from challenges.consumers.play import PlayConsumer

    phone, dashboard = PlayConsumer(), NarrateConsumer()
    assert phone.sent_stamps_kept == 16 and dashboard.sent_stamps_kept == 1024
    stamps = [f"{n:016x}" for n in range(40)]
    for socket in (phone, dashboard):
        assert socket.shown_after_frames(stamps[0]) == stamps[0]  # nothing sent yet
        for stamp in stamps:
            socket._note_sent(stamp)
        socket._note_sent(stamps[30])  # sent again: the latest now
        assert socket.shown_after_frames(stamps[39]) == stamps[30]
        assert socket.shown_after_frames("f" * 16) == "f" * 16  # never sent
    assert phone.shown_after_frames(stamps[23]) == stamps[23]  # beyond its 16
    assert phone.shown_after_frames(stamps[24]) == stamps[30]
    assert dashboard.shown_after_frames(stamps[0]) == stamps[30]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_pings_echoing_stamps_never_sent_get_one_whole_view_then_a_refusal(
    game, queries, heartbeat_clock
):
    """A forged or replayed ping draws the whole view once a heartbeat at most
    (before: each of the 40 pings a second the rate limit lets through did, 385
    whole views in 10 s); the refusals cost no query. A ping of a stamp it was
    sent still gets its pong, and a real phone's view left from an earlier
    connection gets its whole view on its first ping."""
    helen, grady = await _phones(game)
    await helen.socket.send_to(text_data=json.dumps({"action": "ping", "v": "0" * 16}))
    assert "<!--heartbeat-->" in await helen.socket.receive_from(timeout=10)
    queries.clear()
    for forged in range(20):
        await helen.socket.send_to(text_data=json.dumps({"action": "ping", "v": f"{forged:016}"}))
        answer = json.loads(await helen.socket.receive_from(timeout=10))
        assert answer == {"type": "error", "id": None, "message": UNKNOWN_STAMP_MESSAGE}
    assert queries == []
    assert await helen.heartbeat() == {"type": "pong"}  # her own stamp: answered as ever
    heartbeat_clock.advance(UNKNOWN_STAMP_SECONDS)
    await helen.socket.send_to(text_data=json.dumps({"action": "ping", "v": "f" * 16}))
    assert "<!--heartbeat-->" in await helen.socket.receive_from(timeout=10)
    await helen.close()
    await grady.close()
