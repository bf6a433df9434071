"""Pools on the sheet (issue 10 item 7): what a move's reads build of the
sheet's pools, Disciplines, weapons, immunities and Blood Traits
(``services._reads.combatants``, ``_refreshed(READS_POOLS)``), and what
``services._writes._save`` writes of a move's spending, the immunities a
Willpower retest grants and the Blood Traits that stay active after a
Physical challenge (seeds/004 "Expending Blood", "Retrying The Test In An
Ability-Based Challenge"); a new session refreshes every pool."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from challenges import rules, services
from challenges.models import Challenge
from challenges.rules import ChallengeState, Immunity, Pool, Rating, Side, Transition, Weapon, judge
from challenges.services._reads import READS_POOLS, _refreshed
from challenges.services._writes import _save
from characters.models import Discipline, Presence, Trait
from characters.models import Immunity as ImmunityRow
from characters.models import Weapon as WeaponRow
from characters.services import presence_join
from tests.challenges.test_query_counts import _bid, _open, _throw

pytestmark = pytest.mark.django_db


@pytest.fixture
def sheets(game):
    """Helen: Willpower 5, Blood 10 (3 spent tonight), Rage 0, a generation
    limit of 2, Dominate 2, a sabre (+2 with Melee); Grady: Rage 4, his Tough
    Stamina-based."""
    helen, grady = game["helen"], game["grady"]
    helen.willpower, helen.blood, helen.blood_per_turn = 5, 10, 2
    helen.save()
    grady.rage = 4
    grady.save()
    Discipline.objects.create(character=helen, name="Dominate", rating=2)
    WeaponRow.objects.create(character=helen, name="Sabre", bonus=2, ability="Melee")
    Trait.objects.filter(character=grady, name="Tough").update(stamina=True)
    Presence.objects.filter(character=helen).update(blood_spent=3)
    return game


def _presence(game, who) -> Presence:
    return Presence.objects.get(session=game["session"], character=game[who])


def test_combatants_read_the_sheets_pools_disciplines_weapons_and_stamina(sheets):
    fighters = services.combatants([sheets["helen"], sheets["grady"]], sheets["session"])
    helen, grady = fighters[sheets["helen"].pk], fighters[sheets["grady"].pk]

    assert dict(helen.pools) == {Pool.WILLPOWER: 5, Pool.BLOOD: 7}  # no Rage 0
    assert dict(grady.pools) == {Pool.RAGE: 4}
    assert helen.abilities == (Rating("Brawl", 2),)
    assert helen.disciplines == (Rating("Dominate", 2),)
    assert helen.weapons == (Weapon("Sabre", 2, "Melee", False),)
    assert (helen.blood_limit, grady.blood_limit) == (2, None)
    assert [t.name for t in grady.traits if t.stamina] == ["Tough"]
    assert not any(t.stamina for t in helen.traits)


def test_combatants_read_running_immunities_and_active_blood_traits_only(sheets):
    now = timezone.now()
    session, helen, grady = sheets["session"], sheets["helen"], sheets["grady"]
    ImmunityRow.objects.create(
        session=session,
        character=grady,
        attacker=helen,
        power="Dominate",
        until=now + timedelta(minutes=9),
    )
    ImmunityRow.objects.create(
        session=session, character=grady, attacker=helen, power="Presence", until=now
    )
    Presence.objects.filter(character=helen).update(
        blood_traits=2, blood_traits_until=now + timedelta(minutes=4)
    )
    Presence.objects.filter(character=grady).update(
        blood_traits=3, blood_traits_until=now - timedelta(seconds=1)
    )

    fighters = services.combatants([helen, grady], session)

    (immunity,) = fighters[grady.pk].immunities
    assert (immunity.attacker_id, immunity.power) == (helen.pk, "Dominate")
    assert immunity.until == pytest.approx((now + timedelta(minutes=9)).timestamp(), abs=1)
    assert fighters[grady.pk].immune_to(helen.pk, "dominate", time.time())
    assert fighters[helen.pk].immunities == ()
    assert (fighters[helen.pk].blood_traits, fighters[grady.pk].blood_traits) == (2, 0)


def test_a_character_without_a_presence_has_her_whole_pools(sheets):
    Presence.objects.filter(character=sheets["helen"]).delete()
    helen = services.combatant(sheets["helen"], sheets["session"])
    assert dict(helen.pools) == {Pool.WILLPOWER: 5, Pool.BLOOD: 10}


def test_a_new_session_refreshes_every_pool(sheets):
    Presence.objects.filter(character=sheets["helen"]).update(willpower_spent=5)
    assert services.combatant(sheets["helen"], sheets["session"]).pool(Pool.WILLPOWER) == 0

    tomorrow = services.session_start(
        chronicle=sheets["chronicle"], user=sheets["narrator"], msg_id=uuid.uuid4().hex
    )
    presence_join(session=tomorrow, character=sheets["helen"])

    helen = services.combatant(sheets["helen"], tomorrow)
    assert dict(helen.pools) == {Pool.WILLPOWER: 5, Pool.BLOOD: 10}


def _stored(challenge: Challenge) -> ChallengeState:
    challenge.refresh_from_db()
    return ChallengeState.from_dict(challenge.state)


def _save_state(challenge: Challenge, before: ChallengeState, after: ChallengeState) -> None:
    with transaction.atomic():
        _save(challenge, before, Transition(after, ()), actor=None)


def test_a_move_that_spends_writes_only_what_it_added(sheets):
    challenge = _open(sheets)
    before = _stored(challenge)
    helen_id, grady_id = sheets["helen"].pk, sheets["grady"].pk
    first = replace(before, spent=((grady_id, Pool.RAGE, 1), (helen_id, Pool.BLOOD, 2)))
    _save_state(challenge, before, first)
    # The next move keeps the earlier spending and adds one Willpower.
    _save_state(
        challenge, first, replace(first, spent=(*first.spent, (helen_id, Pool.WILLPOWER, 1)))
    )

    helen, grady = _presence(sheets, "helen"), _presence(sheets, "grady")
    assert (helen.blood_spent, helen.willpower_spent, helen.rage_spent) == (5, 1, 0)
    assert (grady.rage_spent, grady.blood_spent) == (1, 0)
    assert services.combatant(sheets["helen"], sheets["session"]).pool(Pool.BLOOD) == 5


def test_spending_by_a_character_not_present_raises_and_the_move_writes_nothing(sheets):
    challenge = _open(sheets)
    before = _stored(challenge)
    Presence.objects.filter(character=sheets["grady"]).delete()
    after = replace(before, spent=((sheets["grady"].pk, Pool.RAGE, 1),))
    with pytest.raises(Presence.DoesNotExist):
        _save_state(challenge, before, after)
    assert _stored(challenge).spent == ()


def test_refreshed_pools_add_back_what_this_challenge_spent(sheets, django_assert_num_queries):
    """The engine subtracts the challenge's own spending (judge.pool_left):
    the re-read pools must not count it twice. One query."""
    challenge = _open(sheets)
    before = _stored(challenge)
    after = replace(before, spent=((sheets["helen"].pk, Pool.BLOOD, 2),))
    _save_state(challenge, before, after)
    Presence.objects.filter(character=sheets["helen"]).update(
        willpower_spent=1, blood_spent=F("blood_spent") + 1
    )  # and one more Blood spent elsewhere

    stored = _stored(challenge)
    with django_assert_num_queries(1):
        fresh = _refreshed(stored, challenge.session_id, challenge.pk, READS_POOLS)

    # Blood 10: 3 spent before, 2 here, 1 elsewhere; the engine sees 10 - 3 - 1 = 6
    # for her pool tonight, less the 2 of this challenge.
    assert dict(fresh.challenger.pools) == {Pool.WILLPOWER: 4, Pool.BLOOD: 6}
    assert judge.pool_left(fresh, Side.CHALLENGER, Pool.BLOOD) == 4
    assert fresh.challenger.traits == before.challenger.traits
    assert fresh.challenger.disciplines == (Rating("Dominate", 2),)


def test_granted_immunities_become_rows_once(sheets):
    challenge = _open(sheets)
    before = _stored(challenge)
    until = time.time() + 600
    granted = ((sheets["grady"].pk, Immunity(sheets["helen"].pk, "Dominate", until)),)
    after = replace(before, granted=granted)
    _save_state(challenge, before, after)
    _save_state(challenge, after, replace(after, stakes="again"))  # nothing new granted

    (row,) = ImmunityRow.objects.all()
    assert (row.session_id, row.character_id, row.attacker_id, row.power) == (
        sheets["session"].pk,
        sheets["grady"].pk,
        sheets["helen"].pk,
        "Dominate",
    )
    assert row.until.timestamp() == pytest.approx(until, abs=0.01)
    grady = services.combatant(sheets["grady"], sheets["session"])
    assert grady.immune_to(sheets["helen"].pk, "Dominate", time.time())


def test_blood_spent_in_a_physical_challenge_stays_active_five_minutes_after_it(sheets):
    """ukm: Helen spends 2 Blood before the test (blood_room: her generation's
    limit 2), the challenge resolves, her 2 Blood Traits stay active until five
    minutes after its end; her Blood pool is 10 - 3 - 2."""
    sheets["chronicle"].ruleset = "ukm"
    sheets["chronicle"].save()
    challenge = _open(sheets, bids=["Quick"], is_attack=False)
    before = _stored(challenge)
    spent = rules.spend_blood(before, side=Side.CHALLENGER, amount=2, now=time.time())
    _save_state(challenge, before, spent.state)
    assert _presence(sheets, "helen").blood_spent == 5
    _bid(sheets, challenge, ["Tough"])
    _throw(sheets, challenge, "helen", "rock")
    started = timezone.now()
    challenge = _throw(sheets, challenge, "grady", "scissors")

    assert challenge.stage == "resolved"
    helen = _presence(sheets, "helen")
    assert helen.blood_traits == 2
    assert started + timedelta(minutes=5) <= helen.blood_traits_until
    assert helen.blood_traits_until <= timezone.now() + timedelta(minutes=5)
    assert _presence(sheets, "grady").blood_traits == 0
    fighter = services.combatant(sheets["helen"], sheets["session"])
    assert (fighter.blood_traits, fighter.pool(Pool.BLOOD)) == (2, 5)


def test_blood_traits_add_to_those_still_active_capped_at_3(sheets):
    """Still active 2, spent 2 more: 3 (the ukm most); expired ones do not count."""
    sheets["chronicle"].ruleset = "ukm"
    sheets["chronicle"].save()
    helen = sheets["helen"]
    helen.blood_per_turn = None
    helen.save()
    for active_until, expected in ((timedelta(minutes=2), 3), (-timedelta(seconds=1), 2)):
        Presence.objects.filter(character=helen).update(
            blood_traits=2, blood_traits_until=timezone.now() + active_until
        )
        challenge = _open(sheets, bids=["Quick"], is_attack=False)
        before = _stored(challenge)
        resolved = replace(
            before,
            challenger_blood=2,
            stage=rules.Stage.RESOLVED,
            outcome=rules.Outcome.CHALLENGER_WINS,
        )
        _save_state(challenge, before, resolved)
        assert _presence(sheets, "helen").blood_traits == expected


def test_blood_outside_a_physical_challenge_sets_no_blood_traits(sheets):
    challenge = services.challenge_open(
        session=sheets["session"],
        challenger=sheets["helen"],
        defender=sheets["grady"],
        category="social",
        bids=["Alluring"],
        user=sheets["helen_player"],
        msg_id=uuid.uuid4().hex,
    )
    before = _stored(challenge)
    resolved = replace(
        before, challenger_blood=1, stage=rules.Stage.RESOLVED, outcome=rules.Outcome.DRAW
    )
    _save_state(challenge, before, resolved)
    assert _presence(sheets, "helen").blood_traits == 0


def test_a_bid_and_a_declaration_keep_the_sheet_read_at_the_open(sheets):
    """READS_ALL and READS_HELD re-read Traits (and health), and keep the
    Disciplines, weapons and pools read at the open."""
    challenge = _open(sheets, bids=["Quick"], is_attack=False)
    challenge = _bid(sheets, challenge, ["Tough"])
    helen, grady = challenge.state["challenger"], challenge.state["defender"]
    assert helen["disciplines"] == [["Dominate", 2]]
    assert helen["weapons"] == [["Sabre", 2, "Melee", False]]
    assert helen["pools"] == {"blood": 7, "willpower": 5}
    assert grady["pools"] == {"rage": 4}
