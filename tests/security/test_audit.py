"""The frame audit (``challenges.audit``): it finds a planted leak, and a soak of
50 challenges between phones, watched by a narrator dashboard, has none."""

from __future__ import annotations

import random
import time

import pytest
from channels.db import database_sync_to_async

from challenges.audit import NARRATOR, Frame, find_leaks, scan, shown_throws
from challenges.models import Challenge, Event
from characters.models import Chronicle, GameSession
from tests.factories import make_character, make_user
from tests.security.wsrec import Seat, seat, settle


def _mark(throw="rock", side="challenger", challenge=12, test=1) -> str:
    return (
        f'<strong data-throw="{throw}" data-side="{side}" data-challenge="{challenge}" '
        f'data-test="{test}">{throw.title()}</strong>'
    )


OWNERS = {12: (1, 2), 13: (1, None)}  # 13: a static challenge (narrator's side)
REVEALS = {(12, 1): 1000.0, (13, 1): 2000.0}


@pytest.mark.parametrize(
    "viewer, at, mark, leak",
    [
        (1, 900.0, _mark(side="challenger"), False),  # her own throw, before the reveal
        (2, 900.0, _mark(side="challenger"), True),  # the defender sees it early
        (NARRATOR, 900.0, _mark(side="challenger"), True),  # so does a dashboard
        (3, 900.0, _mark(side="defender"), True),  # a bystander
        (2, 1000.5, _mark(side="challenger"), False),  # after the reveal: fine
        (NARRATOR, 1000.0, _mark(side="defender"), False),
        (1, 1500.0, _mark(side="defender", test=2), True),  # test 2 never revealed
        (1, 1999.0, _mark(side="defender", challenge=13), True),  # the narrator's throw
        (NARRATOR, 1999.0, _mark(side="defender", challenge=13), True),
        (1, 2001.0, _mark(side="defender", challenge=13), False),
        (1, 900.0, _mark(challenge=99), True),  # unknown challenge
        (1, 900.0, _mark(side="referee"), True),  # unknown side
        (1, 900.0, '<b data-throw="rock" data-challenge="x">Rock</b>', True),  # unreadable
        (2, 900.0, '{"type": "ack", "id": "rock", "status": "ok"}', False),
        (2, 900.0, "<p>Helen has thrown</p>", False),
    ],
)
def test_the_scanner_tells_leaks_from_allowed_throws(viewer, at, mark, leak):
    frame = Frame(viewer, at, f'<div id="live">{mark}</div>')
    assert bool(find_leaks([frame], reveals=REVEALS, owners=OWNERS)) is leak


def test_a_leak_names_its_frame_and_how_early_it_was():
    frame = Frame(2, 999.75, _mark())
    (leak,) = find_leaks([frame], reveals=REVEALS, owners=OWNERS)
    assert leak.frame is frame and leak.shown.throw == "rock"
    assert leak.reason == "shown 0.250 s early"


def test_marks_are_read_from_real_html_in_any_attribute_order():
    html = '<span data-test="2" data-challenge="7" data-side="defender" data-throw="paper">P</span>'
    shown, problems = shown_throws(html)
    assert problems == [] and [(s.challenge, s.test, s.side, s.throw) for s in shown] == [
        (7, 2, "defender", "paper")
    ]


# Soak ------------------------------------------------------------------------------
THROWS = ["rock", "paper", "scissors"]


def _soak_world() -> dict:
    narrator = make_user("soak_narrator")
    chronicle = Chronicle.objects.create(name="Soak")
    chronicle.narrators.add(narrator)
    session = GameSession.objects.create(chronicle=chronicle, name="Long night")
    players, characters = [], []
    for name in ("Ada", "Bo", "Cy", "Di"):
        player = make_user(name.lower())
        traits = [("Strong", "physical", 40), ("Sly", "social", 40), ("Sharp", "mental", 40)]
        characters.append(make_character(chronicle, name, player, traits=traits))
        players.append(player)
    return {"narrator": narrator, "session": session, "players": players, "characters": characters}


@database_sync_to_async
def _state(challenge_id: int) -> dict:
    return Challenge.objects.get(pk=challenge_id).state


async def _play_out(challenge_id: int, seats: dict[int, Seat], rng: random.Random) -> None:
    """Drive one challenge to its end: bids, throws (one side at a time, with a
    pause so every frame between the two throws is seen), ties declared,
    retests taken or accepted."""
    for _ in range(40):
        state = await _state(challenge_id)
        stage = state["stage"]
        challenger = state["challenger"]["character_id"]
        defender = (state.get("defender") or {}).get("character_id")
        if stage == "resolved":
            return
        if stage == "response":
            if rng.random() < 0.1:
                reply = await seats[defender].act("challenge.relent", challenge=str(challenge_id))
            else:
                trait = {"physical": "Strong", "social": "Sly", "mental": "Sharp"}
                bid = trait[state["category"]]
                reply = await seats[defender].act(
                    "challenge.bid", challenge=str(challenge_id), bid=bid
                )
        elif stage == "bid":
            bid = {"physical": "Strong", "social": "Sly", "mental": "Sharp"}[state["category"]]
            reply = await seats[challenger].act(
                "challenge.bid", challenge=str(challenge_id), bid=bid
            )
        elif stage == "throws":
            test = state["tests"][-1] if state["tests"] else {}
            pending = [
                who
                for who, key in ((challenger, "challenger_throw"), (defender, "defender_throw"))
                if who is not None and not test.get(key)
            ]
            who = rng.choice(pending)
            reply = await seats[who].act(
                "challenge.throw", challenge=str(challenge_id), throw=rng.choice(THROWS)
            )
            await settle(seats[who].log, 0.02)
        elif stage == "declare_challenger":
            reply = await seats[challenger].act("challenge.declare", challenge=str(challenge_id))
        elif stage == "declare_defender":
            reply = await seats[defender].act("challenge.declare", challenge=str(challenge_id))
        elif stage == "retest":  # the loser of a test may overbid: she sometimes does
            loser = challenger if state["retest_side"] == "challenger" else defender
            if rng.random() < 0.5:
                reply = await seats[loser].act("challenge.accept", challenge=str(challenge_id))
            else:
                trait = {"physical": "Strong", "social": "Sly", "mental": "Sharp"}
                reply = await seats[loser].act(
                    "challenge.retest",
                    challenge=str(challenge_id),
                    kind="overbid",
                    traits=[trait[state["category"]]],
                )
        elif stage == "retest_answer":
            other = defender if state["pending"]["side"] == "challenger" else challenger
            reply = await seats[other].act("challenge.answer", challenge=str(challenge_id))
        else:
            raise AssertionError(stage)
        assert reply["type"] == "ack", (stage, reply)
    raise AssertionError(f"challenge {challenge_id} did not end")


@database_sync_to_async
def _latest_id() -> int:
    return Challenge.objects.latest("pk").pk


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_fifty_challenges_leak_no_throw_to_anyone_before_its_reveal(settings):
    # The soak plays as fast as the server answers, faster than any hand:
    # the per-connection rate limit (tests/security/test_entry.py) stays out of it.
    settings.WS_RATE = settings.WS_BURST = 10**6
    world = await database_sync_to_async(_soak_world)()
    rng = random.Random(2026)
    log: list[Frame] = []
    seats = {
        c.pk: await seat(f"/ws/play/{c.pk}/", p, viewer=c.pk, log=log)
        for c, p in zip(world["characters"], world["players"], strict=True)
    }
    dashboard = await seat(
        f"/ws/narrate/{world['session'].pk}/", world["narrator"], viewer=NARRATOR, log=log
    )
    ids = [c.pk for c in world["characters"]]
    started = time.monotonic()
    for n in range(50):
        if n % 10 == 9:  # now and then a narrator's static challenge or simple test
            who = rng.choice(ids)
            if n % 20 == 9:
                reply = await dashboard.act(
                    "static.open", character=str(who), category="mental", difficulty="3"
                )
            else:
                reply = await dashboard.act("simple.open", character=str(who))
        else:
            challenger, defender = rng.sample(ids, 2)
            category = rng.choice(["physical", "social", "mental"])
            bid = {"physical": "Strong", "social": "Sly", "mental": "Sharp"}[category]
            reply = await seats[challenger].act(
                "challenge.open", defender=str(defender), bid=f"{category}:{bid}"
            )
        assert reply["type"] == "ack", reply
        await _play_out(await _latest_id(), seats, rng)
    await settle(log, 0.2)
    elapsed = time.monotonic() - started
    for s in [*seats.values(), dashboard]:
        assert s.closed is None and s.crash() is None
        await s.leave()

    leaks = await database_sync_to_async(scan)(log)
    shown = sum(len(shown_throws(f.text)[0]) for f in log)
    reveals = await database_sync_to_async(Event.objects.filter(kind="revealed").count)()
    print(
        f"\nsoak: 50 challenges in {elapsed:.1f} s, {len(log)} frames, "
        f"{shown} throws shown, {reveals} reveals, {len(leaks)} leaks"
    )
    # The scan had something to look at (a relent ends a challenge without a test).
    assert reveals >= 40 and shown > 100
    assert leaks == []


@pytest.mark.django_db(transaction=True)
async def test_the_scan_catches_a_forged_frame_among_real_ones(game):
    """A real exchange, then a forged frame showing Grady's throw to Helen before
    the reveal: the scanner reports exactly that frame."""
    log: list[Frame] = []
    helen = await seat(
        f"/ws/play/{game['helen'].pk}/", game["helen_player"], viewer=game["helen"].pk, log=log
    )
    grady = await seat(
        f"/ws/play/{game['grady'].pk}/", game["grady_player"], viewer=game["grady"].pk, log=log
    )
    reply = await helen.act("challenge.open", defender=str(game["grady"].pk), bid="physical:Quick")
    challenge_id = await _latest_id()
    await grady.act("challenge.bid", challenge=str(challenge_id), bid="Tough")
    await grady.act("challenge.throw", challenge=str(challenge_id), throw="paper")
    await settle(log)
    forged = Frame(game["helen"].pk, time.time(), _mark("paper", "defender", challenge_id, 1))
    log.append(forged)
    await helen.act("challenge.throw", challenge=str(challenge_id), throw="rock")
    await settle(log)
    for s in (helen, grady):
        await s.leave()
    assert reply["type"] == "ack"
    leaks = await database_sync_to_async(scan)(log)
    assert [leak.frame for leak in leaks] == [forged]
    # Real frames after the reveal showed the same throw to Helen, legitimately.
    assert any('data-throw="paper" data-side="defender"' in f.text for f in log if f is not forged)
