"""What a storytelling roll costs the worker with twelve dashboards (issue 14,
part 2), measured in-process through the real router: Iris contests Marcus
``ROLLS`` times (her phone opens the contest, his resists it), first with no
dashboard, then with ``DASHBOARDS`` dashboards, until every dashboard shows
every result. The session already holds ``EARLIER`` rolls, so every list is
as long as a screen shows. The figures (``time.process_time``: this
process's CPU, the test client included) are printed, not asserted: machines
differ. What is asserted is that every screen ends with the stamp a fresh one
carries. Run it with
``NARRATOR_MEASURE=1 pytest tests/challenges/test_rolls_cost.py -s``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import time
import uuid

import pytest
from channels.db import database_sync_to_async

from challenges.models import DiceRoll
from challenges.services import rolls
from tests.challenges.rolls_setup import story_evening
from tests.challenges.wsutil import WAIT
from tests.faults.phones import Phone, split_stamp

pytestmark = pytest.mark.django_db(transaction=True)

ROLLS = 8  # per round
DASHBOARDS = 12
ROUNDS = 5
EARLIER = 30  # rolls of the session before the first round
RESOLVED = re.compile(r'resolved" id="roll-(\d+)"')


@database_sync_to_async
def _earlier(night) -> None:
    """``EARLIER`` contests of Iris against Marcus, rolled (two in three) or open."""
    for n in range(EARLIER):
        row = rolls.roll_contest(
            session=night["session"],
            character=night["iris"],
            opponent=night["marcus"],
            spec={"attribute": "Wits", "skill": ""},
            user=night["iris_player"],
            msg_id=uuid.uuid4().hex,
        )
        if n % 3:
            rolls.roll_resist(
                roll_id=row.pk,
                character=night["marcus"],
                spec={"attribute": "Wits", "skill": ""},
                user=night["marcus_player"],
                msg_id=uuid.uuid4().hex,
            )


@database_sync_to_async
def _newest() -> int:
    return DiceRoll.objects.order_by("-id").values_list("id", flat=True)[0]


async def _watch(screen: Phone, resolved: set[int], replies: dict[str, asyncio.Future]) -> None:
    """Read ``screen``'s frames for ever, keeping only their stamp and the
    results shown (applying them to a screen would cost more than the
    server), and answering ``replies`` (id: future of the ack or error)."""
    while True:
        frame = await screen.socket.receive_from(timeout=3600)
        if frame.startswith("{"):
            reply = json.loads(frame)
            if (waiting := replies.pop(reply.get("id"), None)) is not None:
                waiting.set_result(reply)
            continue
        stamp, _ = split_stamp(frame)
        screen.stamp = stamp or screen.stamp
        resolved.update(int(pk) for pk in RESOLVED.findall(frame))


async def _act(screen: Phone, replies: dict[str, asyncio.Future], **message) -> None:
    msg_id = uuid.uuid4().hex
    replies[msg_id] = asyncio.get_running_loop().create_future()
    await screen.socket.send_to(text_data=json.dumps({"id": msg_id, **message}))
    async with asyncio.timeout(WAIT):
        reply = await replies[msg_id]
    assert reply.get("status") == "ok", reply


async def _play(night, phones: list[Phone], shown: list[set[int]], replies) -> float:
    """CPU seconds for ``ROLLS`` contests until every screen of ``shown``
    (the results each has shown) shows every result."""
    iris, marcus = phones
    start = time.process_time()
    played = set()
    for _ in range(ROLLS):
        await _act(
            iris,
            replies,
            action="roll.contest",
            opponent=str(night["marcus"].pk),
            attribute="Wits",
            skill="",
        )
        pk = await _newest()
        await _act(marcus, replies, action="roll.resist", roll=pk, attribute="Wits", skill="")
        played.add(pk)
    async with asyncio.timeout(WAIT):
        while any(not played <= seen for seen in shown):
            await asyncio.sleep(0.01)
    return time.process_time() - start


async def _fresh_stamp(screen: Phone) -> str:
    fresh = Phone(screen.path, screen.user)
    await fresh.connect()
    await fresh.close()
    return fresh.stamp


async def _round(night, phones: list[Phone], dashboards: int) -> float:
    """CPU seconds of one round with ``dashboards`` dashboards connected (not
    counted: their connecting); every screen ends with a fresh one's stamp."""
    boards = [
        Phone(f"/ws/narrate/{night['session'].pk}/", night["narrator"]) for _ in range(dashboards)
    ]
    for board in boards:
        await board.connect()
    screens = [*phones, *boards]
    shown = [set() for _ in screens]
    replies: dict[str, asyncio.Future] = {}
    watchers = [
        asyncio.create_task(_watch(s, seen, replies))
        for s, seen in zip(screens, shown, strict=True)
    ]
    seconds = await _play(night, phones, shown, replies)
    await asyncio.sleep(0.3)
    for watcher in watchers:
        watcher.cancel()
    for screen in screens:
        assert screen.stamp == await _fresh_stamp(screen), screen.path
    for board in boards:
        await board.close()
    return seconds


@pytest.mark.skipif(not os.getenv("NARRATOR_MEASURE"), reason="a measurement: NARRATOR_MEASURE=1")
@pytest.mark.asyncio
async def test_twelve_dashboards_cost_per_roll(db):
    night = await database_sync_to_async(story_evening)()
    await _earlier(night)
    iris = Phone(f"/ws/play/{night['iris'].pk}/", night["iris_player"])
    marcus = Phone(f"/ws/play/{night['marcus'].pk}/", night["marcus_player"])
    await iris.connect()
    await marcus.connect()
    await _round(night, [iris, marcus], 1)  # templates loaded, caches warm
    alone, watched = [], []
    for _ in range(ROUNDS):  # alternating, each figure the median of its rounds
        alone.append(await _round(night, [iris, marcus], 0))
        watched.append(await _round(night, [iris, marcus], DASHBOARDS))
    alone_ms, watched_ms = (statistics.median(r) / ROLLS * 1000 for r in (alone, watched))
    by_round = " ".join(f"{w / ROLLS * 1000:.1f}" for w in watched)
    print(
        f"\n[rolls] {ROUNDS} rounds of {ROLLS} contested rolls, {EARLIER} rolls before, "
        f"medians: {alone_ms:.1f} ms CPU per roll with its two phones, {watched_ms:.1f} ms "
        f"with {DASHBOARDS} dashboards too: {(watched_ms - alone_ms) / DASHBOARDS:.2f} ms "
        f"per dashboard (with dashboards, by round: {by_round})"
    )
    await iris.close()
    await marcus.close()
