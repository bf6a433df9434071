"""Issue 12 (s12 gaps): what a bns challenge's result does to the evening,
through the services (``challenges.services.bns`` and ``.combat``):

- Pierce the Heart kills a mortal in the Incapacitated track and stakes a
  vampire hit with a staking weapon: her presence's fate, her sheet and the
  roster row, the history; a dead character no longer challenges nor is
  challenged, a staked one cannot act (seeds/002 "Pierce the Heart").
- A Physical focus's free maneuver is spent for the rest of the combat;
  outside a combat each challenge is a fight of its own (seeds/002 "Physical
  Focuses in Combat"; docs/rules.md "bns: combat rounds in the app").
- Grapple, Knock Down, Blinding Attack and Knock Out reach the combat and
  show on the phones (seeds/002 "Combat Maneuvers").
- One immunity after a failed Mental or Social challenge, stored as an
  Immunity row and checked in and out of combat (seeds/002 "Retrying
  Failed Attacks")."""

from __future__ import annotations

import time
import uuid

import pytest
from django.core.exceptions import ValidationError
from django.template.loader import render_to_string

from challenges import services
from challenges.history import session_history
from challenges.models import Challenge, Combat
from challenges.rules import RulesError, Side
from challenges.rules.bns_combat import CombatState
from challenges.views import combat_view
from challenges.views.bns import bns_card
from challenges.views.phone import play_context
from characters.attribute_sheets import attribute_sheet
from characters.models import Character, Immunity, Presence
from tests.challenges.test_bns_in_combat import attack
from tests.challenges.test_combat import start
from tests.factories import bns_combat_evening


def mid() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def t(db):
    """Vesper (Physical 3, Mental 9), Rosa (Physical 7, Strength focus), Jack
    (Physical 6), Tooth (a Garou), all present with Willpower 5."""
    return bns_combat_evening()


def by(t, who: str, move, challenge: Challenge, **kwargs) -> Challenge:
    return move(
        challenge_id=challenge.pk, character=t[who], user=t[f"{who}_player"], msg_id=mid(), **kwargs
    )


def play_out(t, challenge: Challenge, who: str, target: str, *, won: bool) -> Challenge:
    """The defender answers, the attacker throws rock, the defender scissors
    (``won``) or paper; the loser accepts the test."""
    challenge = by(t, target, services.bns_answer, challenge)
    by(t, who, services.bns_throw, challenge, throw="rock")
    by(t, target, services.bns_throw, challenge, throw="scissors" if won else "paper")
    challenge.refresh_from_db()
    if challenge.state["stage"] == "retest":
        loser = target if won else who
        by(t, loser, services.bns_accept, challenge)
    challenge.refresh_from_db()
    return challenge


def hit(t, who: str, target: str, *, won: bool, **kwargs) -> Challenge:
    """``who`` attacks ``target`` (``kwargs`` as :func:`attack`), played out."""
    return play_out(t, attack(t, who, target, **kwargs), who, target, won=won)


def incapacitated(t, name: str, **sheet) -> Character:
    """``name`` with the sheet's ``sheet`` fields, her wounds in the
    Incapacitated track (3 Healthy + 3 Injured boxes + 1)."""
    character = t[name]
    for field, value in sheet.items():
        setattr(character, field, value)
    character.save()
    Presence.objects.filter(character=character).update(damage=7)
    return character


def fate(t, name: str) -> str:
    return Presence.objects.get(session=t["session"], character=t[name]).fate


def view(row: Combat, me: int | None, **kwargs):
    """The combat's view for ``me`` as it stands now (the row re-read)."""
    row.refresh_from_db()
    return combat_view(row, me, **kwargs)


def combat(row: Combat) -> CombatState:
    row.refresh_from_db()
    return CombatState.from_dict(row.state)


def simple_action(t, row: Combat, who: str, what: str) -> Combat:
    """``who`` (her player) takes her simple action ``what`` in ``row``."""
    return services.combat_act(
        combat_id=row.pk,
        character=t[who],
        kind="simple",
        what=what,
        user=t[f"{who}_player"],
        msg_id=mid(),
    )


def next_turn(t, row: Combat) -> None:
    turn = combat(row).turn
    while combat(row).turn == turn:
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())


# --- seeds/002 "Pierce the Heart": the sheet's creature and her fate -----------------------


@pytest.mark.parametrize(
    ("creature", "staking", "fate_", "words", "logged"),
    [
        ("mortal", False, "dead", "Dead", "Jack is Killed"),
        ("vampire", True, "staked", "Staked", "Jack is Staked"),
        ("vampire", False, "", "", ""),
        ("other", True, "", "", ""),
    ],
    ids=["mortal killed", "vampire staked", "vampire, no staking weapon", "other creature"],
)
def test_pierce_the_heart_on_an_incapacitated_target_follows_her_creature(
    t, creature, staking, fate_, words, logged
) -> None:
    """seeds/002 Pierce the Heart: "If you hit a mortal with this attack, she
    is instantly killed. If this attack hits a vampire and your weapon has
    the staking quality, the vampire is staked." Rosa's Strength focus
    gives it for free."""
    incapacitated(t, "jack", creature=creature)
    challenge = attack(
        t, "rosa", "jack", attack="melee", maneuvers=["pierce_the_heart:focus"], staking=staking
    )
    challenge = play_out(t, challenge, "rosa", "jack", won=True)
    assert challenge.state["result"] == "success"
    assert fate(t, "jack") == fate_
    sheet = attribute_sheet(t["jack"], t["session"])
    assert sheet.fate_label == words
    row = render_to_string("challenges/_attribute_row.html", {"a": sheet})
    phone = render_to_string("challenges/_attribute_sheet.html", {"a": sheet})
    if words:
        assert f">{words}</span>" in row and f"{words} tonight (Pierce the Heart)." in phone
    else:
        assert "fate" not in row and "tonight (Pierce the Heart)" not in phone
    history = [e.text for e in session_history(t["session"]).entries]
    if logged:
        assert logged in history
    else:
        assert not any(x.startswith("Jack is ") for x in history)


def test_pierce_the_heart_stakes_a_stock_npc_whatever_her_damage(t) -> None:
    """seeds/002 Pierce the Heart: "A successful Pierce the Heart maneuver
    stakes Stock NPCs regardless of how much damage they currently have"."""
    t["jack"].stock_npc = True
    t["jack"].save()
    hit(t, "rosa", "jack", attack="melee", maneuvers=["pierce_the_heart"], won=True)
    assert fate(t, "jack") == "staked"
    assert attribute_sheet(t["jack"], t["session"]).fate_label == "Staked"


def test_a_dead_character_neither_challenges_nor_is_challenged(t) -> None:
    incapacitated(t, "jack", creature="mortal")
    hit(t, "rosa", "jack", attack="melee", maneuvers=["pierce_the_heart"], won=True)
    assert fate(t, "jack") == "dead"
    count = Challenge.objects.count()
    with pytest.raises(services.ActionRefused, match="Jack is dead."):
        attack(t, "vesper", "jack", attack="brawl")
    with pytest.raises(services.ActionRefused, match="Jack is dead."):
        attack(t, "jack", "vesper", attack="brawl")
    assert Challenge.objects.count() == count


def test_a_staked_vampire_cannot_act_but_may_still_be_attacked(t) -> None:
    incapacitated(t, "vesper", creature="vampire")
    challenge = attack(
        t, "rosa", "vesper", attack="melee", maneuvers=["pierce_the_heart"], staking=True
    )
    play_out(t, challenge, "rosa", "vesper", won=True)
    assert fate(t, "vesper") == "staked"
    with pytest.raises(services.ActionRefused, match="Vesper is staked: she cannot act."):
        attack(t, "vesper", "rosa", attack="brawl")
    assert attack(t, "jack", "vesper", attack="brawl").state["stage"] == "answer"


def test_a_vampire_cannot_be_knocked_out(t) -> None:
    """seeds/002 Knock Out: "Some supernatural creatures, such as vampires,
    cannot be knocked unconscious"."""
    t["vesper"].creature = "vampire"
    t["vesper"].save()
    with pytest.raises(RulesError, match="cannot be knocked unconscious"):
        attack(
            t, "rosa", "vesper", attack="brawl", maneuvers=["knock_out"], surprise=True,
            first_round=True,
        )  # fmt: skip


def test_a_garou_is_neither_mortal_nor_vampire_on_the_sheet(t) -> None:
    tooth = t["tooth"]
    tooth.creature = "vampire"
    with pytest.raises(ValidationError) as err:
        tooth.full_clean()
    assert err.value.message_dict["creature"] == ["A Garou is neither a mortal nor a vampire."]
    tooth.creature = "other"
    tooth.full_clean()


# --- seeds/002 "Physical Focuses in Combat": once per combat --------------------------------


def test_the_focus_free_maneuver_is_spent_for_the_rest_of_the_combat(t) -> None:
    row = start(t, "rosa", "jack")  # Rosa (7) acts before Jack (6)
    hit(t, "rosa", "jack", attack="brawl", maneuvers=["disarm:focus"], won=False)
    assert combat(row).fighter(t["rosa"].pk).focus_used
    next_turn(t, row)
    count = Challenge.objects.count()
    with pytest.raises(RulesError, match="You have used your focus's free maneuver this combat."):
        attack(t, "rosa", "jack", attack="brawl", maneuvers=["grapple:focus"])
    assert Challenge.objects.count() == count
    assert "focus's free maneuver used" in view(row, t["rosa"].pk).order[0].conditions
    attack(t, "rosa", "jack", attack="brawl", maneuvers=["grapple"])  # with Willpower: allowed


def test_her_phone_no_longer_offers_the_focus_maneuver_once_spent_in_the_combat(t) -> None:
    def offered() -> list[str]:
        context = play_context(t["rosa"], t["session"], with_opponents=False)
        return [value for value, _ in context["bns_maneuvers"] if value.endswith(":focus")]

    start(t, "rosa", "jack")
    assert "grapple:focus" in offered()
    hit(t, "rosa", "jack", attack="brawl", maneuvers=["disarm:focus"], won=False)
    assert offered() == []


def test_outside_a_combat_each_challenge_offers_the_free_maneuver(t) -> None:
    for _ in range(2):
        challenge = attack(t, "rosa", "jack", attack="brawl", maneuvers=["knock_down:focus"])
        assert challenge.state["focus_used"] is True
        play_out(t, challenge, "rosa", "jack", won=False)


# --- seeds/002 "Combat Maneuvers": the result reaches the combat ----------------------------


def test_a_successful_grapple_leaves_the_target_grappled_by_the_attacker(t) -> None:
    row = start(t, "rosa", "jack")
    hit(t, "rosa", "jack", attack="brawl", maneuvers=["grapple:focus"], won=True)
    jack = combat(row).fighter(t["jack"].pk)
    assert jack.grappled_by == (t["rosa"].pk,)
    assert view(row, t["jack"].pk).order[1].conditions == "grappled by Rosa"
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    with pytest.raises(
        RulesError, match="Jack is grappled: her standard action cannot be Physical"
    ):
        attack(t, "jack", "rosa", attack="brawl")


def test_a_failed_grapple_leaves_nobody_grappled(t) -> None:
    row = start(t, "rosa", "jack")
    hit(t, "rosa", "jack", attack="brawl", maneuvers=["grapple"], won=False)
    assert combat(row).fighter(t["jack"].pk).grappled_by == ()


def test_a_knock_down_leaves_her_prone_and_her_phone_offers_to_stand_up(t) -> None:
    row = start(t, "rosa", "jack")
    hit(t, "rosa", "jack", attack="brawl", maneuvers=["knock_down"], won=True)
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    jack = view(row, t["jack"].pk)
    assert jack.order[1].conditions == "prone" and jack.can_stand_up and jack.max_steps == 1
    simple_action(t, row, "jack", "stand_up")
    assert not combat(row).fighter(t["jack"].pk).prone


def test_a_blinded_fighter_misses_without_fighting_blind_until_she_clears_her_eyes(t) -> None:
    row = start(t, "rosa", "jack")
    hit(t, "rosa", "jack", attack="brawl", maneuvers=["blinding_attack"], won=True)
    assert combat(row).fighter(t["jack"].pk).blinded == 2
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    assert view(row, t["jack"].pk).can_clear_eyes
    missed = attack(t, "jack", "rosa", attack="brawl")
    assert missed.state["result"] == "failure" and missed.state["attacker_blind"] is True


def test_a_knock_out_leaves_her_unconscious_for_ten_minutes(t) -> None:
    row = start(t, "rosa", "jack", surprise=t["rosa"].pk)
    challenge = attack(
        t, "rosa", "jack", attack="brawl", maneuvers=["knock_out"], surprise=True, first_round=True
    )
    play_out(t, challenge, "rosa", "jack", won=True)
    jack = combat(row).fighter(t["jack"].pk)
    assert jack.unconscious_until == pytest.approx(time.time() + 600, abs=5)
    assert "unconscious (10 more minutes)" in view(row, None).order[1].conditions
    # The Surprise Action taken, Rosa's initiative comes; ended, Jack's.
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    with pytest.raises(RulesError, match="Jack is unconscious for 10 more minutes."):
        services.combat_act(
            combat_id=row.pk,
            character=t["jack"],
            kind="simple",
            what="move",
            steps=1,
            user=t["jack_player"],
            msg_id=mid(),
        )


# --- seeds/002 "Retrying Failed Attacks": one immunity, in and out of combat ----------------


def test_a_failed_power_outside_a_combat_makes_her_immune_to_that_attacker_and_power(t) -> None:
    failed = attack(t, "vesper", "rosa", attack="mental", power="Dominate")
    failed = play_out(t, failed, "vesper", "rosa", won=False)
    assert bns_card(failed, Side.CHALLENGER).outcome_text == (
        "Failure: Rosa is not hurt; Rosa is immune to your Dominate for 10 minutes."
    )
    (row,) = Immunity.objects.all()
    assert (row.character, row.attacker, row.power) == (t["rosa"], t["vesper"], "Dominate")
    with pytest.raises(
        RulesError, match="Rosa is immune to Vesper's Dominate for 10 more minutes."
    ):
        attack(t, "vesper", "rosa", attack="mental", power="dominate")
    assert attack(t, "vesper", "rosa", attack="mental", power="Presence").state["power"]
    assert attack(t, "jack", "rosa", attack="mental", power="Dominate").state["power"]
    history = [e.text for e in session_history(t["session"]).entries]
    assert "Rosa is immune to Vesper's Dominate for 10 minutes" in history


def test_the_immunity_is_checked_inside_a_combat_too(t) -> None:
    row = start(t, "vesper", "rosa")  # Vesper (9) acts first
    hit(t, "vesper", "rosa", attack="social", power="Awe", won=False)
    next_turn(t, row)
    with pytest.raises(RulesError, match="Rosa is immune to Vesper's Awe"):
        attack(t, "vesper", "rosa", attack="social", power="Awe")
    assert view(row, t["vesper"].pk, immunities=_rows(t)).immune == [
        "Rosa is immune to your Awe for 10 more minutes"
    ]


def test_an_expired_immunity_no_longer_refuses(t) -> None:
    Immunity.objects.create(
        session=t["session"],
        character=t["rosa"],
        attacker=t["vesper"],
        power="Dominate",
        until=Presence.objects.first().arrived_at,  # long past
    )
    assert attack(t, "vesper", "rosa", attack="mental", power="Dominate").state["power"]


def _rows(t) -> list:
    from challenges.views.combat import immunities_now

    return immunities_now(t["session"], time.time())
