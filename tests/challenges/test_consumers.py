"""Phones and dashboards through the real router (``narrator.asgi.application``)."""

from __future__ import annotations

import json
import re

import pytest
from channels.db import database_sync_to_async

from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from characters.models import Chronicle, GameSession, Presence
from tests.challenges.wsutil import act, connect, drain, expect
from tests.factories import make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@database_sync_to_async
def _get(model_or_queryset, **filters):
    queryset = getattr(model_or_queryset, "objects", model_or_queryset)
    return queryset.get(**filters)


@database_sync_to_async
def _count(model, **filters):
    return model.objects.filter(**filters).count()


async def _phones(game):
    helen, helen_view = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    grady, grady_view = await connect(f"/ws/play/{game['grady'].pk}/", game["grady_player"])
    return helen, grady, helen_view, grady_view


async def _open(helen, game, bid="physical:Ferocious", **extra):
    reply, _ = await act(
        helen, action="challenge.open", defender=str(game["grady"].pk), bid=bid, **extra
    )
    assert reply == {"type": "ack", "id": reply["id"], "status": "ok"}, reply
    return await database_sync_to_async(Challenge.objects.latest)("created_at")


async def test_two_players_complete_a_challenge_with_a_tie(game):
    await _play_helen_against_grady_with_a_tie(game)


@pytest.mark.redis
async def test_two_players_complete_a_challenge_through_redis(game):
    """The same evening through channels-redis (REDIS_URL): every broadcast and
    its payload survive msgpack and a real server."""
    await _play_helen_against_grady_with_a_tie(game)


async def _play_helen_against_grady_with_a_tie(game):
    """seeds/000 "Testing": Helen (7 Physical) bids Ferocious against Grady (5
    Physical), who bids Resilient; both throw Rock; Helen declares 7, Grady 5:
    Grady loses Resilient and, in an attack, a health level."""
    helen, grady, helen_view, grady_view = await _phones(game)
    assert "Ferocious" in helen_view and "Resilient" in grady_view
    await drain(grady)
    challenge = await _open(helen, game, is_attack="on", stakes="I bite your shoulder")
    await expect(grady, ("Bid Resilient", "Relent"))

    reply, _ = await act(grady, action="challenge.bid", challenge=challenge.pk, bid="Resilient")
    assert reply["status"] == "ok"
    await drain(helen)
    for phone in (helen, grady):
        reply, _ = await act(phone, action="challenge.throw", challenge=challenge.pk, throw="rock")
        assert reply["status"] == "ok"
    # A tie: the challenger declares first (her full count by default), then the defender.
    reply, _ = await act(grady, action="challenge.declare", challenge=challenge.pk, count=5)
    assert reply["type"] == "error" and "challenger declares first" in reply["message"]
    reply, _ = await act(helen, action="challenge.declare", challenge=challenge.pk)
    assert reply["status"] == "ok"
    reply, grady_frames = await act(
        grady, action="challenge.declare", challenge=challenge.pk, count=5
    )
    assert reply["status"] == "ok"
    await expect(
        helen, ("You win!", "<bdi>Grady</bdi> loses <bdi>Resilient</bdi> and a health level")
    )
    # The loser's Trait is struck out on her sheet for the rest of the session.
    lost = '<s class="lost" title="lost tonight"><bdi>Resilient'
    await expect(
        grady,
        "You lose: your <bdi>Resilient</bdi> is lost and you lose a health level.",
        lost,
        frames=grady_frames,
    )
    loss = await _get(TraitLoss.objects.select_related("trait"), character=game["grady"])
    assert (loss.trait.name, loss.challenge_id) == ("Resilient", challenge.pk)
    assert (await _get(Presence, character=game["grady"])).health == 1  # Bruised
    test = await _get(Test, challenge=challenge, number=1)
    assert (test.challenger_throw, test.defender_throw, test.tie) == ("rock", "rock", True)
    assert (test.challenger_declared, test.defender_declared) == (7, 5)
    kinds = await database_sync_to_async(
        lambda: list(Event.objects.filter(challenge=challenge).values_list("kind", flat=True))
    )()
    assert kinds[0] == "opened" and kinds[-1] == "resolved" and "revealed" in kinds
    await helen.disconnect()
    await grady.disconnect()


async def test_the_defender_never_receives_the_challengers_throw_early(game):
    helen, grady, _, _ = await _phones(game)
    narrator, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    challenge = await _open(helen, game)
    await act(grady, action="challenge.bid", challenge=challenge.pk, bid="Tough")
    await drain(grady)
    await drain(narrator)
    reply, _ = await act(helen, action="challenge.throw", challenge=challenge.pk, throw="scissors")
    assert reply["status"] == "ok"
    before_reveal = await drain(grady) + await drain(narrator)
    assert before_reveal, "the throw must still be announced as 'thrown'"
    for frame in before_reveal:
        assert "Helen threw" not in frame
        assert "Scissors vs" not in frame and "scissors" not in frame.replace(
            'value="scissors"', ""
        )
    assert any("Helen</bdi> has thrown" in f for f in before_reveal)
    await act(grady, action="challenge.throw", challenge=challenge.pk, throw="paper")
    after = await drain(narrator)
    assert any(
        re.search(r'data-side="challenger"[^>]*>Scissors</span> vs <span[^>]*>Paper<', f)
        for f in after
    )
    for communicator in (helen, grady, narrator):
        await communicator.disconnect()


async def test_a_repeated_message_id_changes_nothing(game):
    helen, grady, _, _ = await _phones(game)
    challenge = await _open(helen, game)
    await act(grady, action="challenge.bid", challenge=challenge.pk, bid="Tough")
    reply, _ = await act(
        helen, "same-id", action="challenge.throw", challenge=challenge.pk, throw="rock"
    )
    assert reply["status"] == "ok"
    events = await _count(Event, challenge=challenge)
    reply, _ = await act(
        helen, "same-id", action="challenge.throw", challenge=challenge.pk, throw="paper"
    )
    assert reply == {"type": "ack", "id": "same-id", "status": "already_done"}
    assert await _count(Event, challenge=challenge) == events
    assert (await _get(Test, challenge=challenge)).challenger_throw == "rock"
    assert await _count(ClientAction, msg_id="same-id") == 1
    await helen.disconnect()
    await grady.disconnect()


async def test_time_out_blocks_a_throw_and_resume_allows_it(game):
    await _time_out_and_resume(game)


@pytest.mark.redis
async def test_time_out_and_resume_reach_every_phone_through_redis(game):
    await _time_out_and_resume(game)


async def _time_out_and_resume(game):
    helen, grady, _, _ = await _phones(game)
    narrator, dashboard = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    assert "Time out" in dashboard
    challenge = await _open(helen, game)
    await act(grady, action="challenge.bid", challenge=challenge.pk, bid="Tough")
    await drain(helen)
    await drain(grady)

    reply, _ = await act(narrator, action="session.time_out")
    assert reply["status"] == "ok"
    for phone in (helen, grady):
        await expect(phone, "Time out!")
    reply, _ = await act(helen, action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert reply["type"] == "error" and "Time out" in reply["message"]
    assert (await _get(Challenge, pk=challenge.pk)).stage == "throws"
    assert await _count(Test, challenge=challenge, challenger_throw="rock") == 0

    reply, frames = await act(narrator, action="session.resume")
    assert reply["status"] == "ok"
    await expect(narrator, lambda f: "Time out" in f and "Resume" not in f, frames=frames)
    await expect(helen, lambda f: 'id="time-out"' in f and "Time out!" not in f)
    reply, _ = await act(helen, action="challenge.throw", challenge=challenge.pk, throw="rock")
    assert reply["status"] == "ok"
    for communicator in (helen, grady, narrator):
        await communicator.disconnect()


async def test_a_reconnecting_phone_gets_the_current_state(game):
    helen, grady, _, _ = await _phones(game)
    challenge = await _open(helen, game)
    await act(grady, action="challenge.bid", challenge=challenge.pk, bid="Tough")
    await act(helen, action="challenge.throw", challenge=challenge.pk, throw="paper")
    await helen.disconnect()
    await act(grady, action="challenge.throw", challenge=challenge.pk, throw="rock")
    helen, view = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    # Each throw shown is marked for the frame audit (challenges.audit).
    assert re.search(r"you threw <strong data-throw=\"paper\"[^>]*>Paper</strong>", view)
    assert re.search(r"<bdi>Grady</bdi> threw <strong data-throw=\"rock\"[^>]*>Rock</strong>", view)
    assert "You win!" in view
    await helen.disconnect()
    await grady.disconnect()


async def test_a_player_cannot_act_for_another_players_character(game):
    intruder, first = await connect(f"/ws/play/{game['grady'].pk}/", game["helen_player"])
    assert first == "closed:4403"
    anonymous, first = await connect(f"/ws/play/{game['grady'].pk}/")
    assert first == "closed:4401"
    helen, grady, _, _ = await _phones(game)
    challenge = await _open(helen, game)
    # Helen's phone tries to answer for Grady, the defender: refused, nothing changes.
    reply, _ = await act(helen, action="challenge.bid", challenge=challenge.pk, bid="Tough")
    assert reply["type"] == "error"
    assert (await _get(Challenge, pk=challenge.pk)).stage == "response"
    # A player cannot call time out.
    reply, _ = await act(helen, action="session.time_out")
    assert reply["type"] == "error" and reply["message"] == "Unknown action."
    player_on_dashboard, first = await connect(
        f"/ws/narrate/{game['session'].pk}/", game["helen_player"]
    )
    assert first == "closed:4403"
    await helen.disconnect()
    await grady.disconnect()


async def test_a_narrator_cannot_narrate_another_chronicle(game):
    other = await database_sync_to_async(make_user)("other-narrator")
    await database_sync_to_async(
        lambda: Chronicle.objects.create(name="Elsewhere").narrators.add(other)
    )()

    socket, first = await connect(f"/ws/narrate/{game['session'].pk}/", other)

    assert first == "closed:4403"
    assert not (await _get(GameSession, pk=game["session"].pk)).time_out


@pytest.mark.parametrize(
    "frame, expected",
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "not an action"),
        (json.dumps({"id": "x", "action": "challenge.explode"}), "Unknown action"),
        (json.dumps({"action": "challenge.throw", "challenge": 1, "throw": "rock"}), "'id'"),
        (
            json.dumps({"id": "x", "action": "challenge.throw", "challenge": "a", "throw": "rock"}),
            "must be a number",
        ),
        (json.dumps({"id": "x" * 5000, "action": "ping"}), "too large"),
    ],
)
async def test_malformed_frames_get_a_clear_error_and_change_nothing(game, frame, expected):
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    events = await _count(Event)
    await helen.send_to(text_data=frame)
    reply = json.loads(await helen.receive_from(timeout=5))
    assert reply["type"] == "error" and expected in reply["message"]
    assert await _count(Event) == events
    await helen.disconnect()


async def test_bidding_a_trait_you_lack_is_refused(game):
    helen, grady, _, _ = await _phones(game)
    reply, _ = await act(
        helen, action="challenge.open", defender=str(game["grady"].pk), bid="physical:Resilient"
    )
    assert reply["type"] == "error" and "Resilient" in reply["message"]
    assert await _count(Challenge) == 0
    await helen.disconnect()
    await grady.disconnect()


async def test_narrator_runs_a_static_challenge_and_a_simple_test(game):
    helen, _ = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    narrator, _ = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    reply, _ = await act(
        narrator,
        action="static.open",
        character=game["helen"].pk,
        category="physical",
        difficulty=4,
        narrator_throw="scissors",
        stakes="The locked door",
    )
    assert reply["status"] == "ok"
    await expect(helen, ("Static Physical challenge", "The locked door"))
    static = await database_sync_to_async(Challenge.objects.latest)("created_at")
    await act(helen, action="challenge.bid", challenge=static.pk, bid="Quick")
    reply, frames = await act(helen, action="challenge.throw", challenge=static.pk, throw="rock")
    await expect(helen, "Success!", frames=frames)

    reply, _ = await act(
        narrator,
        action="simple.open",
        character=game["helen"].pk,
        narrator_throw="paper",
        stakes="Notice the ambush",
    )
    assert reply["status"] == "ok"
    simple = await database_sync_to_async(Challenge.objects.latest)("created_at")
    reply, frames = await act(helen, action="challenge.throw", challenge=simple.pk, throw="rock")
    await expect(helen, ("Simple test", "Failure."), frames=frames)
    await helen.disconnect()
    await narrator.disconnect()
