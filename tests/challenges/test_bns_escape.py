"""Issue 12 (s12 finish): a grappled character escapes from the phone,
through the services. seeds/002 "Combat Maneuvers", Grapple: "She can
escape from your Grapple by using a simple action and besting you in an
opposed challenge (Brawl or Melee). Upon escaping, the target regains full
use of her standard action. (She doesn't have to wait until the next round
to use it.)" Rosa (7) grapples Jack (6) on her initiative; on his, Jack
tries to escape."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from challenges import services
from challenges.history import session_history
from challenges.models import Challenge, Combat
from challenges.rules import Category, RulesError, Side
from challenges.services import ActionRefused
from challenges.views.bns import bns_card
from challenges.views.phone import play_context
from characters.models import Presence
from tests.challenges.test_bns_in_combat import attack
from tests.challenges.test_bns_maneuvers_in_play import combat, hit, mid, simple_action, view
from tests.challenges.test_combat import start
from tests.factories import bns_combat_evening


@pytest.fixture
def t(db):
    """Vesper, Rosa (Physical 7, Strength focus), Jack (Physical 6), Tooth."""
    return bns_combat_evening()


def grappled(t) -> Combat:
    """A combat of Rosa and Jack where Rosa's Grapple won: Jack, grappled
    by Rosa, is acting (his standard and simple actions left)."""
    row = start(t, "rosa", "jack")
    hit(t, "rosa", "jack", attack="brawl", maneuvers=["grapple:focus"], won=True)
    services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    assert combat(row).fighter(t["jack"].pk).grappled_by == (t["rosa"].pk,)
    return row


def escape(t, *, won: bool, attack: str = "brawl") -> Challenge:
    return hit(t, "jack", "rosa", attack=attack, escape=True, won=won)


@pytest.mark.parametrize(
    ("won", "grappled_by", "words"),
    [
        (True, (), "You lose to Jack: Jack escapes your grapple."),
        (False, ("rosa",), "You win: Jack is still in your grapple."),
    ],
    ids=["won", "lost"],
)
def test_an_escape_takes_her_simple_action_and_a_win_frees_her_at_once(
    t, won: bool, grappled_by: tuple[str, ...], words: str
) -> None:
    row = grappled(t)
    challenge = escape(t, won=won)
    jack = combat(row).fighter(t["jack"].pk)
    assert jack.grappled_by == tuple(t[n].pk for n in grappled_by)
    assert jack.simple_used and not jack.standard_used
    card = bns_card(challenge, Side.DEFENDER)
    assert card.kind_label == "Grapple escape (Brawl)"
    assert card.outcome_text.startswith(words.split(":")[0]) and words in card.outcome_text
    assert Presence.objects.get(character=t["rosa"]).damage == 0  # an escape hurts nobody
    assert combat(row).targeted(t["rosa"].pk, Category.PHYSICAL) == 0  # nor counts as an attack


def test_a_freed_character_uses_her_standard_action_in_the_same_round(t) -> None:
    row = grappled(t)
    escape(t, won=True)
    turn = combat(row).turn
    challenge = attack(t, "jack", "rosa", attack="brawl")  # his standard action, this round
    assert challenge.pk and combat(row).turn == turn
    assert combat(row).fighter(t["jack"].pk).standard_used


def test_a_still_grappled_character_may_not_take_a_physical_standard_action(t) -> None:
    grappled(t)
    escape(t, won=False)
    with pytest.raises(RulesError, match="grappled"):
        attack(t, "jack", "rosa", attack="brawl")


@pytest.mark.parametrize(
    ("setup", "kwargs", "error", "words"),
    [
        ("none", {}, ActionRefused, "Rosa is not grappling you."),
        ("outside", {}, ActionRefused, "Rosa is not grappling you."),
        ("grappled", {"attack": "firearms"}, RulesError, "Brawl or Melee"),
        ("grappled", {"maneuvers": ["disarm"]}, RulesError, "Brawl or Melee"),
        ("simple used", {}, RulesError, "simple action"),
    ],
    ids=["not grappled", "outside a combat", "firearms", "a maneuver", "simple action used"],
)
def test_a_wrong_escape_is_refused_and_changes_nothing(t, setup, kwargs, error, words) -> None:
    row = None
    if setup == "none":
        row = start(t, "jack", "vesper")  # Vesper acts first: Jack next
        services.combat_advance(combat_id=row.pk, user=t["narrator"], msg_id=mid())
    elif setup != "outside":
        row = grappled(t)
    if setup == "simple used":
        simple_action(t, row, "jack", "other")
    target = "vesper" if setup == "none" else "rosa"
    if setup == "none":
        words = "Vesper is not grappling you."
    count = Challenge.objects.count()
    version = None if row is None else Combat.objects.get(pk=row.pk).version
    with pytest.raises(error, match=words):
        attack(t, "jack", target, **{"attack": "brawl", **kwargs}, escape=True)
    assert Challenge.objects.count() == count
    if row is not None:
        assert Combat.objects.get(pk=row.pk).version == version


def test_her_phone_offers_the_escape_from_each_grappler_with_her_pool(t) -> None:
    row = grappled(t)
    assert view(row, t["rosa"].pk).escape_from == []
    context = play_context(t["jack"], t["session"], with_opponents=False)
    (shown,) = context["combats"]
    assert shown.escape_from == [(t["rosa"].pk, "Rosa")]
    assert shown.escape_attacks == [("brawl", "Brawl", 6)]  # Physical 6 + Brawl 0
    html = render_to_string("challenges/_combat_phone.html", {"combats": [shown]})
    assert "Escape from <bdi>Rosa</bdi>'s grapple: Brawl (6, simple action)" in html
    assert 'name="escape" value="true"' in html and 'data-bools="escape"' in html
    escape(t, won=True)  # her simple action is spent: no second try this round
    context = play_context(t["jack"], t["session"], with_opponents=False)
    assert context["combats"][0].escape_from == []


def test_the_history_tells_the_escape(t) -> None:
    grappled(t)
    escape(t, won=True)
    texts = [e.text for e in session_history(t["session"]).entries]
    assert "Jack tries to escape Rosa's grapple (brawl)" in texts
    assert any(text.endswith("Jack is free of the grapple") for text in texts)
