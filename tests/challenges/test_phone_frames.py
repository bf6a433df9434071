"""A phone gets one card per change, not its whole view, and still shows
exactly what a fresh render shows (``tests.screen`` applies htmx's swaps).

A whole view costs ~9 queries and every move reaches both phones of a
challenge, so: a new challenge is appended to the open cards, a bid or a throw
replaces its card, a result moves the card on top of the results (the oldest
beyond ``RECENT_RESOLVED`` taken off). A result that costs the phone's
character Traits (or health) sends her card with her sheet and bid buttons
(and health) out of band; only other open cards or mob scenes offering her
Traits redraw the whole view.
"""

from __future__ import annotations

import json
import uuid

import pytest
from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from challenges import rows, views
from challenges.models import Challenge
from characters.models import GameSession
from characters.services import character_sheet
from tests.factories import make_character, make_user, opposed_challenge
from tests.faults.phones import Phone, current_play_stamp
from tests.screen import rendered

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def _phones(game) -> tuple[Phone, Phone]:
    helen = Phone(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    grady = Phone(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    await helen.connect()
    await grady.connect()
    return helen, grady


async def _act(phone: Phone, **message) -> dict:
    reply = await phone.act(uuid.uuid4().hex, **message)
    assert reply.get("status") == "ok", reply
    return reply


def _tap(phone: Phone, see) -> object:
    """Hand every view frame ``phone`` takes (acks left out) to ``see`` too;
    returns the ``_take`` it replaced (to put back)."""
    take = phone._take

    def tapped(frame: str):
        if not frame.startswith("{"):
            see(frame)
        return take(frame)

    phone._take = tapped
    return take


async def _frames_of(phone: Phone, step) -> list[str]:
    """The view frames ``phone`` gets while ``step()`` runs (acks left out)."""
    seen: list[str] = []
    take = _tap(phone, seen.append)
    try:
        await step()
        await phone.settle()
    finally:
        phone._take = take
    return seen


async def _assert_current(phone: Phone, character, session) -> None:
    """The phone's screen equals a fresh render, and its stamp the database's."""
    fresh = Phone(phone.path, phone.user)
    first = await fresh.connect()
    await fresh.close()
    assert phone.view == fresh.view and fresh.view == rendered(first.split("-->", 1)[1])
    assert phone.stamp == await current_play_stamp(character, session)


async def _open(helen: Phone, game, bid="physical:Ferocious") -> int:
    await _act(helen, action="challenge.open", defender=game["grady"].pk, bid=bid)
    return await database_sync_to_async(lambda: Challenge.objects.latest("id").pk)()


async def test_every_move_reaches_the_phones_as_one_card(game):
    helen, grady = await _phones(game)
    pk = None

    async def open_():
        nonlocal pk
        pk = await _open(helen, game)

    for phone in (helen, grady):
        frames = await _frames_of(phone, open_ if phone is helen else grady.settle)
        assert len(frames) == 1 and 'id="live"' not in frames[0]
        assert 'hx-swap-oob="beforeend:#open-cards"' in frames[0] and f'id="card-{pk}"' in frames[0]

    frames = await _frames_of(
        grady, lambda: _act(grady, action="challenge.bid", challenge=pk, bid="Tough")
    )
    assert len(frames) == 1 and f'<article id="card-{pk}"' in frames[0]
    assert 'hx-swap-oob="true"' in frames[0] and "stage-throws" in frames[0]
    for phone, character in ((helen, game["helen"]), (grady, game["grady"])):
        await phone.settle()
        await _assert_current(phone, character, game["session"])
    await helen.close()
    await grady.close()


async def test_a_result_moves_the_winners_card_and_redraws_the_losers_view(game):
    helen, grady = await _phones(game)
    pk = await _open(helen, game)
    await _act(grady, action="challenge.bid", challenge=pk, bid="Tough")
    await _act(helen, action="challenge.throw", challenge=pk, throw="rock")
    await helen.settle()
    helen_frames = await _frames_of(
        helen, lambda: _act(grady, action="challenge.throw", challenge=pk, throw="scissors")
    )
    grady_frames = await _frames_of(grady, grady.settle)
    # Helen won: her sheet is unchanged, her card moves on top of the results.
    assert len(helen_frames) == 1 and 'id="live"' not in helen_frames[0]
    assert f'<article id="card-{pk}" hx-swap-oob="delete">' in helen_frames[0]
    assert 'hx-swap-oob="afterbegin:#done-cards"' in helen_frames[0]
    assert "You win!" in helen.view
    # Grady lost Tough: his card moves, his sheet and bid buttons come out of
    # band (issue 14), not his whole view; his screen equals a fresh one.
    assert len(grady_frames) == 1 and 'id="live"' not in grady_frames[0]
    assert 'hx-swap-oob="afterbegin:#done-cards"' in grady_frames[0]
    assert 'id="sheet"' in grady_frames[0] and 'id="start-bids"' in grady_frames[0]
    assert "You lose: your <bdi>Tough</bdi> is lost." in grady.view and 'class="lost"' in grady.view
    for phone, character in ((helen, game["helen"]), (grady, game["grady"])):
        await _assert_current(phone, character, game["session"])
    await helen.close()
    await grady.close()


async def _grady_loses(
    game, helen: Phone, grady: Phone, *, is_attack=False, bids=("Tough",)
) -> list[str]:
    """Helen challenges Grady (Ferocious against Tough) and wins; the frames
    Grady's phone gets for the result."""
    extra = {"is_attack": "on"} if is_attack else {}
    await _act(
        helen, action="challenge.open", defender=game["grady"].pk, bid="physical:Ferocious", **extra
    )
    pk = await database_sync_to_async(lambda: Challenge.objects.latest("id").pk)()
    await _act(grady, action="challenge.bid", challenge=pk, bids=list(bids))
    await _act(helen, action="challenge.throw", challenge=pk, throw="rock")
    await grady.settle()
    frames = await _frames_of(
        grady, lambda: _act(grady, action="challenge.throw", challenge=pk, throw="scissors")
    )
    await helen.settle()
    return frames


async def test_a_loss_with_another_open_card_redraws_the_losers_view(game):
    """Another open card offers his Traits (its bid buttons): the result that
    cost him Tough redraws his whole view, which shows one copy fewer there too."""
    helen, grady = await _phones(game)
    other = await _open(helen, game, bid="physical:Quick")  # waits for Grady's bid
    await grady.settle()
    frames = await _grady_loses(game, helen, grady)
    assert any('id="live"' in f for f in frames)
    assert f'id="card-{other}"' in grady.view
    for phone, character in ((helen, game["helen"]), (grady, game["grady"])):
        await _assert_current(phone, character, game["session"])
    await helen.close()
    await grady.close()


async def test_a_wound_sends_the_losers_card_sheet_and_health_not_her_view(game):
    """An attack's result costs him a health level too: his card, his sheet
    and bid buttons (two Traits to bid now, met_classic Bruised) and who he is
    (health, its clock) out of band; his screen and stamp equal a fresh render."""
    helen, grady = await _phones(game)
    for n, (level, bids) in enumerate((("Bruised", ["Tough"]), ("Wounded", ["Tough"] * 2))):
        frames = await _grady_loses(game, helen, grady, is_attack=True, bids=bids)
        assert len(frames) == 1 and 'id="live"' not in frames[0], n
        assert 'id="who"' in frames[0] and 'id="sheet"' in frames[0]
        assert f'class="health health-{n + 1}">{level}</strong>' in grady.view
        for phone, character in ((helen, game["helen"]), (grady, game["grady"])):
            await _assert_current(phone, character, game["session"])
    await helen.close()
    await grady.close()


async def test_losses_one_after_another_keep_the_losers_screen_and_stamp_current(game):
    """Three results in a row, each costing Grady a Tough: each a card and his
    sheet out of band; his screen and stamp equal a fresh render after each."""
    helen, grady = await _phones(game)
    for n in range(3):
        frames = await _grady_loses(game, helen, grady)
        assert len(frames) == 1 and 'id="live"' not in frames[0], n
        await _assert_current(grady, game["grady"], game["session"])
    assert "Tough" not in grady.screen.doc.find(id="start-bids").get_text()
    await helen.close()
    await grady.close()


async def test_the_oldest_result_leaves_the_phone_beyond_the_recent_ones(game):
    helen, grady = await _phones(game)
    played = []
    for _ in range(views.RECENT_RESOLVED + 2):
        pk = await _open(helen, game, bid="physical:Quick")
        await _act(grady, action="challenge.relent", challenge=pk)
        played.append(pk)
    await helen.settle()
    await grady.settle()
    shown = {pk for pk in played if f'id="card-{pk}"' in helen.view}
    assert shown == set(played[-views.RECENT_RESOLVED :])
    for phone, character in ((helen, game["helen"]), (grady, game["grady"])):
        await _assert_current(phone, character, game["session"])
    await helen.close()
    await grady.close()


async def test_a_version_already_shown_sends_nothing(game):
    helen, grady = await _phones(game)
    pk = await _open(helen, game)
    await grady.settle()
    version = await database_sync_to_async(lambda: Challenge.objects.get(pk=pk).version)()
    from channels.layers import get_channel_layer

    from challenges.realtime import CHALLENGE_UPDATED, character_group

    event = {"type": CHALLENGE_UPDATED, "challenge_id": pk, "version": version}
    frames = await _frames_of(
        grady,
        lambda: get_channel_layer().group_send(character_group(game["grady"].pk), event),
    )
    assert frames == []
    await helen.close()
    await grady.close()


def test_a_card_costs_one_query(game, django_assert_num_queries):

    challenge = opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    sheet = character_sheet(game["grady"], game["session"])
    with django_assert_num_queries(1):
        card = views.phone_challenge(game["grady"], game["session"], challenge.pk, sheet)
    assert card.can_bid and [t.name for t in card.bid_choices] == ["Resilient", "Tough"]
    ines = make_character(game["chronicle"], "Ines", make_user("ines"))
    assert views.phone_challenge(ines, game["session"], challenge.pk, sheet) is None


def test_both_phones_and_the_dashboards_of_a_worker_read_a_move_once(
    game, django_assert_num_queries
):
    from challenges import services

    challenge = opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    session, pk, version = game["session"], challenge.pk, challenge.version
    sheets = {c: character_sheet(game[c], session) for c in ("helen", "grady")}
    # The mover's worker kept the row it committed: no read at all, to render too.
    with django_assert_num_queries(0):
        for who in ("helen", "grady"):
            card = views.phone_challenge(game[who], session, pk, sheets[who], version)
            render_to_string("challenges/_card.html", {"c": card, "card_oob": True})
        context = views.dashboard_row_context(session, pk, version)
        assert context["row"].pk == pk
        render_to_string("challenges/_dashboard_row_oob.html", {**context, "insert": True})
    # Another worker reads it once for all its connections.
    rows.committed_rows.items.clear()
    with django_assert_num_queries(1):
        for who in ("helen", "grady"):
            assert views.phone_challenge(game[who], session, pk, sheets[who], version)
        assert views.dashboard_row_context(session, pk, version)["row"].pk == pk
    services.challenge_bid(
        challenge_id=pk,
        character=game["grady"],
        bids=["Tough"],
        user=game["grady_player"],
        msg_id=uuid.uuid4().hex,
    )
    # A later version is read anew, once; without a version, always.
    rows.committed_rows.items.clear()
    with django_assert_num_queries(1):
        card = views.phone_challenge(game["grady"], session, pk, sheets["grady"], version + 1)
        assert views.phone_challenge(game["helen"], session, pk, sheets["helen"], version + 1)
    assert card.stage == "throws" and card.challenge.version == version + 1
    with django_assert_num_queries(1):
        assert views.dashboard_row_context(session, pk)["row"].stage == "throws"


def test_a_kept_row_is_a_copy_and_never_goes_back_a_version(game, django_assert_num_queries):

    challenge = opposed_challenge(game["session"], game["helen"], game["grady"], bid="Ferocious")
    newer = Challenge.objects.get(pk=challenge.pk)
    newer.version += 1
    rows.committed_rows.remember(newer)
    rows.committed_rows.remember(challenge)  # older: ignored
    newer.stakes = "changed after"  # the caller's instance, not the kept copy
    with django_assert_num_queries(0):
        kept = rows.committed_rows.get(challenge.pk, challenge.version)
    assert kept.version == challenge.version + 1 and kept.stakes == challenge.stakes


async def _reconnect(phone: Phone, query: str) -> str:
    """Reconnect ``phone`` at its path + ``query``; returns the first frame."""
    path = phone.path
    phone.path = path + query
    try:
        return await phone.connect()
    finally:
        phone.path = path


async def test_a_reconnect_naming_the_current_stamp_gets_pong_and_keeps_its_screen(game):
    helen, grady = await _phones(game)
    pk = await _open(helen, game)
    await grady.settle()
    screen, stamp = grady.screen, grady.stamp
    await grady.drop()
    first = await _reconnect(grady, f"?v={stamp}")
    assert first == '{"type": "pong"}'
    grady.screen = screen  # the page keeps its DOM across a reconnect
    # The resumed socket still places cards: Grady's bid replaces his card.
    await _act(grady, action="challenge.bid", challenge=pk, bid="Tough")
    await grady.settle()
    assert "stage-throws" in grady.view
    await _assert_current(grady, game["grady"], game["session"])
    await helen.close()
    await grady.close()


@pytest.mark.parametrize("query", ["?v=0000000000000000", "?v=not-a-stamp", "?v=", "?x=1"])
async def test_a_reconnect_with_a_stale_or_forged_stamp_gets_the_whole_view(game, query):
    helen, grady = await _phones(game)
    await _open(helen, game)  # Grady's screen changed since his first view
    first = await _reconnect(grady, query)
    assert first.startswith("<!--v:") and 'id="live"' in first
    await _assert_current(grady, game["grady"], game["session"])
    await helen.close()
    await grady.close()


async def test_a_stamp_from_before_a_move_gets_the_whole_view(game):
    helen, grady = await _phones(game)
    old_stamp = grady.stamp
    pk = await _open(helen, game)
    await grady.settle()
    assert grady.stamp != old_stamp
    first = await _reconnect(grady, f"?v={old_stamp}")
    assert f'id="card-{pk}"' in first and 'id="live"' in first
    await helen.close()
    await grady.close()


async def _time_out_behind_her_back(game, time_out: bool = True) -> None:
    """A narrator calls Time out (or lifts it) with no broadcast reaching
    anyone (her phone was away, or the channel layer lost it)."""
    await database_sync_to_async(
        lambda: GameSession.objects.filter(pk=game["session"].pk).update(time_out=time_out)
    )()


async def _away_for_a_time_out(grady: Phone, game, time_out: bool) -> str:
    """Grady's phone drops, Time out is called (or lifted), he reconnects
    naming his stamp: the first frame, applied to the screen his page kept,
    which must then be current; returns that frame."""
    screen, stamp = grady.screen, grady.stamp
    await grady.drop()
    await _time_out_behind_her_back(game, time_out)
    first = await _reconnect(grady, f"?v={stamp}")
    assert first.startswith("<!--v:") and 'id="live"' not in first  # not the whole view
    assert grady.stamp != stamp  # the banner came stamped with the view now
    grady.screen = screen  # the page keeps its DOM across a reconnect
    grady._take(first)
    await _assert_current(grady, game["grady"], game["session"])
    return first


async def test_a_reconnect_that_missed_only_a_time_out_gets_the_banner_not_the_whole_view(game):
    """Issue 14: after the hall's wifi dropped, the change most phones missed
    together is a Time out: its banner, not 1,500 whole views."""
    helen, grady = await _phones(game)
    await _open(helen, game)
    await grady.settle()
    first = await _away_for_a_time_out(grady, game, time_out=True)
    assert "time-out" in first and len(first) < 1000
    await _away_for_a_time_out(grady, game, time_out=False)  # lifted while away again
    await helen.close()
    await grady.close()


async def test_a_reconnect_that_missed_a_time_out_and_a_move_gets_the_whole_view(game):
    helen, grady = await _phones(game)
    stamp = grady.stamp
    await grady.drop()
    await database_sync_to_async(opposed_challenge)(
        game["session"], game["helen"], game["grady"], bid="Ferocious"
    )
    await _time_out_behind_her_back(game)
    first = await _reconnect(grady, f"?v={stamp}")
    assert 'id="live"' in first
    await _assert_current(grady, game["grady"], game["session"])
    await helen.close()
    await grady.close()


async def test_a_ping_after_a_lost_time_out_broadcast_gets_the_banner_then_pong(game, settings):
    settings.HEARTBEAT_RECHECK_SECONDS = 0.01
    helen, grady = await _phones(game)
    await _time_out_behind_her_back(game)
    await grady.socket.send_to(text_data=json.dumps({"action": "ping", "v": grady.stamp}))
    banner = await grady.socket.receive_from(timeout=5)
    assert banner.startswith("<!--v:") and 'id="live"' not in banner and "time-out" in banner
    grady._take(banner)
    assert json.loads(await grady.socket.receive_from(timeout=5)) == {"type": "pong"}
    await _assert_current(grady, game["grady"], game["session"])
    await helen.close()
    await grady.close()


async def test_a_resumed_reconnect_reads_its_ruleset_from_the_seat_not_the_chronicle(
    game, monkeypatch
):
    """A phone resuming at its current stamp learns its ruleset's stamp parts
    from the seat's session (``chronicle_ruleset``): no query of the
    chronicle row per reconnect (a reconnect storm has 1,500 of them)."""
    from django.db.backends import utils

    from characters.models import Chronicle

    helen, grady = await _phones(game)
    await _open(helen, game)
    await grady.settle()
    stamp = grady.stamp
    await grady.drop()
    # Every statement, whichever thread runs it (the consumers' database thread).
    sql: list[str] = []
    execute = utils.CursorWrapper.execute

    def recording(cursor, statement, params=None):
        sql.append(statement)
        return execute(cursor, statement, params)

    monkeypatch.setattr(utils.CursorWrapper, "execute", recording)
    first = await _reconnect(grady, f"?v={stamp}")
    monkeypatch.undo()
    assert first == '{"type": "pong"}'
    assert sql, "the recording saw the reconnect's queries"
    table = Chronicle._meta.db_table
    assert not [s for s in sql if f'FROM "{table}" WHERE' in s], sql
    await helen.close()
    await grady.close()


@pytest.mark.parametrize("guest", [0, 1, 2, 3, 7])
def test_the_cards_a_resume_knows_are_the_ones_the_view_lists(
    game, guest, django_assert_num_queries
):
    """``phone_cards_shown`` (plain SQL, issue 14) names the rows
    ``_on_phone`` lists for the whole view, in its order, versions included:
    her open challenges and her latest results (more than ``RECENT_RESOLVED``
    here), not another's nor another session's; two queries."""
    from django.utils import timezone

    from challenges.views.phone import RECENT_RESOLVED, _on_phone
    from tests.factories import crowded_session

    session = game["session"]
    guests = crowded_session(session, characters=8, challenges=90)
    # Her challenges of an earlier session of the chronicle are not on her phone.
    earlier = GameSession.objects.create(chronicle=session.chronicle, ended_at=timezone.now())
    copies = list(Challenge.objects.filter(session=session))
    for copy in copies:
        copy.pk, copy.session = None, earlier
    Challenge.objects.bulk_create(copies)
    Challenge.objects.filter(pk__in=Challenge.objects.filter(session=session)[:9]).update(version=4)
    character = guests[guest]
    open_, done = _on_phone(character, session)
    expected_done = list(done.values_list("pk", "version"))
    expected = {**dict(open_.values_list("pk", "version")), **dict(expected_done)}
    assert len(expected_done) == RECENT_RESOLVED and len(expected) > RECENT_RESOLVED
    with django_assert_num_queries(2):
        shown, results = views.phone_cards_shown(character, session)
    assert shown == expected
    assert list(shown) == list(expected)  # the same order: open ones oldest first
    assert results == [pk for pk, _ in expected_done]


def _shown_query(phone: Phone) -> str:
    """``?v=STAMP&open=…&done=…`` as app.js builds it for ``phone``'s screen:
    each card's ``data-version``, in screen order."""
    query = f"?v={phone.stamp}"
    for box in ("open", "done"):
        cards = phone.screen.doc.select(f"#{box}-cards article.card[data-version]")
        query += f"&{box}=" + ",".join(f"{c['id'][5:]}.{c['data-version']}" for c in cards)
    return query


async def _void_behind_her_back(game, pk: int) -> None:
    """A narrator voids challenge ``pk`` while the phones are away."""
    from challenges import services

    await database_sync_to_async(services.challenge_void)(
        challenge_id=pk, reason="ruled", user=game["narrator"], msg_id=uuid.uuid4().hex
    )


async def _resume_naming_cards(grady: Phone, game, away) -> str:
    """Grady's phone drops, ``away()`` runs, he reconnects naming his stamp
    and his cards; the first frame, applied to the screen his page kept, must
    leave it current (equal to a fresh render, stamp included)."""
    screen, query = grady.screen, _shown_query(grady)
    await grady.drop()
    await away()
    first = await _reconnect(grady, query)
    grady.screen = screen  # the page keeps its DOM across a reconnect
    grady._take(first)
    await _assert_current(grady, game["grady"], game["session"])
    return first


async def test_a_reconnect_that_missed_a_void_and_a_time_out_gets_the_card_and_the_banner(game):
    """Issue 14: in a reconnect storm the phones whose challenges a narrator
    voided meanwhile got their whole view; naming their cards, only the
    voided card moves to the results (with her sheet: her bid is free)."""
    helen, grady = await _phones(game)
    kept = await _open(helen, game, bid="physical:Quick")
    await _act(grady, action="challenge.relent", challenge=kept)  # a result on screen
    pk = await _open(helen, game)
    await _act(grady, action="challenge.bid", challenge=pk, bid="Tough")
    await grady.settle()

    async def away():
        await _void_behind_her_back(game, pk)
        await _time_out_behind_her_back(game)

    first = await _resume_naming_cards(grady, game, away)
    assert 'id="live"' not in first and "time-out" in first
    assert f'id="card-{pk}"' in first and f'id="card-{kept}"' not in first
    assert "stage-resolved" in grady.view
    # The resumed socket places the next cards as before.
    from challenges import services

    await database_sync_to_async(services.session_resume)(
        session=game["session"], user=game["narrator"], msg_id=uuid.uuid4().hex
    )
    again = await _open(helen, game, bid="physical:Brawny")
    await grady.settle()
    assert f'id="card-{again}"' in grady.view
    await _assert_current(grady, game["grady"], game["session"])
    await helen.close()
    await grady.close()


async def test_a_void_that_pushes_the_oldest_result_off_is_replayed_in_order(game):
    helen, grady = await _phones(game)
    played = []
    for _ in range(views.RECENT_RESOLVED):
        pk = await _open(helen, game, bid="physical:Quick")
        await _act(grady, action="challenge.relent", challenge=pk)
        played.append(pk)
    first_open = await _open(helen, game)
    second_open = await _open(helen, game, bid="physical:Brawny")
    await grady.settle()

    async def away():
        await _void_behind_her_back(game, second_open)
        await _void_behind_her_back(game, first_open)

    first = await _resume_naming_cards(grady, game, away)
    assert 'id="live"' not in first
    assert f'id="card-{played[0]}" hx-swap-oob="delete"' in first
    assert f'id="card-{played[1]}" hx-swap-oob="delete"' in first
    await helen.close()
    await grady.close()


@pytest.mark.parametrize(
    "claim",
    [
        "understated",  # an unchanged card named at an older version
        "missing",  # a card on screen left out
        "ahead",  # a version the challenge never had
        "wrong card",  # the change put on another card
    ],
)
async def test_cards_named_that_do_not_add_up_get_the_whole_view(game, claim):
    helen, grady = await _phones(game)
    kept = await _open(helen, game, bid="physical:Quick")
    pk = await _open(helen, game)
    await grady.settle()
    query = _shown_query(grady)
    named = query.split("&open=")[1].split("&")[0].split(",")
    version = {int(p): int(v) for p, v in (e.split(".") for e in named)}
    if claim == "understated":
        query = query.replace(f"{kept}.{version[kept]}", f"{kept}.{version[kept] - 1}")
    elif claim == "missing":
        query = query.replace(f"{kept}.{version[kept]},", "")
    elif claim == "ahead":
        query = query.replace(f"{pk}.{version[pk]}", f"{pk}.{version[pk] + 5}")
    screen = grady.screen
    await grady.drop()
    await _void_behind_her_back(game, pk)
    if claim == "wrong card":  # pk's new version claimed for kept, pk's old one kept
        await _void_behind_her_back(game, kept)
        query = query.replace(f"{kept}.{version[kept]}", f"{kept}.{version[kept] + 2}")
    first = await _reconnect(grady, query)
    assert 'id="live"' in first, first[:300]
    grady.screen = screen
    grady._take(first)
    await _assert_current(grady, game["grady"], game["session"])
    await helen.close()
    await grady.close()


async def test_a_result_that_cost_her_a_trait_while_away_gets_the_whole_view(game):
    """The cards named cannot tell what her sheet showed: a result that cost
    her a Trait or health level while away redraws the whole view."""
    helen, grady = await _phones(game)
    pk = await _open(helen, game)
    await _act(grady, action="challenge.bid", challenge=pk, bid="Tough")
    await grady.settle()

    async def away():
        from challenges import services

        await database_sync_to_async(services.challenge_settle)(
            challenge_id=pk,
            winner="challenger",
            reason="ruled",
            user=game["narrator"],
            msg_id=uuid.uuid4().hex,
        )

    first = await _resume_naming_cards(grady, game, away)
    assert 'id="live"' in first
    await helen.close()
    await grady.close()


@pytest.mark.parametrize(
    ("query", "claimed"),
    [
        ("v=x&open=3.2,4.1&done=9.5,8.4", ({3: 2, 4: 1, 9: 5, 8: 4}, [9, 8])),
        ("v=x&open=&done=", ({}, [])),
        ("v=x&open=3.2", ({3: 2}, [])),
        ("v=x", None),
        ("v=x&open=3.2,3.4", None),  # the same card twice
        ("v=x&open=3.2&done=3.2", None),
        ("v=x&open=3", None),
        ("v=x&open=-3.2", None),
        ("v=x&open=3.2e1", None),
        ("v=x&open=3.2&open=4.1", None),
        ("v=x&open=" + ",".join(f"{n}.1" for n in range(65)), None),  # more than a phone shows
        ("v=x&open=" + "9" * 30 + ".1", None),
    ],
)
def test_the_cards_a_reconnect_names_are_read_strictly(query, claimed):
    from challenges.consumers.play import _claimed_cards

    assert _claimed_cards({"query_string": query.encode()}) == claimed


async def test_the_bench_names_the_cards_a_phone_shows_as_app_js_does(game):
    """``bench.load.CardsShown`` follows a phone's frames to the cards htmx
    shows (new, replaced, moved to the results, taken off, a whole view)."""
    from bench.load import CardsShown

    helen = Phone(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    grady = Phone(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    tracked = CardsShown()
    _tap(grady, tracked.apply)
    await helen.connect()
    await grady.connect()

    async def named_alike() -> None:
        await grady.settle()
        assert f"?v={grady.stamp}" + tracked.query() == _shown_query(grady)

    await named_alike()
    lost = await _open(helen, game, bid="physical:Brawny")
    await named_alike()
    for _ in range(views.RECENT_RESOLVED + 1):
        pk = await _open(helen, game, bid="physical:Quick")
        await named_alike()
        await _act(grady, action="challenge.relent", challenge=pk)
        await named_alike()
    await _act(grady, action="challenge.bid", challenge=lost, bid="Tough")
    await named_alike()
    voided = await _open(helen, game)
    await _void_behind_her_back(game, voided)  # its broadcast reaches him
    await named_alike()
    await grady.drop()
    await grady.connect()  # a whole view again
    await named_alike()
    assert tracked.open and len(tracked.done) == views.RECENT_RESOLVED
    await helen.close()
    await grady.close()
