"""The consistency check (``manage.py checkstate``) reads every move of an
ordinary evening as legitimate, each kind played through the services as
the players and narrators play it, and still finds each break planted in
what those moves wrote."""

from __future__ import annotations

import uuid

import pytest

from challenges import services
from challenges.consistency import find_inconsistencies
from challenges.models import ClientAction, MobScene, PreparedStatic, TraitLoss
from characters.models import Trait
from tests.challenges.test_bns_flow import _by_night
from tests.challenges.test_mob_services import by, mob_table, three_on_dee, throws
from tests.factories import (
    bns_combat_evening,
    make_character,
    make_user,
    narrated_chronicle,
    opposed_challenge,
    story_fight_evening,
)

pytestmark = pytest.mark.django_db


def _id() -> str:
    return uuid.uuid4().hex


def _trait(character, name: str) -> Trait:
    return Trait.objects.get(character=character, name=name)


def _ruling(game, challenge, character, trait: str, *, give_back: bool):
    return services.challenge_trait_ruling(
        challenge_id=challenge.pk,
        character_id=character.pk,
        trait_id=_trait(character, trait).pk,
        give_back=give_back,
        reason="ruled at the table",
        user=game["narrator"],
        msg_id=_id(),
    )


@pytest.fixture
def ruled(game):
    """Helen beats Grady (he loses Resilient); a narrator gives it back and
    takes away Helen's Quick on that challenge; she takes Brawny away on an
    open challenge, which the session's end then voids; a third challenge
    is called to a narrator, the call dismissed, called again and settled."""
    session, helen, grady = game["session"], game["helen"], game["grady"]
    won = opposed_challenge(
        session, helen, grady, bid="Ferocious", answer="Resilient", throws=("paper", "rock")
    )
    _ruling(game, won, grady, "Resilient", give_back=True)
    _ruling(game, won, helen, "Quick", give_back=False)
    open_ = opposed_challenge(session, helen, grady, bid="Ferocious")
    _ruling(game, open_, helen, "Brawny", give_back=False)
    called = opposed_challenge(session, grady, helen, bid="Tough", answer="Quick")
    for move in ("call", "dismiss", "call", "settle"):
        if move == "call":
            services.challenge_call_narrator(
                challenge_id=called.pk,
                character=helen,
                reason="he threw late",
                user=game["helen_player"],
                msg_id=_id(),
            )
        elif move == "dismiss":
            services.challenge_dismiss_call(
                challenge_id=called.pk, user=game["narrator"], msg_id=_id()
            )
        else:
            services.challenge_settle(
                challenge_id=called.pk,
                winner="defender",
                reason="he threw late",
                user=game["narrator"],
                msg_id=_id(),
            )
    services.session_end(session=session, user=game["narrator"], msg_id=_id())
    services.session_start(chronicle=game["chronicle"], user=game["narrator"], msg_id=_id())
    return {**game, "won": won, "open": open_, "called": called}


def test_traits_given_back_and_taken_away_and_settled_calls_are_consistent(ruled):
    assert TraitLoss.objects.filter(challenge=ruled["won"]).count() == 1  # Quick, taken
    assert TraitLoss.objects.filter(challenge=ruled["open"]).count() == 1  # Brawny, taken
    assert find_inconsistencies() == []
    assert find_inconsistencies(ruled["session"].pk) == []


def test_a_lost_trait_missing_beside_a_give_back_of_another_is_found(ruled):
    assert find_inconsistencies() == []
    TraitLoss.objects.filter(challenge=ruled["won"]).delete()  # Quick, never given back
    problems = find_inconsistencies()
    assert any(f"challenge #{ruled['won'].pk}: lost Traits []" in p for p in problems), problems


def test_a_second_lost_copy_beside_a_taken_one_is_found(ruled):
    assert find_inconsistencies() == []
    TraitLoss.objects.create(
        session=ruled["session"],
        character=ruled["helen"],
        trait=_trait(ruled["helen"], "Brawny"),
        challenge=ruled["open"],
    )
    problems = find_inconsistencies()
    assert any(f"challenge #{ruled['open'].pk}: lost Traits" in p for p in problems), problems


def test_a_ruling_id_without_its_ruling_is_found(ruled):
    assert find_inconsistencies() == []
    ClientAction.objects.create(user=ruled["narrator"], msg_id="lost", action="challenge.settle")
    problems = find_inconsistencies()
    assert any("2 'challenge.settle' action ids but 1 moves applied" in p for p in problems)


def _overbid_pair(chronicle):
    """Godfrey (Brawny ×10, Relentless ×5) and Connor (Quick ×5, Dodge 2,
    Negative Clumsy)."""
    godfrey = make_character(
        chronicle,
        "Godfrey",
        make_user("godfrey"),
        traits=[("Brawny", "physical", 10), ("Relentless", "physical", 5)],
    )
    connor = make_character(
        chronicle,
        "Connor",
        make_user("connor"),
        traits=[("Quick", "physical", 5)],
        negatives=[("Clumsy", "physical", 1)],
        abilities=[("Dodge", 2)],
    )
    return godfrey, connor


def _play(character, service, challenge, **fields):
    return service(
        challenge_id=challenge.pk,
        character=character,
        user=character.player,
        msg_id=_id(),
        **fields,
    )


def test_retests_answers_accepts_and_negative_traits_are_consistent():
    table = narrated_chronicle()
    session, narrator = table["session"], table["narrator"]
    godfrey, connor = _overbid_pair(table["chronicle"])
    # An overbid, answered, and its second test.
    lost = opposed_challenge(
        session, godfrey, connor, bid="Brawny", answer="Quick", throws=("scissors", "rock")
    )
    _play(godfrey, services.challenge_retest, lost, kind="overbid", traits=["Relentless"])
    _play(connor, services.challenge_answer, lost)
    for who in (godfrey, connor):
        _play(who, services.challenge_throw, lost, throw="rock")
    # Negative Traits named and paid, a forced retest, then a lost test accepted.
    named = opposed_challenge(session, godfrey, connor, bid="Brawny", answer="Quick")
    _play(godfrey, services.challenge_negative, named, name="clumsy")
    _play(connor, services.challenge_add_bids, named, bids=["Quick"])
    for who, throw in ((godfrey, "paper"), (connor, "scissors")):
        _play(who, services.challenge_throw, named, throw=throw)
    services.challenge_force_retest(
        challenge_id=named.pk, reason="a late throw", user=narrator, msg_id=_id()
    )
    for who, throw in ((godfrey, "paper"), (connor, "scissors")):
        _play(who, services.challenge_throw, named, throw=throw)
    _play(godfrey, services.challenge_accept, named)
    assert find_inconsistencies() == []


def test_prepared_statics_and_their_objects_retests_are_consistent():
    table = narrated_chronicle()
    door = PreparedStatic.objects.create(
        chronicle=table["chronicle"],
        name="the vault door",
        category="physical",
        difficulty=3,
        may_retest=True,
        may_overbid=True,
    )
    for n, throw in enumerate(("rock", "paper", "scissors", "rock")):
        who = make_character(
            table["chronicle"],
            f"Guest {n}",
            make_user(f"guest{n}"),
            traits=[("Quick", "physical", 2)],
        )
        opened = services.prepared_static_open(
            prepared=door, character=who, user=who.player, msg_id=_id()
        )
        _play(who, services.challenge_bid, opened, bids=["Quick"])
        _play(who, services.challenge_throw, opened, throw=throw)
    assert find_inconsistencies() == []


def test_mob_scenes_their_tests_and_a_voided_scene_are_consistent():
    t = mob_table()
    test = three_on_dee(t)
    throws(t, test, "scissors", "rock")  # Dee wins: each attacker loses his bid
    by(t, "dee", services.mob_hurt, mob_id=MobScene.objects.get().pk, attacker=t["cid"].pk)
    scene = services.mob_open(
        session=t["session"],
        characters=[t["ann"], t["bob"], t["cid"], t["dee"]],
        category="physical",
        user=t["narrator"],
        msg_id=_id(),
    )
    for name in ("ann", "bob", "cid"):
        by(t, name, services.mob_choose, mob_id=scene.pk, target=t["dee"].pk)
    services.mob_close_choosing(mob_id=scene.pk, user=t["narrator"], msg_id=_id())
    by(t, "ann", services.mob_pick_leader, mob_id=scene.pk, leader=t["bob"].pk)
    for name in ("ann", "bob", "cid"):
        by(t, name, services.mob_bid, mob_id=scene.pk, bids=[f"{name.title()}2"])
    by(t, "dee", services.mob_bid, mob_id=scene.pk, bids=["Dee2", "Dee3", "Dee4"])
    services.mob_void(mob_id=scene.pk, reason="the fire alarm", user=t["narrator"], msg_id=_id())
    assert find_inconsistencies() == []
    # The other attackers' lost bids are the test's rows: one deleted is found.
    TraitLoss.objects.filter(challenge=test, character=t["ann"]).delete()
    problems = find_inconsistencies()
    assert any(f"challenge #{test.pk}: lost Traits" in p for p in problems), problems


def test_bns_challenges_accepted_settled_and_ended_are_consistent():
    g = _by_night()
    rosa, tooth, narrator = g["rosa"], g["tooth"], g["narrator"]

    def opened(defender):
        return services.bns_open(
            session=g["session"],
            attacker=rosa,
            defender=defender,
            attack="brawl",
            user=rosa.player,
            msg_id=_id(),
        )

    accepted = opened(tooth)
    services.bns_answer(
        challenge_id=accepted.pk, character=tooth, defence="dodge", user=tooth.player, msg_id=_id()
    )
    for who, throw in ((rosa, "rock"), (tooth, "scissors")):
        _play(who, services.bns_throw, accepted, throw=throw)
    _play(tooth, services.bns_accept, accepted)
    services.bns_settle(
        challenge_id=opened(tooth).pk, winner="defender", reason="r", user=narrator, msg_id=_id()
    )
    opened(g["thug"])  # an NPC answers by himself
    services.session_end(session=g["session"], user=narrator, msg_id=_id())
    assert find_inconsistencies() == []


def test_bns_combat_rounds_are_consistent():
    t = bns_combat_evening()
    row = services.combat_start(
        session=t["session"],
        characters=[t["rosa"], t["jack"], t["tooth"]],
        user=t["narrator"],
        msg_id=_id(),
    )
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=_id())
    services.combat_act(
        combat_id=row.pk,
        character=t["rosa"],
        kind="simple",
        what="move",
        steps=2,
        user=t["rosa_player"],
        msg_id=_id(),
    )
    services.combat_end(combat_id=row.pk, user=t["narrator"], msg_id=_id())
    assert find_inconsistencies() == []


def test_storytelling_fights_and_health_track_rulings_are_consistent(dice):
    t = story_fight_evening()
    dice(1, 5, 9)
    row = services.fight_start(
        session=t["session"],
        characters=[t["ada"], t["bram"], t["cleo"]],
        user=t["narrator"],
        msg_id=_id(),
    )
    dice(8, 10, 2, 9)
    services.fight_attack(
        fight_id=row.pk,
        character=t["cleo"],
        target_id=t["bram"].pk,
        kind="unarmed",
        user=t["cleo_player"],
        msg_id=_id(),
    )
    services.fight_end_turn(fight_id=row.pk, user=t["narrator"], msg_id=_id())
    services.fight_end(fight_id=row.pk, user=t["narrator"], msg_id=_id())
    for service, extra in (
        (services.track_mark, {"points": 2, "damage_type": "lethal"}),
        (services.track_heal, {"points": 1}),
    ):
        service(
            session=t["session"],
            character=t["ada"],
            reason="a fall",
            user=t["narrator"],
            msg_id=_id(),
            **extra,
        )
    services.session_start(chronicle=t["chronicle"], user=t["narrator"], msg_id=_id())
    assert find_inconsistencies() == []
    ClientAction.objects.create(user=t["narrator"], msg_id="lost", action="track.mark")
    assert any("2 'track.mark' action ids but 1 moves applied" in p for p in find_inconsistencies())
