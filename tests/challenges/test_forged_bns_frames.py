"""Forged moves of a challenge of test pools (ruleset bns, seeds/002) sent
through the real router: a phone's form offers only the attacks whose Skill
her sheet has, and the server refuses the rest the same way, with an error
frame a player can read and nothing written (no challenge, no Willpower
spent, no damage)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from challenges import services
from challenges.models import Challenge, ClientAction
from characters.models import Ability, Presence
from tests.challenges.test_bns_flow import _by_night, _phones
from tests.challenges.wsutil import act, connect
from tests.factories import bns_combat_evening

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture
def bns_game(transactional_db) -> dict:
    """Rosa (Brawl 3, Dodge 2; no Melee, no Firearms, no Intimidation) and Tooth."""
    return _by_night()


@database_sync_to_async
def _written(game) -> tuple:
    """Everything a refused bns.open must leave as it was."""
    presences = Presence.objects.filter(session=game["session"]).order_by("character_id")
    return (
        Challenge.objects.count(),
        ClientAction.objects.count(),
        list(presences.values_list("character_id", "willpower_spent", "damage")),
    )


@pytest.mark.parametrize(
    ("frame", "skill"),
    [
        ({"attack": "firearms"}, "Firearms"),
        ({"attack": "melee"}, "Melee"),
        ({"attack": "thrown"}, "Melee"),  # the thrown_skill option: Melee
        ({"attack": "firearms", "maneuvers": ["knock_down"]}, "Firearms"),
        ({"attack": "social", "power": "Majesty", "power_skill": "Intimidation"}, "Intimidation"),
    ],
    ids=["firearms", "melee", "thrown", "firearms with a paid maneuver", "a power's skill"],
)
async def test_an_attack_with_a_skill_she_lacks_is_refused_and_changes_nothing(
    bns_game, frame, skill
):
    game = bns_game
    rosa, tooth = await _phones(game)
    before = await _written(game)
    reply, _ = await act(rosa, action="bns.open", defender=str(game["tooth"].pk), **frame)
    assert reply["type"] == "error", reply
    assert f"Rosa has no {skill}" in reply["message"], reply
    assert await _written(game) == before
    # With the Skill on her sheet, the same frame is played.
    await database_sync_to_async(Ability.objects.create)(
        character=game["rosa"], name=skill, rating=1
    )
    reply, _ = await act(rosa, action="bns.open", defender=str(game["tooth"].pk), **frame)
    assert reply["status"] == "ok", reply
    challenge = await database_sync_to_async(Challenge.objects.get)()
    assert challenge.state["attack"] == frame["attack"]
    await rosa.disconnect()
    await tooth.disconnect()


@pytest.fixture
def combat_night(transactional_db) -> dict:
    """The combat evening (``bns_combat_evening``): Rosa (initiative 7) and
    Jack (6) in a combat played on to its second round."""
    t = bns_combat_evening()
    row = services.combat_start(
        session=t["session"], characters=[t["rosa"], t["jack"]], user=t["narrator"], msg_id="s"
    )
    for n in range(2):  # Rosa's initiative, Jack's: round 2, Rosa's again
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=f"a{n}")
    return t


async def test_a_knock_out_claiming_a_first_round_her_combat_has_passed_is_refused(combat_night):
    t = combat_night
    rosa, _ = await connect(f"/ws/play/{t['rosa'].pk}/", t["rosa_player"])
    before = await _written(t)
    reply, _ = await act(
        rosa,
        action="bns.open",
        defender=str(t["jack"].pk),
        attack="brawl",
        maneuvers=["knock_out"],
        surprise=True,
        first_round=True,
    )
    assert reply["type"] == "error", reply
    assert "Knock Out works only in the first round" in reply["message"], reply
    assert await _written(t) == before
    await rosa.disconnect()
