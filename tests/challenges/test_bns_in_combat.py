"""Issue 12: a bns opposed challenge opened inside a combat follows the
round (seeds/002 "Resolving Combat", "Maximum Attacks Per Round", "Retrying
Failed Attacks"): only on the attacker's initiative, counted against the
target's limits when it opens, and a failed Mental challenge makes the target
immune to that attacker's power. ``challenges.services.bns`` calls
``combat_note_challenge`` at both ends."""

from __future__ import annotations

import time
import uuid

import pytest

from challenges import services
from challenges.models import Challenge, Combat
from challenges.rules import Category, RulesError
from challenges.rules.bns_combat import CombatState
from characters.models import Immunity
from tests.factories import bns_combat_evening


def mid() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def t(db):
    table = bns_combat_evening()
    table["combat"] = services.combat_start(
        session=table["session"],
        characters=[table[n] for n in ("vesper", "rosa", "jack")],
        user=table["narrator"],
        msg_id=mid(),
    )  # order: Vesper (9), Rosa (7), Jack (6)
    return table


def combat(t) -> CombatState:
    row = Combat.objects.get(pk=t["combat"].pk)
    return CombatState.from_dict(row.state)


def attack(t, who: str, target: str, **kwargs) -> Challenge:
    return services.bns_open(
        session=t["session"],
        attacker=t[who],
        defender=t[target],
        user=t[f"{who}_player"],
        msg_id=mid(),
        **kwargs,
    )


def play(t, challenge: Challenge, who: str, **kwargs) -> Challenge:
    move = kwargs.pop("move")
    return move(
        challenge_id=challenge.pk, character=t[who], user=t[f"{who}_player"], msg_id=mid(), **kwargs
    )


def test_a_challenge_out_of_her_initiative_is_refused_and_nothing_is_saved(t) -> None:
    with pytest.raises(RulesError, match="Vesper"):
        attack(t, "rosa", "jack", attack="brawl")
    assert not Challenge.objects.exists()
    assert combat(t).targeted(t["jack"].pk, Category.PHYSICAL) == 0


def test_a_challenge_on_her_initiative_takes_her_standard_action_and_counts_for_the_target(t):
    attack(t, "vesper", "rosa", attack="brawl")
    state = combat(t)
    assert state.targeted(t["rosa"].pk, Category.PHYSICAL) == 1
    with pytest.raises(RulesError):  # her standard action is spent
        attack(t, "vesper", "jack", attack="brawl")
    assert Challenge.objects.count() == 1


def test_a_character_outside_the_combat_cannot_be_challenged_from_inside_it(t) -> None:
    with pytest.raises(RulesError, match="Tooth"):
        attack(t, "vesper", "tooth", attack="brawl")
    assert not Challenge.objects.exists()


def test_a_failed_mental_challenge_makes_the_target_immune_to_that_power(t) -> None:
    challenge = attack(t, "vesper", "rosa", attack="mental", power="Dominate")
    challenge = play(t, challenge, "rosa", move=services.bns_answer)
    play(t, challenge, "vesper", move=services.bns_throw, throw="rock")
    challenge = play(t, challenge, "rosa", move=services.bns_throw, throw="paper")
    challenge = play(t, challenge, "vesper", move=services.bns_accept)  # no Willpower retest
    challenge.refresh_from_db()
    assert challenge.state["result"] == "failure"
    (row,) = Immunity.objects.all()
    assert (row.character, row.attacker, row.power) == (t["rosa"], t["vesper"], "Dominate")
    assert row.until.timestamp() == pytest.approx(time.time() + 600, abs=5)
    assert combat(t).attacks[0].failed is True
