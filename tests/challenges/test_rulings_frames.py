"""s11 rulings through the real router: a phone's "Call a narrator" reaches the
dashboard on top; a narrator's ruling, with its reason, reaches both phones at
once; forged or absent reasons are refused and change nothing; a player
cannot rule. seeds/000 "Adjudication"; RULES.md "Disputes"."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge, Event, TraitLoss
from tests.challenges.wsutil import act, connect, drain, expect, helen_challenges_grady
from tests.factories import evening

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def _evening() -> dict:
    return evening()


@database_sync_to_async
def _latest() -> Challenge:
    return Challenge.objects.latest("created_at")


@database_sync_to_async
def _challenge(pk: int) -> Challenge:
    return Challenge.objects.get(pk=pk)


@database_sync_to_async
def _events(pk: int) -> list[tuple[str, str | None, dict]]:
    return [
        (e.kind, e.actor.username if e.actor else None, e.data)
        for e in Event.objects.filter(challenge_id=pk).select_related("actor").order_by("id")
    ]


@database_sync_to_async
def _lost(character) -> list[str]:
    return sorted(
        TraitLoss.objects.filter(character=character).values_list("trait__name", flat=True)
    )


@database_sync_to_async
def _trait_id(character, name: str) -> int:
    return character.traits.get(name=name).pk


async def _ok(socket, **message) -> list[str]:
    reply, frames = await act(socket, **message)
    assert reply.get("status") == "ok", reply
    return frames


async def _table():
    """Helen challenges Grady (Physical, Ferocious), Grady answers with Tough;
    a narrator's dashboard is open."""
    game = await _evening()
    dashboard, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    helen, grady, _, _ = await helen_challenges_grady(game)
    challenge = await _latest()
    await _ok(grady, action="challenge.bid", challenge=challenge.pk, bid="Tough")
    for socket in (helen, grady, dashboard):
        await drain(socket)
    challenge = await _challenge(challenge.pk)
    return game, dashboard, helen, grady, challenge


async def _close(*sockets) -> None:
    for socket in sockets:
        await socket.disconnect()


async def test_a_call_from_a_phone_reaches_the_dashboard_on_top():
    game, dashboard, helen, grady, challenge = await _table()
    mine = await _ok(
        grady, action="challenge.call_narrator", challenge=challenge.pk, reason="Was that a rock?"
    )
    await expect(
        dashboard,
        (
            "beforeend:#called-challenges",
            f'id="challenge-{challenge.pk}"',
            "data-called-at=",
            "Narrator called",
            "Was that a rock?",
        ),
    )
    # The other phone shows the call at once; the caller's phone has no second button.
    await expect(helen, ("A narrator is called by <bdi>Grady</bdi>", "Was that a rock?"))
    frames = await expect(grady, "A narrator is called (you called)", frames=mine)
    assert not any("challenge.call_narrator" in f for f in frames if "(you called)" in f)
    called = await _challenge(challenge.pk)
    assert called.called_at is not None
    assert (called.called_by, called.call_reason) == ("defender", "Was that a rock?")
    events = await _events(challenge.pk)
    assert events[-1][:2] == ("narrator_called", "grady")
    assert events[-1][2]["reason"] == "Was that a rock?"
    # A second call is refused and changes nothing.
    reply, _ = await act(helen, action="challenge.call_narrator", challenge=challenge.pk)
    assert reply["type"] == "error" and "already been called" in reply["message"]
    # The narrator dismisses it: the row leaves the top.
    await _ok(dashboard, action="challenge.dismiss_call", challenge=challenge.pk)
    assert (await _challenge(challenge.pk)).called_at is None
    assert (await _events(challenge.pk))[-1][:2] == ("call_dismissed", "narrator")
    await _close(dashboard, helen, grady)


async def test_a_settlement_with_its_reason_reaches_both_phones_at_once():
    game, dashboard, helen, grady, challenge = await _table()
    await _ok(helen, action="challenge.call_narrator", challenge=challenge.pk)
    await drain(dashboard)
    frames = await _ok(
        dashboard,
        action="challenge.settle",
        challenge=challenge.pk,
        winner="challenger",
        reason="Grady's throw came late",
    )
    line = "Narrator ruling: <bdi>Settled for Helen</bdi> — <bdi>Grady&#x27;s throw came late</bdi>"
    await expect(helen, line)
    await expect(grady, line)
    await expect(dashboard, line, frames=frames)
    settled = await _challenge(challenge.pk)
    assert (settled.stage, settled.outcome) == ("resolved", "challenger_wins")
    assert settled.called_at is None  # a ruling answers the call
    assert settled.rulings[-1]["reason"] == "Grady's throw came late"
    assert settled.rulings[-1]["narrator"] == "narrator"
    assert await _lost(game["grady"]) == ["Tough"]
    assert await _lost(game["helen"]) == []
    kinds = [(kind, actor) for kind, actor, _ in await _events(challenge.pk)]
    assert ("settled", "narrator") in kinds
    await _close(dashboard, helen, grady)


async def test_a_trait_given_back_and_taken_away_with_reasons():
    game, dashboard, helen, grady, challenge = await _table()
    await _ok(
        dashboard,
        action="challenge.settle",
        challenge=challenge.pk,
        winner="challenger",
        reason="ruled",
    )
    tough = await _trait_id(game["grady"], "Tough")

    async def trait(who: str, pk: int, change: str, reason: str) -> dict:
        await drain(dashboard)
        reply, _ = await act(
            dashboard,
            action="challenge.trait",
            challenge=challenge.pk,
            character=game[who].pk,
            trait=pk,
            change=change,
            reason=reason,
        )
        return reply

    assert (await trait("grady", tough, "give_back", "Tough was not at stake"))["status"] == "ok"
    assert await _lost(game["grady"]) == []
    await expect(helen, "Tough given back to Grady")
    await expect(grady, "Tough given back to Grady")
    ferocious = await _trait_id(game["helen"], "Ferocious")
    assert (await trait("helen", ferocious, "take_away", "She cheated"))["status"] == "ok"
    assert await _lost(game["helen"]) == ["Ferocious"]
    kinds = [(kind, actor) for kind, actor, _ in await _events(challenge.pk)]
    assert ("trait_given_back", "narrator") in kinds and ("trait_taken", "narrator") in kinds
    # Nothing more to give back: refused.
    reply = await trait("grady", tough, "give_back", "again")
    assert reply["type"] == "error" and "has not lost Tough" in reply["message"]
    await _close(dashboard, helen, grady)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({}, "'reason' is missing"),
        ({"reason": ""}, "'reason' is empty"),
        ({"reason": "   "}, "'reason' is empty"),
        ({"reason": "x" * 301}, "'reason' is too long"),
        ({"reason": "ok\x00"}, "control characters"),
        ({"reason": "ok", "winner": "the narrator"}, "'winner' must be challenger or defender"),
    ],
)
async def test_a_settlement_without_a_fair_reason_is_refused(extra, expected):
    game, dashboard, helen, grady, challenge = await _table()
    message = {"action": "challenge.settle", "challenge": challenge.pk, "winner": "defender"}
    reply, _ = await act(dashboard, **{**message, **extra})
    assert reply["type"] == "error" and expected in reply["message"], reply
    unchanged = await _challenge(challenge.pk)
    assert (unchanged.stage, unchanged.version, unchanged.rulings) == (
        challenge.stage,
        challenge.version,
        [],
    )
    await _close(dashboard, helen, grady)


async def test_rulings_without_a_reason_are_refused():
    game, dashboard, helen, grady, challenge = await _table()
    tough = await _trait_id(game["grady"], "Tough")
    reply, _ = await act(
        dashboard,
        action="challenge.trait",
        challenge=challenge.pk,
        character=game["grady"].pk,
        trait=tough,
        change="take_away",
    )
    assert reply["type"] == "error" and "'reason' is missing" in reply["message"]
    reply, _ = await act(dashboard, action="challenge.void", challenge=challenge.pk)
    assert reply["type"] == "error" and "Give a reason" in reply["message"]
    assert await _lost(game["grady"]) == []
    assert (await _challenge(challenge.pk)).stage == challenge.stage
    await _close(dashboard, helen, grady)


@pytest.mark.parametrize(
    "message",
    [
        {"action": "challenge.settle", "winner": "challenger", "reason": "I win"},
        {"action": "challenge.void", "reason": "I say so"},
        {"action": "challenge.force_retest", "reason": "again"},
        {"action": "challenge.dismiss_call"},
    ],
    ids=["settle", "void", "force", "dismiss"],
)
async def test_a_player_cannot_rule(message):
    game, dashboard, helen, grady, challenge = await _table()
    reply, _ = await act(helen, challenge=challenge.pk, **message)
    assert reply["type"] == "error" and reply["message"] == "Unknown action."
    unchanged = await _challenge(challenge.pk)
    assert (unchanged.stage, unchanged.version) == (challenge.stage, challenge.version)
    await _close(dashboard, helen, grady)
