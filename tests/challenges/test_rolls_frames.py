"""Issue 13: storytelling rolls through the real router (phones and the
dashboard, every broadcast through the test channel layer): a roll called for
and rolled on one tap, each die on both screens; a contested roll between two
phones; an extended action with its countdown and a Time out in the middle;
forged and repeated frames refused with nothing changed."""

from __future__ import annotations

import re
import time
import uuid

import pytest
from channels.db import database_sync_to_async

from challenges import heartbeat
from challenges.models import DiceRoll
from challenges.services import rolls
from challenges.views import ROLLS_SHOWN
from characters.models import Presence
from tests.challenges.rolls_setup import make_mage, scripted, story_evening
from tests.challenges.wsutil import act, connect, drain, expect
from tests.factories import make_user
from tests.faults.phones import Phone

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture
def night(db):
    return story_evening()


async def _screens(night):
    iris, iris_view = await connect(f"/ws/play/{night['iris'].pk}/", night["iris_player"])
    marcus, marcus_view = await connect(f"/ws/play/{night['marcus'].pk}/", night["marcus_player"])
    board, board_view = await connect(f"/ws/narrate/{night['session'].pk}/", night["narrator"])
    return iris, marcus, board, (iris_view, marcus_view, board_view)


async def _close(*sockets):
    for socket in sockets:
        await socket.disconnect()


@database_sync_to_async
def _latest() -> DiceRoll:
    return DiceRoll.objects.latest("id")


def _dice(frame: str) -> list[str]:
    """The aria-labels of the dice drawn in ``frame``, in order."""
    return re.findall(r'<li class="die[^"]*" aria-label="([^"]+)"', frame)


async def test_a_called_roll_is_rolled_on_one_tap_and_each_die_is_shown(night, monkeypatch):
    iris, marcus, board, (iris_view, _, board_view) = await _screens(night)
    assert 'id="rolls"' in iris_view and 'id="roll-dashboard"' in board_view
    reply, _ = await act(
        board,
        action="roll.call",
        character=str(night["iris"].pk),
        attribute="Dexterity",
        skill="Stealth",
        willpower_allowed=True,
    )
    assert reply["status"] == "ok", reply
    frames = await expect(iris, "Roll Dexterity + Stealth (3 dice)")
    assert "Spend Willpower (+3)" in frames[-1]
    row = await _latest()
    scripted(monkeypatch, 10, 3, 8, 9)
    reply, seen = await act(iris, action="roll.make", roll=row.pk)
    assert reply["status"] == "ok", reply
    shown = await expect(iris, "3 successes: Success", frames=seen)
    drawn = next(f for f in shown if "3 successes: Success" in f)
    assert _dice(drawn) == [
        "10, success, rolled again",
        "3, no success",
        "8, success",
        "9, success, a reroll",
    ]
    assert "Dexterity 2 + Stealth 1 = 3 dice" in drawn
    board_frames = await expect(board, "3 successes: Success")
    assert "10, success, rolled again" in board_frames[-1]
    assert not any("3 successes" in f for f in await drain(marcus))  # not his roll
    # The same tap again is answered "already done"; another tap is refused.
    again, _ = await act(iris, reply["id"], action="roll.make", roll=row.pk)
    assert again["status"] == "already_done"
    refused, _ = await act(iris, action="roll.make", roll=row.pk)
    assert refused["type"] == "error" and "already made" in refused["message"]
    await _close(iris, marcus, board)


async def test_a_contested_roll_between_two_phones_shows_both_rolls_and_who_won(night, monkeypatch):
    iris, marcus, board, _ = await _screens(night)
    reply, iris_seen = await act(
        iris,
        action="roll.contest",
        opponent=str(night["marcus"].pk),
        attribute="Dexterity",
        skill="Stealth",
        label="Slip past Marcus",
    )
    assert reply["status"] == "ok", reply
    await expect(marcus, ("Iris against Marcus: Slip past Marcus", "Resist and roll"))
    await expect(
        iris, "Waiting for <bdi>Marcus</bdi> to choose a pool to resist.", frames=iris_seen
    )
    row = await _latest()
    scripted(monkeypatch, 8, 9, 1, 9, 2)  # Iris: 2 successes; Marcus (Wits 2): 1
    reply, seen = await act(marcus, action="roll.resist", roll=row.pk, attribute="Wits", skill="")
    assert reply["status"] == "ok", reply
    for phone, frames in ((iris, []), (marcus, seen), (board, [])):
        got = await expect(phone, "Iris wins.", frames=frames)
        drawn = next(f for f in got if "Iris wins." in f)
        assert _dice(drawn) == [
            "8, success",
            "9, success",
            "1, no success",
            "9, success",
            "2, no success",
        ]
        assert "2 successes: Success" in drawn and "1 success: Success" in drawn
    await _close(iris, marcus, board)


async def test_an_extended_action_counts_down_and_a_time_out_freezes_its_rolls(night, monkeypatch):
    iris, marcus, board, _ = await _screens(night)
    reply, _ = await act(
        board,
        action="roll.extended",
        character=str(night["iris"].pk),
        attribute="Dexterity",
        skill="Stealth",
        target="3",
        interval="10",
        most_rolls="3",
        label="Pick the lock",
        willpower_allowed=True,
    )
    assert reply["status"] == "ok", reply
    await expect(iris, ("Iris: Pick the lock", "0</strong> of 3 successes", "Next roll:"))
    row = await _latest()
    scripted(monkeypatch, 8, 1, 1)
    reply, seen = await act(iris, action="roll.extended_roll", roll=row.pk)
    assert reply["status"] == "ok", reply
    got = await expect(iris, "1</strong> of 3 successes", frames=seen)
    card = next(f for f in got if "1</strong> of 3 successes" in f)
    # The next roll in ten minutes of play; the time allowed (three rolls of
    # ten minutes) runs out thirty minutes after the start.
    next_in = int(re.search(r'roll-next" data-remaining="(\d+)"', card).group(1))
    end_in = int(re.search(r'roll-end" data-remaining="(\d+)"', card).group(1))
    assert 590 <= next_in <= 600 and 1790 <= end_in <= 1800
    assert "1 of 3 successes after 1 roll (10 minutes); 2 rolls left." in card
    early, _ = await act(iris, action="roll.extended_roll", roll=row.pk)
    assert early["type"] == "error" and "Your next roll is in" in early["message"]

    reply, _ = await act(board, action="session.time_out")
    assert reply["status"] == "ok"
    await expect(iris, "Time out!")
    frozen, _ = await act(iris, action="roll.extended_roll", roll=row.pk)
    assert frozen["type"] == "error" and "Time out" in frozen["message"]
    reply, _ = await act(board, action="session.resume")
    assert reply["status"] == "ok"
    stored = await _latest()
    assert stored.version == row.version + 1 and len(stored.result["rolls"]) == 1
    # Ten minutes of play later, the next roll is accepted.
    later = time.time() + 600
    monkeypatch.setattr(rolls, "_now", lambda: later)
    scripted(monkeypatch, 9, 10, 8, 2)
    reply, seen = await act(iris, action="roll.extended_roll", roll=row.pk)
    assert reply["status"] == "ok", reply
    await expect(iris, "Succeeded: 4 of 3 successes after 2 rolls (20 minutes).", frames=seen)
    await _close(iris, marcus, board)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"action": "roll.open", "dice": "31"}, "'dice' is out of range."),
        ({"action": "roll.open", "dice": "3", "label": "x" * 201}, "'label' is too long."),
        ({"action": "roll.call", "attribute": "Charm"}, "no Attribute called 'Charm'"),
        ({"action": "roll.call", "attribute": "Wits", "skill": "Hacking"}, "no Skill"),
        ({"action": "roll.call", "attribute": "Wits", "modifier": "-11"}, "out of range"),
        ({"action": "roll.call", "attribute": "Wits", "willpower": [True, True]}, "yes or no"),
    ],
)
async def test_forged_dashboard_frames_are_refused_and_roll_nothing(night, fields, words):
    board, _ = await connect(f"/ws/narrate/{night['session'].pk}/", night["narrator"])
    if fields["action"] == "roll.call":
        fields = {"character": str(night["iris"].pk), **fields}
    reply, _ = await act(board, **fields)
    assert reply["type"] == "error" and words in reply["message"], reply
    assert not await database_sync_to_async(DiceRoll.objects.exists)()
    await board.disconnect()


async def test_a_phone_cannot_make_another_players_roll(night, monkeypatch):
    iris, marcus, board, _ = await _screens(night)
    reply, _ = await act(
        board, action="roll.call", character=str(night["iris"].pk), attribute="Wits"
    )
    assert reply["status"] == "ok"
    row = await _latest()
    scripted(monkeypatch, 9, 9, 9)
    reply, _ = await act(marcus, action="roll.make", roll=row.pk)
    assert reply["type"] == "error" and "not yours" in reply["message"]
    reply, _ = await act(
        marcus,
        action="roll.contest",
        opponent=str(night["iris"].pk),
        attribute="Wits",
        character=str(night["iris"].pk),
    )
    assert reply["type"] == "error" and "your own character" in reply["message"]
    assert (await _latest()).result is None
    await _close(iris, marcus, board)


async def test_a_narrator_opens_a_contest_and_resists_for_an_npc_from_the_dashboard(
    night, monkeypatch
):
    iris, marcus, board, _ = await _screens(night)
    reply, board_seen = await act(
        board,
        action="roll.contest",
        character=str(night["iris"].pk),
        opponent=str(night["shade"].pk),
        attribute="Wits",
        skill="",
    )
    assert reply["status"] == "ok", reply
    await expect(board, ("Iris against Shade: Wits", "Resist and roll"), frames=board_seen)
    row = await _latest()
    scripted(monkeypatch, 1, 2, 3, 9, 9, 9, 1)  # Iris (Wits 3): none; Shade (Dexterity 4): 3
    reply, _ = await act(board, action="roll.resist", roll=row.pk, attribute="Dexterity", skill="")
    assert reply["status"] == "ok", reply
    await expect(iris, ("Shade wins.", "0 successes: Failure", "3 successes: Success"))
    # Marcus's phone never shows another's roll.
    assert not any("Shade wins." in f for f in await drain(marcus))
    await _close(iris, marcus, board)


async def test_after_a_roll_a_phones_and_the_dashboards_heartbeat_is_answered_pong(
    night, heartbeat_clock
):
    """The stamps count the rolls shown (``roll`` part): after a roll.updated
    frame both screens are current, and a roll they missed makes the first
    ping from ``SNAPSHOT_SECONDS`` after it on resend the view (a phone's
    ping is answered from the worker's snapshot, as a MET phone's)."""
    iris, marcus, board, _ = await _screens(night)
    reply, _ = await act(
        board, action="roll.call", character=str(night["iris"].pk), attribute="Wits"
    )
    assert reply["status"] == "ok"
    await expect(iris, "Roll Wits (3 dice)")
    await drain(iris)
    await drain(board)
    for screen in (iris, board):
        await screen.send_json_to({"action": "ping"})
        assert await screen.receive_json_from(timeout=30) == {"type": "pong"}
    # A roll whose broadcast was lost: the next ping repairs the screen.
    row = await _latest()
    await database_sync_to_async(DiceRoll.objects.filter(pk=row.pk).update)(label="Wits again")
    await database_sync_to_async(DiceRoll.objects.filter(pk=row.pk).update)(version=5)
    heartbeat_clock.advance(heartbeat.SNAPSHOT_SECONDS)
    await iris.send_json_to({"action": "ping"})
    assert "Iris: Wits again" in await iris.receive_from(timeout=30)
    # The dashboard's stamp counts the rolls it lists (issue 14: kept from
    # the cards it was sent): the same ping repairs it.
    await board.send_json_to({"action": "ping"})
    assert "Iris: Wits again" in await board.receive_from(timeout=30)
    await _close(iris, marcus, board)


# Issue 14: a roll change sends that roll's card, not the whole list ----------------


def _present_mage(night, name: str, player):
    character = make_mage(night["chronicle"], name, player)
    Presence.objects.create(session=night["session"], character=character)
    return character


async def _settled(*screens) -> None:
    for screen in screens:
        await screen.settle()


async def _assert_current(screen: Phone) -> None:
    """``screen`` shows what a fresh one shows, with the same stamp."""
    fresh = Phone(screen.path, screen.user)
    await fresh.connect()
    await fresh.close()
    assert screen.view == fresh.view
    assert screen.stamp == fresh.stamp


async def _roll_moves(screen: Phone, **message) -> None:
    reply = await screen.act(uuid.uuid4().hex, **message)
    assert reply.get("status") == "ok", reply


async def test_roll_frames_leave_every_screen_as_a_fresh_one(night, monkeypatch):
    """Contests opened and resisted (some with Willpower), rolls called and
    made, an NPC resisting from the dashboard, open rolls, an extended action
    and a contest left waiting while more than ``ROLLS_SHOWN`` rolls come
    after it: after each, both phones and both dashboards show exactly what
    a fresh screen shows, with its stamp, having got the changed cards only
    (a whole list only where a card cannot say it); a phone of the session
    not in a roll gets nothing."""
    moment = time.time()
    monkeypatch.setattr(rolls, "_now", lambda: moment)  # the countdowns drawn
    nora_player = await database_sync_to_async(make_user)("nora")
    nora = await database_sync_to_async(_present_mage)(night, "Nora", nora_player)
    iris = Phone(f"/ws/play/{night['iris'].pk}/", night["iris_player"])
    marcus = Phone(f"/ws/play/{night['marcus'].pk}/", night["marcus_player"])
    other = Phone(f"/ws/play/{nora.pk}/", nora_player)
    boards = [Phone(f"/ws/narrate/{night['session'].pk}/", night["narrator"]) for _ in range(2)]
    screens = [iris, marcus, *boards]
    for screen in [*screens, other]:
        await screen.connect()
    frames: dict[Phone, list[str]] = {screen: [] for screen in [*screens, other]}
    for screen in frames:
        take = screen._take

        def recording(frame: str, take=take, seen=frames[screen]):
            if not frame.startswith("{"):
                seen.append(frame)
            return take(frame)

        screen._take = recording
    iris_id, marcus_id, shade_id = (str(night[k].pk) for k in ("iris", "marcus", "shade"))

    async def contest(actor, opponent_id) -> int:
        await _roll_moves(
            actor, action="roll.contest", opponent=opponent_id, attribute="Wits", skill=""
        )
        return (await _latest()).pk

    async def step(*moves) -> None:
        for screen, message in moves:
            await _roll_moves(screen, **message)
        await _settled(*screens, other)
        for screen in screens:
            await _assert_current(screen)

    waiting = await contest(iris, marcus_id)  # left waiting to the end
    await _settled(*screens)
    for screen in screens:
        await _assert_current(screen)
    await step((boards[0], {"action": "roll.open", "dice": "4", "label": "Is the bridge watched?"}))
    for n in range(ROLLS_SHOWN + 2):
        if n % 4 == 0:
            await _roll_moves(
                boards[1],
                action="roll.call",
                character=iris_id,
                attribute="Dexterity",
                skill="Stealth",
                willpower_allowed=True,
            )
            await step(
                (iris, {"action": "roll.make", "roll": (await _latest()).pk, "willpower": n == 4})
            )
        elif n % 4 == 1:
            pk = await contest(marcus, iris_id)
            await step(
                (
                    iris,
                    {
                        "action": "roll.resist",
                        "roll": pk,
                        "attribute": "Wits",
                        "skill": "",
                        "willpower": n == 5,
                    },
                )
            )
        elif n % 4 == 2:
            pk = await contest(iris, shade_id)
            await step(
                (
                    boards[0],
                    {"action": "roll.resist", "roll": pk, "attribute": "Dexterity", "skill": ""},
                )
            )
        else:
            await step((boards[1], {"action": "roll.open", "dice": "2", "label": f"Open {n}"}))
    await step(
        (
            boards[0],
            {
                "action": "roll.extended",
                "character": iris_id,
                "attribute": "Dexterity",
                "skill": "Stealth",
                "target": "5",
                "interval": "10",
                "most_rolls": "3",
                "label": "Pick the lock",
            },
        )
    )
    await step((iris, {"action": "roll.extended_roll", "roll": (await _latest()).pk}))
    # The contest left waiting is resisted now: it leaves the waiting cards
    # on his phone and hers for the results, and has left the dashboards.
    await step(
        (marcus, {"action": "roll.resist", "roll": waiting, "attribute": "Wits", "skill": ""})
    )
    for screen in screens:
        lists = [
            f
            for f in frames[screen]
            if re.search('<section id="(rolls|roll-dashboard)"', f)
            and not re.search('id="live"|id="challenge-list"', f)  # a whole view
        ]
        # A dashboard's first roll replaces its "No rolls yet" line; the contest
        # left waiting is older than Iris's PHONE_WINDOW newest rolls when it
        # is resisted (its version shown not known): her whole list, once.
        assert len(lists) == (0 if screen is marcus else 1), screen.path
    assert not any("roll-" in f for f in frames[other])
    for screen in [*screens, other]:
        await screen.close()


async def test_a_roll_whose_broadcast_was_lost_is_repaired(night, monkeypatch, heartbeat_clock):
    """A contest whose ``roll.updated`` never came: the next roll's frame
    finds the dashboards' list short of it and sends the whole list; her
    phone shows the new card, with a stamp that does not count the lost one,
    so her next ping gets her whole view (as his, who got nothing). Then
    every screen is a fresh one."""
    iris = Phone(f"/ws/play/{night['iris'].pk}/", night["iris_player"])
    marcus = Phone(f"/ws/play/{night['marcus'].pk}/", night["marcus_player"])
    board = Phone(f"/ws/narrate/{night['session'].pk}/", night["narrator"])
    for screen in (iris, marcus, board):
        await screen.connect()
    await _roll_moves(board, action="roll.open", dice="3", label="First")
    with monkeypatch.context() as lost:
        lost.setattr(rolls, "broadcast_on_commit", lambda *args, **kwargs: None)
        await _roll_moves(
            marcus, action="roll.contest", opponent=str(night["iris"].pk), attribute="Wits"
        )
    await _roll_moves(board, action="roll.call", character=str(night["iris"].pk), attribute="Wits")
    await _settled(iris, marcus, board)
    await _assert_current(board)
    assert "Marcus against Iris" not in iris.view
    heartbeat_clock.advance(heartbeat.SNAPSHOT_SECONDS)
    for phone in (iris, marcus):
        assert await phone.heartbeat() is None  # the whole view
        assert "Marcus against Iris" in phone.view
    for screen in (iris, marcus, board):
        await _assert_current(screen)
        await screen.close()


async def test_a_storytelling_phone_reconnecting_with_its_current_stamp_gets_pong(night):
    """Issue 14: a resumed phone's stamp has its ruleset's parts (``roll``,
    ``fight``), known from her chronicle; without them a storytelling phone
    got its whole view on every reconnect. Time out meanwhile: the banner."""
    from tests.faults.phones import Phone

    iris = Phone(f"/ws/play/{night['iris'].pk}/", night["iris_player"])
    await iris.connect()
    screen, stamp = iris.screen, iris.stamp
    await iris.drop()
    iris.path += f"?v={stamp}"
    assert await iris.connect() == '{"type": "pong"}'
    await iris.drop()
    await database_sync_to_async(
        lambda: type(night["session"]).objects.filter(pk=night["session"].pk).update(time_out=True)
    )()
    first = await iris.connect()
    assert 'id="live"' not in first and "time-out" in first
    assert iris.stamp != stamp
    iris.screen = screen
    iris._take(first)
    fresh = Phone(f"/ws/play/{night['iris'].pk}/", night["iris_player"])
    await fresh.connect()
    await fresh.close()
    assert iris.stamp == fresh.stamp and iris.view == fresh.view  # current, banner shown
    await iris.close()
