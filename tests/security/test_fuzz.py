"""Random frames against a phone and a dashboard (hypothesis): no consumer
crashes or closes, every frame gets its answer, nothing in the database
changes, and no hidden throw leaks.

The frames are random JSON, wrong types, huge numbers, unicode, bytes, nested
junk, oversize text, and well-formed actions aimed at the wrong things (another
chronicle's challenge or character, ids that do not exist, Traits Helen lacks).
None of them is a legal move, so the database must not change at all.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from channels.db import database_sync_to_async
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from challenges import services
from challenges.audit import NARRATOR, Frame, scan
from tests.security.conftest import challenge_at, make_world
from tests.security.wsrec import seat, snapshot

PLAY = [
    "challenge.open",
    "challenge.bid",
    "challenge.relent",
    "challenge.throw",
    "challenge.declare",
]
NARRATE = ["session.time_out", "session.resume", "static.open", "simple.open", "challenge.void"]
FIELDS = [
    "challenge",
    "defender",
    "character",
    "bid",
    "category",
    "throw",
    "count",
    "difficulty",
    "narrator_throw",
    "stakes",
    "reason",
    "is_attack",
    "HEADERS",
    "v",  # a ping's echoed stamp
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


@st.composite
def wrong_targets(draw, ids: dict) -> str:
    """A well-formed action aimed at what this seat may not touch."""
    action = draw(st.sampled_from(PLAY + NARRATE))
    number = st.sampled_from([ids["bea_challenge"], ids["bea"], 999_999, 0]).map(str)
    frame = {"id": uuid.uuid4().hex, "action": action}
    if action == "challenge.open":
        frame |= {
            "defender": draw(number | st.just(str(ids["helen"]))),
            "bid": "physical:No " + draw(st.text(max_size=20)),
        }
    elif action in ("challenge.bid", "challenge.relent", "challenge.throw", "challenge.declare"):
        frame["challenge"] = draw(number)
        if action == "challenge.bid":
            frame["bid"] = draw(st.sampled_from(["Tough", "Quick", "Deft"]))
        if action == "challenge.throw":
            frame["throw"] = draw(st.sampled_from(["rock", "paper", "scissors"]))
    elif action in ("static.open", "simple.open"):
        frame |= {"character": draw(number), "category": "physical", "difficulty": "2"}
        if action == "simple.open":
            del frame["category"], frame["difficulty"]
    elif action == "challenge.void":
        frame["challenge"] = draw(number)
    else:  # time out / resume are legal on her own dashboard: spoil them
        frame["junk"] = draw(json_values)
    return _dumps(frame)


def frames(ids: dict):
    """One client frame: text (str) or bytes."""
    # Random fields, always with one key no action has: a random mix could
    # otherwise be a legal move (a void of a real challenge id, a time out).
    action_like = st.fixed_dictionaries(
        {
            "action": st.sampled_from([*PLAY, *NARRATE, "", "ping", "ping ", "sync\x00"])
            | st.text(max_size=20),
            "x-fuzz": json_values,
        },
        optional={
            "id": json_values,
            **{name: json_values for name in FIELDS},
        },
    ).map(_dumps)
    return st.one_of(
        st.text(max_size=200),
        json_values.map(_dumps),
        action_like,
        wrong_targets(ids),
        st.binary(max_size=64),
        st.integers(min_value=4097, max_value=6000).map(
            lambda n: '{"action": "x", "a": "' + "é" * n + '"}'
        ),
        st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n),
    )


def _expects_reply(frame: str | bytes) -> str | None:
    """ "pong" / "view" for a heartbeat, None (no JSON reply) for sync, else "error"."""
    if isinstance(frame, str):
        try:
            data = json.loads(frame)
        except (ValueError, RecursionError):
            return "error"
        if len(frame.encode("utf-8", "surrogatepass")) <= 4096 and isinstance(data, dict):
            if data.get("action") == "ping":
                echoed = data.get("v")
                if echoed is None or isinstance(echoed, str) and len(echoed) <= 64:
                    return "pong"
                return "error"
            if data.get("action") == "sync":
                return None
    return "error"


def _world_ids() -> dict:
    world = make_world()
    # Something to aim at, and throws that must stay hidden: Helen has thrown in
    # her challenge with Grady (not yet revealed); Bea has a simple test in the
    # other chronicle (the narrator's throw hidden).
    challenge = challenge_at(
        world, challenger=world["helen"], defender=world["grady"], stage="thrown"
    )
    bea_test = services.simple_test_open(
        session=world["other_session"],
        character=world["bea"],
        user=world["other_narrator"],
        msg_id=uuid.uuid4().hex,
    )
    return {
        "world": world,
        "helen": world["helen"].pk,
        "grady": world["grady"].pk,
        "bea": world["bea"].pk,
        "challenge": challenge.pk,
        "bea_challenge": bea_test.pk,
    }


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
async def test_random_frames_crash_nothing_change_nothing_and_leak_nothing(settings):
    # The rate limit has its own tests; here every frame must reach the checks.
    settings.WS_RATE, settings.WS_BURST = 10_000, 10_000
    ids = await database_sync_to_async(_world_ids)()
    world = ids.pop("world")
    log: list[Frame] = []
    before = await snapshot()
    examples = []

    # Hypothesis draws the batches first; they are then replayed in this event
    # loop, where the sockets and the channel layer live. A failure names its batch.
    @hypothesis_settings(
        max_examples=60,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        batch=st.lists(
            st.tuples(st.sampled_from(["phone", "dashboard"]), frames(ids)), min_size=1, max_size=6
        )
    )
    def run(batch):
        examples.append(batch)

    run()
    phone = await seat(
        f"/ws/play/{world['helen'].pk}/", world["helen_player"], viewer=ids["helen"], log=log
    )
    dashboard = await seat(
        f"/ws/narrate/{world['session'].pk}/", world["narrator"], viewer=NARRATOR, log=log
    )
    sent = 0
    for batch in examples:
        for where, frame in batch:
            target = phone if where == "phone" else dashboard
            errors, pongs = len(target.errors), target.pongs
            if isinstance(frame, bytes):
                await target.send(data=frame)
            else:
                await target.send(frame)
            sent += 1
            await target.ping()  # handled in order: the frame's answer came first
            assert target.closed is None and target.crash() is None, (frame, target.closed)
            expected = _expects_reply(frame)
            if expected == "error":
                assert len(target.errors) == errors + 1, frame
            elif expected == "pong":
                # Its answer may come a moment after the test's own ping's: a
                # ping that finds the database ahead is checked again 0.25 s
                # later (HEARTBEAT_RECHECK_SECONDS), behind the events on their way.
                for _ in range(40):
                    if target.pongs >= pongs + 2:
                        break
                    await asyncio.sleep(0.05)
                assert target.pongs == pongs + 2, frame
        assert await snapshot() == before, batch
    for s in (phone, dashboard):
        await s.leave()
    leaks = await database_sync_to_async(scan)(log)
    print(
        f"\nfuzz: {len(examples)} examples, {sent} frames sent, "
        f"{len(log)} frames back, {len(leaks)} leaks"
    )
    assert leaks == []
    assert sent >= 60
