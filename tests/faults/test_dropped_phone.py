"""A phone dropped at a random point of a challenge, many times over: every
challenge still resolves exactly once, nothing lost, nothing doubled.

Each challenge is four moves (open, bid, throw, throw). At a seeded random move
one phone drops (1006) in one of three ways: before its frame leaves, after it
left but before the ack came back, or after the ack (missing the other side's
next broadcast). It reconnects, must get the current view at once (its stamp is
the database's), and resends its unacknowledged action with the same id, as
``static/narrator/app.js`` does.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from tests.faults.phones import Phone, current_play_stamp

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

CHALLENGES = int(os.getenv("NARRATOR_FAULT_CHALLENGES", "50"))
SEED = int(os.getenv("NARRATOR_FAULT_SEED", "2026"))
BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}
DROPS = ("before_send", "before_ack", "after_ack")


@database_sync_to_async
def _latest_challenge_id() -> int:
    return Challenge.objects.latest("id").pk


@database_sync_to_async
def _ledger(session) -> dict:
    challenges = Challenge.objects.filter(session=session)
    return {
        "challenges": challenges.count(),
        "resolved": challenges.filter(stage="resolved").count(),
        "events": Counter(Event.objects.filter(session=session).values_list("kind", flat=True)),
        "kinds_by_challenge": {
            c.pk: list(c.events.order_by("id").values_list("kind", flat=True)) for c in challenges
        },
        "tests": {
            t.challenge_id: (t.challenger_throw, t.defender_throw, t.winner)
            for t in Test.objects.filter(challenge__session=session)
        },
        "test_rows": Test.objects.filter(challenge__session=session).count(),
        "losses": list(
            TraitLoss.objects.filter(session=session).values_list("challenge_id", "character_id")
        ),
        "client_actions": ClientAction.objects.count(),
    }


async def test_a_phone_dropped_at_random_points_resolves_every_challenge_once(table):
    game = await database_sync_to_async(table)(1)
    session = game["session"]
    agnes, boris = game["pairs"][0]
    phones = {
        agnes.pk: Phone(
            f"/ws/play/{agnes.pk}/", await database_sync_to_async(lambda: agnes.player)()
        ),
        boris.pk: Phone(
            f"/ws/play/{boris.pk}/", await database_sync_to_async(lambda: boris.player)()
        ),
    }
    for phone in phones.values():
        await phone.connect()
    rng = random.Random(SEED)
    drops: Counter[str] = Counter()
    resend_replies: Counter[str] = Counter()
    expected: dict[int, tuple[str, str, int]] = {}  # challenge -> throws and the loser
    started = time.monotonic()

    for n in range(CHALLENGES):
        first = rng.choice(list(BEATS))
        second = rng.choice([t for t in BEATS if t != first])  # no tie: one test decides
        moves = [
            (agnes, {"action": "challenge.open", "defender": boris.pk, "bid": "physical:Strong"}),
            (boris, {"action": "challenge.bid", "bid": "Tough"}),
            (agnes, {"action": "challenge.throw", "throw": first}),
            (boris, {"action": "challenge.throw", "throw": second}),
        ]
        # Challenge 0 runs clean: the reference for every other challenge's events.
        drop_at = rng.randrange(len(moves)) if n else None
        how = rng.choice(DROPS)
        challenge_id = None
        for step, (character, message) in enumerate(moves):
            phone = phones[character.pk]
            if challenge_id is not None:
                message = {**message, "challenge": challenge_id}
            msg_id = f"{n}-{step}"
            if step != drop_at:
                reply = await phone.act(msg_id, **message)
                assert reply["status"] == "ok", reply
            else:
                drops[how] += 1
                if how == "before_send":
                    await phone.drop()
                    await phone.send(msg_id, **message)  # kept as pending: the socket is gone
                elif how == "before_ack":
                    await phone.send(msg_id, **message)
                    await phone.drop()
                else:
                    reply = await phone.act(msg_id, **message)
                    assert reply["status"] == "ok", reply
                    await phone.drop()
                # Broadcasts to the dropped phone are lost; it comes back.
                view = await phone.reconnect()
                assert view.startswith("<!--v:") and 'id="live"' in view
                session_stamp = await current_play_stamp(character, session)
                if how != "before_send":
                    # What it committed before dropping is on the view it gets back.
                    assert phone.stamp == session_stamp
                if msg_id in phone.pending:
                    reply = await phone.reply(msg_id)
                    resend_replies[reply["status"]] += 1
                    assert reply["type"] == "ack", reply
                    assert reply["status"] == ("ok" if how == "before_send" else "already_done")
            if step == 0:
                challenge_id = await _latest_challenge_id()
        loser = boris.pk if BEATS[first] == second else agnes.pk
        expected[challenge_id] = (first, second, loser)
        for phone in phones.values():
            phone.take_waiting()

    elapsed = time.monotonic() - started
    ledger = await _ledger(session)
    for phone in phones.values():
        await phone.close()

    assert ledger["challenges"] == CHALLENGES == ledger["resolved"]
    reference = ledger["kinds_by_challenge"][min(expected)]
    assert reference.count("opened") == 1 and reference.count("resolved") == 1
    for challenge_id, kinds in ledger["kinds_by_challenge"].items():
        assert kinds == reference, (challenge_id, kinds)
    assert ledger["test_rows"] == CHALLENGES
    for challenge_id, (first, second, _) in expected.items():
        assert ledger["tests"][challenge_id][:2] == (first, second)
    assert sorted(ledger["losses"]) == sorted((c, e[2]) for c, e in expected.items())
    assert ledger["client_actions"] == 4 * CHALLENGES
    assert sum(drops.values()) == CHALLENGES - 1
    print(
        f"\n[faults] dropped phone: {CHALLENGES} challenges, {sum(drops.values())} drops "
        f"({dict(drops)}), resends answered {dict(resend_replies)}; "
        f"{len(ledger['losses'])} Traits lost, {sum(ledger['events'].values())} events "
        f"({len(reference)} per challenge); every challenge resolved once; {elapsed:.1f} s"
    )
