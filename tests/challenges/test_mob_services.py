"""Mob scenes through challenges.services: the narrator opens one, players
choose, lead and bid, the leader's test is a Challenge played with the usual
moves, and the outcome is recorded (TraitLoss, Presence health, Events).
seeds/000 "The Mob Scene"; seeds/004 "Mob Scenes"."""

from __future__ import annotations

import uuid

import pytest

from challenges import services
from challenges.models import Challenge, Event, MobScene, TraitLoss
from challenges.rules import MobStage, RulesError
from characters.models import Presence
from tests.factories import make_character, make_user, narrated_chronicle


def mid() -> str:
    return uuid.uuid4().hex


def by(t: dict, who: str, move, **fields):
    """``move`` (a service) made by ``who``'s player for her character."""
    return move(character=t[who], user=t[who].player, msg_id=mid(), **fields)


def mob_table(ruleset: str = "met_classic") -> dict:
    """Ann, Bob, Cid (attackers) and Dee (defender), each with 4 Physical
    Traits ``<Name>1``…``<Name>4``, played by users ann, bob, cid, dee."""
    table = narrated_chronicle()
    table["chronicle"].ruleset = ruleset
    table["chronicle"].save()
    for name in ("Ann", "Bob", "Cid", "Dee"):
        table[name.lower()] = make_character(
            table["chronicle"],
            name,
            make_user(name.lower()),
            traits=[(f"{name}{i}", "physical", 1) for i in range(1, 5)],
        )
    return table


def opened(t: dict) -> MobScene:
    return services.mob_open(
        session=t["session"],
        characters=[t["ann"], t["bob"], t["cid"], t["dee"]],
        category="physical",
        user=t["narrator"],
        msg_id=mid(),
    )


def three_on_dee(t: dict) -> Challenge:
    """Everyone points (Dee at nobody), Bob leads, all bid: the test's Challenge."""
    mob = opened(t)
    for name in ("ann", "bob", "cid"):
        by(t, name, services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    by(t, "dee", services.mob_choose, mob_id=mob.pk, target=None)
    by(t, "ann", services.mob_pick_leader, mob_id=mob.pk, leader=t["bob"].pk)
    for name in ("ann", "bob", "cid"):
        by(t, name, services.mob_bid, mob_id=mob.pk, bids=[f"{name.title()}1"])
    by(t, "dee", services.mob_bid, mob_id=mob.pk, bids=["Dee1", "Dee2", "Dee3"])
    mob = MobScene.objects.get(pk=mob.pk)
    assert mob.stage == MobStage.TEST and mob.challenge is not None
    return mob.challenge


def throws(t: dict, challenge: Challenge, bob: str, dee: str) -> None:
    by(t, "bob", services.challenge_throw, challenge_id=challenge.pk, throw=bob)
    by(t, "dee", services.challenge_throw, challenge_id=challenge.pk, throw=dee)


def health(t: dict, name: str) -> int:
    return Presence.objects.get(session=t["session"], character=t[name]).health


def lost(t: dict) -> list[tuple[str, str]]:
    return sorted(TraitLoss.objects.values_list("character__name", "trait__name"))


@pytest.mark.django_db
def test_attackers_win_the_defender_loses_her_three_bids_and_one_health_level() -> None:
    t = mob_table()
    challenge = three_on_dee(t)
    assert (challenge.challenger_id, challenge.defender_id) == (t["bob"].pk, t["dee"].pk)
    throws(t, challenge, "rock", "scissors")
    assert lost(t) == [("Dee", "Dee1"), ("Dee", "Dee2"), ("Dee", "Dee3")]
    assert health(t, "dee") == 1 and health(t, "bob") == 0
    mob = MobScene.objects.get()
    assert mob.stage == MobStage.SETTLED and mob.settled_at is not None
    kinds = list(Event.objects.filter(kind__startswith="mob_").values_list("kind", flat=True))
    assert kinds[-2:] == ["mob_result", "mob_settled"]
    result = Event.objects.get(kind="mob_result")
    assert result.challenge_id == challenge.pk and result.data["mob"] == mob.pk
    assert result.data["wounds"] == [t["dee"].pk]
    # Nobody's target is in the history before the choosing closed.
    assert all("target" not in e.data for e in Event.objects.filter(kind="mob_chose"))


@pytest.mark.django_db
def test_defender_wins_each_attacker_loses_his_bid_and_she_hurts_one() -> None:
    t = mob_table()
    challenge = three_on_dee(t)
    throws(t, challenge, "scissors", "rock")
    assert lost(t) == [("Ann", "Ann1"), ("Bob", "Bob1"), ("Cid", "Cid1")]
    mob = MobScene.objects.get()
    assert mob.stage == MobStage.HURT
    with pytest.raises(services.ActionRefused):
        by(t, "ann", services.mob_hurt, mob_id=mob.pk, attacker=t["ann"].pk)
    by(t, "dee", services.mob_hurt, mob_id=mob.pk, attacker=t["cid"].pk)
    assert health(t, "cid") == 1 and health(t, "dee") == 0
    assert MobScene.objects.get().stage == MobStage.SETTLED


@pytest.mark.django_db
def test_time_out_freezes_the_scene_and_its_test() -> None:
    t = mob_table()
    mob = opened(t)
    services.session_time_out(session=t["session"], user=t["narrator"], msg_id=mid())
    with pytest.raises(services.ActionRefused, match="Time out"):
        by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    with pytest.raises(services.ActionRefused, match="Time out"):
        services.mob_close_choosing(mob_id=mob.pk, user=t["narrator"], msg_id=mid())
    services.session_resume(session=t["session"], user=t["narrator"], msg_id=mid())
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    assert MobScene.objects.get().state["choices"] == [[t["ann"].pk, t["dee"].pk]]


@pytest.mark.django_db
def test_only_narrators_open_and_close_and_players_act_for_their_own() -> None:
    t = mob_table()
    with pytest.raises(services.ActionRefused):
        services.mob_open(
            session=t["session"],
            characters=[t["ann"], t["bob"], t["dee"]],
            category="physical",
            user=t["ann"].player,
            msg_id=mid(),
        )
    mob = opened(t)
    with pytest.raises(services.ActionRefused):
        services.mob_close_choosing(mob_id=mob.pk, user=t["ann"].player, msg_id=mid())
    with pytest.raises(services.ActionRefused):
        services.mob_choose(
            mob_id=mob.pk,
            character=t["bob"],
            target=t["dee"].pk,
            user=t["ann"].player,
            msg_id=mid(),
        )
    with pytest.raises(RulesError):
        by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["ann"].pk)
    assert MobScene.objects.get().state["choices"] == []


@pytest.mark.django_db
def test_ukm_defender_bids_one_and_is_two_down_in_the_tie() -> None:
    t = mob_table("ukm")
    mob = opened(t)
    for name in ("ann", "bob", "cid"):
        by(t, name, services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    services.mob_close_choosing(mob_id=mob.pk, user=t["narrator"], msg_id=mid())
    by(t, "cid", services.mob_pick_leader, mob_id=mob.pk, leader=t["ann"].pk)
    for name in ("ann", "bob", "cid"):
        by(
            t,
            name,
            services.mob_bid,
            mob_id=mob.pk,
            bids=[f"{name.title()}1"],
            effect="claws",
            damage=2 if name == "cid" else 1,
        )
    by(t, "dee", services.mob_bid, mob_id=mob.pk, bids=["Dee1"])
    challenge = MobScene.objects.get().challenge
    for who, throw in (("ann", "rock"), ("dee", "rock")):
        by(t, who, services.challenge_throw, challenge_id=challenge.pk, throw=throw)
    for who in ("ann", "dee"):
        by(t, who, services.challenge_declare, challenge_id=challenge.pk, count=4)
    assert lost(t) == [("Dee", "Dee1")]
    assert health(t, "dee") == 2  # the most damaging single effect: two levels
    assert MobScene.objects.get().state["targets"][0]["effect"] == "claws"


def ann_challenges_cid(t: dict) -> Challenge:
    return services.challenge_open(
        session=t["session"],
        challenger=t["ann"],
        defender=t["cid"],
        category="physical",
        bids=["Ann1"],
        user=t["ann"].player,
        msg_id=mid(),
    )


@pytest.mark.django_db
def test_a_trait_bid_in_a_mob_is_at_risk_until_its_target_is_settled() -> None:
    t = mob_table()
    challenge = three_on_dee(t)  # Ann (not the leader) bid her only Ann1
    with pytest.raises(RulesError, match="already at risk"):
        ann_challenges_cid(t)
    assert [b.name for b in services.open_bids(t["session"].pk, [t["ann"].pk])] == ["Ann1"]
    throws(t, challenge, "rock", "scissors")  # the attackers win: her bid is safe
    assert services.open_bids(t["session"].pk, [t["ann"].pk]) == []
    assert ann_challenges_cid(t).pk


@pytest.mark.django_db
def test_ending_the_session_ends_its_mob_scene_and_starts_no_next_target() -> None:
    t = mob_table()
    mob = opened(t)
    by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    by(t, "dee", services.mob_choose, mob_id=mob.pk, target=t["ann"].pk)
    services.mob_close_choosing(mob_id=mob.pk, user=t["narrator"], msg_id=mid())
    by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann1"])
    by(t, "dee", services.mob_bid, mob_id=mob.pk, bids=["Dee1"])
    assert MobScene.objects.get().stage == MobStage.TEST
    services.session_end(session=t["session"], user=t["narrator"], msg_id=mid())
    mob = MobScene.objects.get()
    assert mob.stage == MobStage.SETTLED
    assert [c.outcome for c in Challenge.objects.all()] == ["void"]
    assert lost(t) == [] and health(t, "ann") == health(t, "dee") == 0


@pytest.mark.django_db
def test_two_targets_are_settled_in_order_each_by_its_own_test() -> None:
    t = mob_table()
    mob = opened(t)
    for who, whom in (("ann", "dee"), ("bob", "dee"), ("cid", "ann"), ("dee", None)):
        target = None if whom is None else t[whom].pk
        by(t, who, services.mob_choose, mob_id=mob.pk, target=target)
    row = MobScene.objects.get()
    assert row.current_target_id == t["dee"].pk  # two attackers before one
    by(t, "bob", services.mob_pick_leader, mob_id=mob.pk, leader=t["ann"].pk)
    by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann1"])
    by(t, "bob", services.mob_bid, mob_id=mob.pk, bids=["Bob1"])
    by(t, "dee", services.mob_bid, mob_id=mob.pk, bids=["Dee1", "Dee2"])
    first = MobScene.objects.get().challenge
    by(t, "ann", services.challenge_throw, challenge_id=first.pk, throw="rock")
    by(t, "dee", services.challenge_throw, challenge_id=first.pk, throw="paper")
    by(t, "dee", services.mob_hurt, mob_id=mob.pk, attacker=t["bob"].pk)
    row = MobScene.objects.get()
    assert row.current_target_id == t["ann"].pk and row.stage == MobStage.BIDS
    by(t, "cid", services.mob_bid, mob_id=mob.pk, bids=["Cid1"])
    by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann2"])
    second = MobScene.objects.get().challenge
    assert second.pk != first.pk and (second.challenger_id, second.defender_id) == (
        t["cid"].pk,
        t["ann"].pk,
    )
    assert Event.objects.get(kind="mob_result").challenge_id == first.pk
    assert Event.objects.get(kind="mob_test", data__defender=t["ann"].pk).challenge_id == second.pk
    assert lost(t) == [("Ann", "Ann1"), ("Bob", "Bob1")]
    assert health(t, "bob") == 1


@pytest.mark.django_db
def test_what_mob_moves_cost_in_queries(django_assert_max_num_queries) -> None:
    """A choice that closes nothing reads no sheet; a bid reads them all
    (six queries); the throw that settles a target adds three to a
    challenge's (the scene, the other attackers' lost Traits, the wound)."""
    from django.db import connection

    # PostgreSQL: a savepoint, the session row locked FOR SHARE, the characters FOR UPDATE.
    extra = 3 if connection.vendor == "postgresql" else 0
    t = mob_table()
    mob = opened(t)
    with django_assert_max_num_queries(8 + extra):
        by(t, "ann", services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    for name in ("bob", "cid"):
        by(t, name, services.mob_choose, mob_id=mob.pk, target=t["dee"].pk)
    by(t, "dee", services.mob_choose, mob_id=mob.pk, target=None)
    by(t, "ann", services.mob_pick_leader, mob_id=mob.pk, leader=t["bob"].pk)
    with django_assert_max_num_queries(14 + extra):
        by(t, "ann", services.mob_bid, mob_id=mob.pk, bids=["Ann1"])
    by(t, "bob", services.mob_bid, mob_id=mob.pk, bids=["Bob1"])
    by(t, "cid", services.mob_bid, mob_id=mob.pk, bids=["Cid1"])
    by(t, "dee", services.mob_bid, mob_id=mob.pk, bids=["Dee1", "Dee2", "Dee3"])
    challenge = MobScene.objects.get().challenge
    by(t, "bob", services.challenge_throw, challenge_id=challenge.pk, throw="rock")
    with django_assert_max_num_queries(13 + extra):
        by(t, "dee", services.challenge_throw, challenge_id=challenge.pk, throw="scissors")
    assert MobScene.objects.get().stage == MobStage.SETTLED


@pytest.mark.django_db
def test_a_narrator_ends_a_mob_scene_in_a_time_out_and_its_test_with_it() -> None:
    t = mob_table()
    challenge = three_on_dee(t)
    services.session_time_out(session=t["session"], user=t["narrator"], msg_id=mid())
    with pytest.raises(services.ActionRefused):
        services.mob_void(
            mob_id=MobScene.objects.get().pk, reason="x", user=t["dee"].player, msg_id=mid()
        )
    services.mob_void(
        mob_id=MobScene.objects.get().pk, reason="Ruled", user=t["narrator"], msg_id=mid()
    )
    mob = MobScene.objects.get()
    assert mob.stage == MobStage.SETTLED and mob.state["targets"][0]["outcome"] == "void"
    challenge.refresh_from_db()
    assert challenge.outcome == "void" and lost(t) == []
    assert Event.objects.filter(kind="mob_voided", data__reason="Ruled").count() == 1


@pytest.mark.django_db
def test_a_screen_lists_the_scenes_going_on_first_then_the_latest_settled() -> None:
    """Issue 14: the newest scenes by creation hid a scene still going on
    behind newer ones (and its narrator's buttons), and every scene settled
    after that many newer began. Going on first, then the latest settled;
    the heartbeat's ``mob`` parts count the very same scenes."""
    from challenges import heartbeat, views

    t = mob_table()
    going = opened(t)  # the oldest, going on all along
    settled = []
    for _ in range(heartbeat.MOBS_SHOWN + 1):
        scene = opened(t)
        services.mob_void(mob_id=scene.pk, reason="ended", user=t["narrator"], msg_id=mid())
        settled.append(MobScene.objects.get(pk=scene.pk))
    shown = views.mob_views(t["session"], None)
    newest_settled = settled[::-1][: heartbeat.MOBS_SHOWN - 1]
    assert [m.pk for m in shown] == [going.pk] + [m.pk for m in newest_settled]
    assert [m.settled for m in shown] == [False] + [True] * (heartbeat.MOBS_SHOWN - 1)
    parts = heartbeat.dashboard_parts(t["session"].pk, views.DASHBOARD_LIMIT)
    assert parts["mob"] == heartbeat.mob_part(shown)
    hers = views.mob_views(t["session"], t["ann"].pk)
    assert [m.pk for m in hers] == [m.pk for m in shown]
    assert heartbeat.play_parts(t["ann"].pk, t["session"].pk)["mob"] == heartbeat.mob_part(hers)
    snapshot = heartbeat.session_play_parts(t["session"].pk)[1]
    assert snapshot[t["ann"].pk]["mob"] == heartbeat.mob_part(hers)
