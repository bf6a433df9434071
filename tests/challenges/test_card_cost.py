"""What a phone's challenge costs the worker, and how much of it is the card
frames (issue 14 part 2), measured in-process through the real router: two
phones (sheets of 16 Traits) play ``CHALLENGES`` challenges (open, bid, both throw: eight card
frames each), ``ROUNDS`` times. Printed, not asserted (machines differ), per
challenge: this process's CPU (``time.process_time``, the test client
included), the CPU of the phones' card changes (``PlayConsumer._render_change``
on the database thread: the row read, the view built, the frame rendered)
and of their template renders alone. A second measurement renders the card
corpus (``card_corpus``: every stage, both sides) ``CORPUS_ROUNDS`` times,
no database, no socket: µs of CPU per card. Run them with
``NARRATOR_MEASURE=1 pytest tests/challenges/test_card_cost.py -s``.
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid

import pytest
from channels.db import database_sync_to_async
from django.template import base as template_base

from challenges.consumers.play import PlayConsumer
from characters.models import Trait
from tests.challenges.card_corpus import cards
from tests.challenges.test_card_snapshots import PLACES, frame
from tests.challenges.wsutil import WAIT, connect, newest_challenge
from tests.factories import paired_chronicle

CHALLENGES = int(os.getenv("CHALLENGES", "40"))  # per round
ROUNDS = int(os.getenv("ROUNDS", "5"))
CORPUS_ROUNDS = 15
#: Traits each phone's sheet holds besides the one she bids, like the demo's
#: sheets (counts 1-3): the sheet and bid buttons sent with a card list them all.
SHEET = [
    (f"{category.title()} {n}", category, 1 + n % 3)
    for category in ("physical", "social", "mental")
    for n in range(5)
]
MEASURE = pytest.mark.skipif(
    not os.getenv("NARRATOR_MEASURE"), reason="a measurement: NARRATOR_MEASURE=1"
)


class Clock:
    """CPU seconds (``time.thread_time``) spent in the phones' card changes
    and, within them, in rendering templates (the outermost render only)."""

    def __init__(self) -> None:
        self.change = self.render = 0.0
        self.depth = 0

    def timed_change(self, change):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return change(*args, **kwargs)
            finally:
                self.change += time.thread_time() - start

        return timed

    def timed_render(self, render):
        def timed(template, context):
            self.depth += 1
            start = time.thread_time()
            try:
                return render(template, context)
            finally:
                self.depth -= 1
                if self.depth == 0:
                    self.render += time.thread_time() - start

        return timed


async def _act(actor, other, **message) -> None:
    """Send one action from ``actor``; wait for its "ok" and for one view
    frame on each phone (every move reaches both as one card frame)."""
    msg_id = uuid.uuid4().hex
    await actor.send_to(text_data=json.dumps({"id": msg_id, **message}))
    acked, framed = False, False
    while not (acked and framed):
        frame = await actor.receive_from(timeout=WAIT)
        if frame.startswith("{"):
            reply = json.loads(frame)
            assert reply.get("id") == msg_id and reply.get("status") == "ok", reply
            acked = True
        else:
            assert frame.startswith("<!--v:"), frame[:80]
            framed = True
    frame = await other.receive_from(timeout=WAIT)
    assert frame.startswith("<!--v:"), frame[:80]


async def _play(a, b, a_char, b_char, count: int) -> float:
    """CPU seconds of this process for ``count`` challenges of ``a`` against ``b``."""
    start = time.process_time()
    for _ in range(count):
        await _act(a, b, action="challenge.open", defender=str(b_char.pk), bid="physical:Strong")
        pk = await newest_challenge(a_char)
        await _act(b, a, action="challenge.bid", challenge=pk, bid="Tough")
        await _act(a, b, action="challenge.throw", challenge=pk, throw="rock")
        await _act(b, a, action="challenge.throw", challenge=pk, throw="scissors")
    return time.process_time() - start


@MEASURE
@pytest.mark.django_db(transaction=True)
async def test_card_frames_cost_per_challenge(db, settings, monkeypatch):
    settings.WS_RATE = settings.WS_BURST = 1e6  # the phones act as fast as answered
    game = await database_sync_to_async(paired_chronicle)(1, copies=5000)
    for character in game["pairs"][0]:
        await Trait.objects.abulk_create(
            Trait(character=character, name=name, category=category, count=count)
            for name, category, count in SHEET
        )
    clock = Clock()
    change = PlayConsumer.__dict__["_render_change"]
    monkeypatch.setattr(
        PlayConsumer, "_render_change", database_sync_to_async(clock.timed_change(change.func))
    )
    monkeypatch.setattr(
        template_base.Template, "render", clock.timed_render(template_base.Template.render)
    )
    ((first, second),) = game["pairs"]
    a, _ = await connect(f"/ws/play/{first.pk}/", first.player)
    b, _ = await connect(f"/ws/play/{second.pk}/", second.player)
    await _play(a, b, first, second, 2)  # templates loaded, caches warm
    whole, changes, renders = [], [], []
    for _ in range(ROUNDS):
        clock.change = clock.render = 0.0
        whole.append(await _play(a, b, first, second, CHALLENGES))
        changes.append(clock.change)
        renders.append(clock.render)
    ms = [statistics.median(r) / CHALLENGES * 1000 for r in (whole, changes, renders)]
    by_round = " ".join(f"{r / CHALLENGES * 1000:.2f}" for r in renders)
    print(
        f"\n[cards] {ROUNDS} rounds of {CHALLENGES} challenges (open, bid, both throw), "
        f"ms of CPU per challenge, medians: {ms[0]:.1f} in all, {ms[1]:.2f} in the eight "
        f"card changes, {ms[2]:.2f} of it rendering templates (by round: {by_round})"
    )
    await a.disconnect()
    await b.disconnect()


@MEASURE
def test_corpus_cards_render_time():
    corpus = list(cards())
    rounds = []
    for n in range(CORPUS_ROUNDS + 1):
        for _, view in corpus:  # as a new view: nothing computed yet
            view.__dict__.pop("moves", None)
            view.__dict__.pop("face", None)
        start = time.process_time()
        for k, (_, view) in enumerate(corpus):
            frame(view, PLACES[k % len(PLACES)])
        if n:  # the first round loads the templates
            rounds.append(time.process_time() - start)
    each = [r / len(corpus) * 1e6 for r in rounds]
    print(
        f"\n[card corpus] {len(corpus)} cards, {CORPUS_ROUNDS} rounds: "
        f"median {statistics.median(each):.0f} µs of CPU per card frame, min {min(each):.0f}"
    )
