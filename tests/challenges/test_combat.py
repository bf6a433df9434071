"""Issue 12, combat rounds: the services of ``challenges.services.combat``
(a narrator starts a bns combat, the order by initiative, advancing, ties,
Rage rounds, actions, Time out, the end) and the two join points with the
opposed challenge, ``combat_check_challenge`` and ``combat_note_challenge``."""

from __future__ import annotations

import uuid

import pytest

from challenges import services
from challenges.models import Combat, Event
from challenges.rules import RulesError
from challenges.rules.bns_combat import CombatState, whose_turn
from characters.models import Presence
from tests.factories import bns_combat_evening, evening


def mid() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def t(db):
    return bns_combat_evening()


def start(t, *names, **extra) -> Combat:
    return services.combat_start(
        session=t["session"],
        characters=[t[n] for n in names],
        user=t["narrator"],
        msg_id=mid(),
        **extra,
    )


def state(row: Combat) -> CombatState:
    row.refresh_from_db()
    return CombatState.from_dict(row.state)


def order(row: Combat) -> list[str]:
    return [f.name for f in state(row).fighters]


def acting(row: Combat) -> str | None:
    s = state(row)
    who = whose_turn(s)
    return None if who is None else s.fighter(who).name


def by(t, name, service, **kwargs):
    return service(character=t[name], user=t[f"{name}_player"], msg_id=mid(), **kwargs)


def test_a_combat_orders_its_characters_by_the_higher_of_physical_and_mental(t) -> None:
    row = start(t, "rosa", "jack", "vesper")
    assert order(row) == ["Vesper", "Rosa", "Jack"]  # 9 (Mental), 7, 6
    assert acting(row) == "Vesper"
    assert set(row.participants.values_list("name", flat=True)) == {"Vesper", "Rosa", "Jack"}
    assert Event.objects.get(kind="combat_started").data["combat"] == row.pk


def test_a_garou_acts_in_as_many_rage_rounds_as_the_rage_she_has_left(t) -> None:
    row = start(t, "tooth", "rosa")
    fighters = {f.name: f.rage_rounds for f in state(row).fighters}
    assert fighters == {"Tooth": 3, "Rosa": 0}  # Rage 4, one spent tonight


def test_the_narrator_may_set_rage_rounds_at_the_start_and_later(t) -> None:
    row = start(t, "tooth", "rosa", rage_rounds={t["tooth"].pk: 1})
    assert state(row).fighter(t["tooth"].pk).rage_rounds == 1
    services.combat_set_rage(
        combat_id=row.pk, character_id=t["tooth"].pk, rounds=0, user=t["narrator"], msg_id=mid()
    )
    assert state(row).rage_rounds == 0


def test_advancing_through_a_round_then_a_rage_round_then_a_new_turn(t) -> None:
    row = start(t, "tooth", "rosa", rage_rounds={t["tooth"].pk: 1})
    assert acting(row) == "Tooth"  # 9 before 7
    by(t, "tooth", services.combat_advance, combat_id=row.pk)
    assert acting(row) == "Rosa"
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    assert state(row).round == (1, 1) and acting(row) == "Tooth"  # Rage round 1: Tooth alone
    by(t, "tooth", services.combat_advance, combat_id=row.pk)
    assert state(row).round == (2, 0) and acting(row) == "Tooth"


def test_only_the_acting_character_ends_her_initiative(t) -> None:
    row = start(t, "rosa", "jack", "vesper")
    with pytest.raises(RulesError, match="It is Vesper's initiative, not Rosa's."):
        by(t, "rosa", services.combat_advance, combat_id=row.pk)
    with pytest.raises(services.ActionRefused):
        services.combat_advance(
            combat_id=row.pk, character=t["rosa"], user=t["jack_player"], msg_id=mid()
        )
    assert acting(row) == "Vesper"


def test_a_character_takes_one_simple_and_one_standard_move_on_her_initiative(t) -> None:
    row = start(t, "rosa", "jack")
    by(t, "rosa", services.combat_act, combat_id=row.pk, kind="simple", what="move", steps=3)
    by(t, "rosa", services.combat_act, combat_id=row.pk, kind="standard", what="move", steps=3)
    assert state(row).fighter(t["rosa"].pk).steps == 6
    with pytest.raises(RulesError, match="already taken her simple action"):
        by(t, "rosa", services.combat_act, combat_id=row.pk, kind="simple", what="other")
    by(t, "rosa", services.combat_advance, combat_id=row.pk)
    with pytest.raises(RulesError, match="One action moves 0 to 3 steps."):
        by(t, "jack", services.combat_act, combat_id=row.pk, kind="simple", steps=4)


def test_ties_follow_the_narrator_who_may_reorder_them(t) -> None:
    row = start(t, "tooth", "vesper", "rosa")  # Tooth and Vesper: initiative 9
    assert order(row) == ["Tooth", "Vesper", "Rosa"]  # by name until she decides
    services.combat_reorder(
        combat_id=row.pk,
        order=[t["vesper"].pk, t["tooth"].pk, t["rosa"].pk],
        user=t["narrator"],
        msg_id=mid(),
    )
    assert order(row) == ["Vesper", "Tooth", "Rosa"] and acting(row) == "Vesper"
    with pytest.raises(RulesError, match="cannot act after"):
        services.combat_reorder(
            combat_id=row.pk,
            order=[t["rosa"].pk, t["vesper"].pk, t["tooth"].pk],
            user=t["narrator"],
            msg_id=mid(),
        )


def test_a_surprise_action_comes_first(t) -> None:
    row = start(t, "rosa", "jack", "vesper", surprise=t["jack"].pk)
    assert acting(row) == "Jack"
    by(t, "jack", services.combat_act, combat_id=row.pk, kind="standard", what="other")
    assert acting(row) == "Vesper"


def test_time_out_holds_the_round_every_move_is_refused_until_resume(t) -> None:
    row = start(t, "rosa", "jack", "vesper")
    services.session_time_out(session=t["session"], user=t["narrator"], msg_id=mid())
    with pytest.raises(services.ActionRefused, match="Time out"):
        by(t, "vesper", services.combat_act, combat_id=row.pk, kind="simple", steps=2)
    with pytest.raises(services.ActionRefused, match="Time out"):
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    with pytest.raises(services.ActionRefused, match="Time out"):
        start(t, "tooth", "jack")
    assert row.version == Combat.objects.get(pk=row.pk).version
    services.session_resume(session=t["session"], user=t["narrator"], msg_id=mid())
    by(t, "vesper", services.combat_act, combat_id=row.pk, kind="simple", steps=2)
    assert state(row).fighter(t["vesper"].pk).steps == 2


def test_only_a_narrator_starts_advances_reorders_and_ends(t) -> None:
    with pytest.raises(services.ActionRefused, match="narrators"):
        services.combat_start(
            session=t["session"],
            characters=[t["rosa"], t["jack"]],
            user=t["rosa_player"],
            msg_id=mid(),
        )
    row = start(t, "rosa", "jack")
    for move in (services.combat_advance, services.combat_end):
        with pytest.raises(services.ActionRefused, match="narrators"):
            move(combat_id=row.pk, user=t["rosa_player"], msg_id=mid())
    assert Combat.objects.count() == 1 and acting(row) == "Rosa"


def test_a_combat_needs_present_characters_not_already_fighting(t) -> None:
    Presence.objects.filter(character=t["jack"]).update(status=Presence.Status.ABSENT)
    with pytest.raises(services.ActionRefused, match="Jack is not present tonight."):
        start(t, "rosa", "jack")
    with pytest.raises(RulesError, match="at least two"):
        start(t, "rosa")
    start(t, "rosa", "vesper")
    with pytest.raises(services.ActionRefused, match="Rosa is already in a combat"):
        start(t, "rosa", "tooth")


def test_a_met_chronicle_has_no_combat_rounds(db) -> None:
    g = evening()
    with pytest.raises(services.ActionRefused, match="no combat rounds"):
        services.combat_start(
            session=g["session"],
            characters=[g["helen"], g["grady"]],
            user=g["narrator"],
            msg_id=mid(),
        )


def test_adding_and_removing_a_character(t) -> None:
    row = start(t, "rosa", "jack")
    services.combat_add(combat_id=row.pk, character=t["vesper"], user=t["narrator"], msg_id=mid())
    assert order(row) == ["Vesper", "Rosa", "Jack"]
    assert acting(row) == "Rosa"  # Vesper's place has passed: she acts from the next round
    services.combat_remove(
        combat_id=row.pk, character_id=t["rosa"].pk, reason="fled", user=t["narrator"], msg_id=mid()
    )
    assert order(row) == ["Vesper", "Jack"] and acting(row) == "Jack"
    assert t["rosa"].combats.filter(pk=row.pk).exists()  # her phone still hears of it


def test_ending_a_combat_refuses_every_later_move_and_is_allowed_in_a_time_out(t) -> None:
    row = start(t, "rosa", "jack")
    services.session_time_out(session=t["session"], user=t["narrator"], msg_id=mid())
    services.combat_end(combat_id=row.pk, reason="they part", user=t["narrator"], msg_id=mid())
    row.refresh_from_db()
    assert row.ended_at is not None and state(row).ended
    services.session_resume(session=t["session"], user=t["narrator"], msg_id=mid())
    with pytest.raises(services.ActionRefused, match="This combat is over."):
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    start(t, "rosa", "jack")  # a new combat may start


def test_ending_the_session_ends_its_combats(t) -> None:
    row = start(t, "rosa", "jack")
    services.session_end(session=t["session"], user=t["narrator"], msg_id=mid())
    row.refresh_from_db()
    assert row.ended_at is not None and state(row).ended


def test_a_repeated_message_is_applied_once(t) -> None:
    row = start(t, "rosa", "jack")
    msg = mid()
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=msg)
    with pytest.raises(services.AlreadyDone):
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=msg)
    assert acting(row) == "Jack"


# --- the join points with the opposed challenge ---------------------------------------


def _join(service, t, attacker, defender, category="physical", power="", now=1000.0, **extra):
    return service(
        session=t["session"],
        attacker=t[attacker],
        defender=t[defender],
        category=category,
        power=power,
        now=now,
        **extra,
    )


def check(t, attacker, defender, **kwargs):
    return _join(services.combat_check_challenge, t, attacker, defender, **kwargs)


def note(t, attacker, defender, failed=None, **kwargs):
    return _join(services.combat_note_challenge, t, attacker, defender, failed=failed, **kwargs)


def test_check_is_none_when_no_combat_holds_them(t) -> None:
    assert check(t, "rosa", "jack") is None
    assert note(t, "rosa", "jack", failed=False) is None
    assert Combat.objects.count() == 0


def test_check_refuses_a_challenge_out_of_initiative(t) -> None:
    start(t, "rosa", "jack", "vesper")
    with pytest.raises(RulesError, match="It is Vesper's initiative, not Rosa's."):
        check(t, "rosa", "jack")
    assert check(t, "vesper", "rosa") is None


def test_check_refuses_when_only_one_of_them_is_in_a_combat(t) -> None:
    start(t, "rosa", "jack")
    with pytest.raises(RulesError, match="a narrator adds Tooth to it"):
        check(t, "rosa", "tooth")


def test_note_takes_the_standard_action_and_counts_toward_the_limits(t) -> None:
    row = start(t, "vesper", "rosa", "jack", "tooth", rage_rounds={t["tooth"].pk: 0})
    # Tooth 9 and Vesper 9 (by name: Tooth first), Rosa 7, Jack 6.
    note(t, "tooth", "jack")
    with pytest.raises(RulesError, match="already taken her standard action"):
        check(t, "tooth", "rosa")
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    note(t, "vesper", "jack", failed=True)
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    with pytest.raises(RulesError, match="Jack has already been the target of two Physical"):
        check(t, "rosa", "jack")
    assert check(t, "rosa", "jack", category="mental", power="Dominate") is None
    assert state(row).targeted(t["jack"].pk, "physical") == 2


def test_a_failed_mental_challenge_in_a_combat_is_counted_the_immunity_is_the_challenges(t):
    """seeds/002 "Retrying Failed Attacks": the combat only counts and
    settles it; the immunity is one Immunity row written by the challenge
    (tests/challenges/test_bns_in_combat.py), shown by the combat's views."""
    row = start(t, "vesper", "rosa")
    note(t, "vesper", "rosa", category="mental", power="Dominate", now=1000.0)
    note(t, "vesper", "rosa", category="mental", power="Dominate", failed=True, now=1010.0)
    s = state(row)
    assert s.attacks[0].failed is True and len(s.attacks) == 1  # settled, not a second one
    for _ in range(2):  # the next turn, Vesper's initiative again
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    assert check(t, "vesper", "rosa", category="mental", power="Dominate", now=1100.0) is None
    from challenges.views import combat_view

    immunity = (t["rosa"].pk, t["vesper"].pk, "Dominate", 1610.0)
    assert combat_view(row, t["vesper"].pk, now=1100.0, immunities=[immunity]).immune == [
        "Rosa is immune to your Dominate for 9 more minutes"
    ]
    assert combat_view(row, t["rosa"].pk, now=1100.0, immunities=[immunity]).immune == []
    assert combat_view(row, None, now=1100.0, immunities=[immunity]).immunities == [
        "Rosa to Vesper's Dominate: 9 more minutes"
    ]
    assert combat_view(row, None, now=1611.0, immunities=[immunity]).immunities == []


def test_mental_and_social_challenges_only_in_the_everyman_round(t) -> None:
    row = start(t, "tooth", "rosa", rage_rounds={t["tooth"].pk: 1})
    for _ in range(2):
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    assert state(row).round == (1, 1)
    with pytest.raises(RulesError, match="Social challenges are made only in the everyman round"):
        check(t, "tooth", "rosa", category="social", power="Intimidation")
    assert check(t, "tooth", "rosa") is None


def test_a_challenge_noted_when_it_opens_settles_later_even_after_play_moved_on(t) -> None:
    row = start(t, "vesper", "rosa", "jack")
    note(t, "vesper", "rosa", category="social", power="Presence")
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    services.combat_remove(
        combat_id=row.pk, character_id=t["vesper"].pk, user=t["narrator"], msg_id=mid()
    )
    note(t, "vesper", "rosa", category="social", power="Presence", failed=True, now=2000.0)
    s = state(row)
    assert s.attacks[0].failed is True
    kinds = list(Event.objects.filter(kind__startswith="combat_").values_list("kind", flat=True))
    assert kinds[-1] == "combat_attack_settled"


def test_a_refused_note_changes_nothing(t) -> None:
    row = start(t, "vesper", "rosa")
    version = Combat.objects.get(pk=row.pk).version
    with pytest.raises(RulesError, match="not Rosa's"):
        note(t, "rosa", "vesper")
    assert Combat.objects.get(pk=row.pk).version == version and state(row).attacks == ()


# --- what the screens show ---------------------------------------------------------------


def test_only_a_ruleset_with_test_pools_has_combat_rounds() -> None:
    from challenges.rules.rulesets import get_ruleset

    assert get_ruleset("bns").combat_rounds
    assert not get_ruleset("met_classic").combat_rounds and not get_ruleset("ukm").combat_rounds


def test_her_phone_says_whose_initiative_it_is_and_what_she_may_do(t) -> None:
    from challenges import views

    def combat_view(row, me):
        row.refresh_from_db()
        return views.combat_view(row, me)

    row = start(t, "tooth", "rosa", rage_rounds={t["tooth"].pk: 1})
    tooth, rosa = combat_view(row, t["tooth"].pk), combat_view(row, t["rosa"].pk)
    assert tooth.status == "Your initiative: take your standard and simple action"
    assert tooth.my_turn and tooth.can_advance and tooth.max_steps == 3
    assert rosa.status == "Tooth is acting." and not rosa.my_turn and not rosa.can_advance
    assert tooth.targets == ["Rosa: Physical, Social, Mental"] and rosa.targets == []
    by(t, "tooth", services.combat_act, combat_id=row.pk, kind="standard", what="other")
    assert combat_view(row, t["tooth"].pk).status == "Your initiative: take your simple action"
    for _ in range(2):
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    rosa = combat_view(row, t["rosa"].pk)
    assert rosa.label == "Turn 1 · Rage round 1"
    assert rosa.status == "You do not act in Rage round 1. Tooth is acting."
    services.combat_remove(
        combat_id=row.pk, character_id=t["rosa"].pk, user=t["narrator"], msg_id=mid()
    )
    assert combat_view(row, t["rosa"].pk).status == "You are out of this combat."


def test_the_dashboard_offers_reorder_for_ties_only_and_adds_from_who_is_here(t) -> None:
    from challenges.views import combat_view

    row = start(t, "vesper", "tooth", "rosa")
    present = [(t[n].pk, n.title()) for n in ("jack", "rosa", "tooth", "vesper")]
    view = combat_view(row, None, present=present)
    ups = {f.name: f.up_order for f in view.order}
    assert ups == {
        "Tooth": [],
        "Vesper": [t["vesper"].pk, t["tooth"].pk, t["rosa"].pk],
        "Rosa": [],
    }
    assert view.ties and view.add_options == [(t["jack"].pk, "Jack")]
    assert view.order[0].targeted == "Physical 0/2 · Social 0/1 · Mental 0/1"


def test_the_evening_s_history_tells_the_combat_in_words(t) -> None:
    from challenges.history import session_history

    row = start(t, "rosa", "jack")
    by(t, "rosa", services.combat_act, combat_id=row.pk, kind="simple", steps=3)
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    services.combat_end(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    texts = [e.text for e in session_history(t["session"]).entries]
    c = f"Combat #{row.pk}"
    assert texts == [
        f"{c} starts: Rosa, Jack",
        f"{c}: Rosa moves 3 steps (simple action)",
        f"{c}: Rosa's initiative ends",
        f"{c}: Jack's initiative ends",
        f"{c}: Turn 2 · Everyman round begins",
        f"{c} ends",
    ]
