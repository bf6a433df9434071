"""The "Challenge someone" form under the chronicle's rule options: two bids
when she must bid two (``met_classic`` Bruised or Wounded, seeds/000
"Health"), Surprise only where the ruleset has it (``ukm``, seeds/004)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.template import engines
from django.template.loader import render_to_string

from challenges.rules import Category, HealthLevel
from challenges.views.phone import (
    play_context,
    sheet_oob,
    start_bids_key,
    start_options,
)
from challenges.views.shared import shared_renders
from characters.models import Presence
from characters.services import character_sheet


def _form(game, name: str = "grady") -> str:
    context = play_context(game[name], game["session"])
    return render_to_string("challenges/_start.html", context)


def _hurt(game, level: int) -> None:
    Presence.objects.update_or_create(
        session=game["session"], character=game["grady"], defaults={"health": level}
    )


@pytest.mark.django_db
def test_a_healthy_character_challenges_with_one_tap_on_a_trait(game):
    html = _form(game)
    assert 'aria-label="Challenge with Tough (Physical)"' in html
    assert 'type="checkbox" name="bids"' not in html and 'name="surprise"' not in html
    assert 'name="power"' not in html


@pytest.mark.django_db
@pytest.mark.parametrize("level, label", [(1, "Bruised"), (2, "Wounded")])
def test_a_hurt_met_classic_character_bids_two_traits(game, level, label):
    _hurt(game, level)
    html = _form(game)
    assert f"{label}: bid two Traits, then tap Challenge." in html
    # Resilient ×2, Tough ×3 and Witty, with a second box for each Trait held twice or more.
    assert html.count('type="checkbox" name="bids"') == 5
    assert "<bdi>Tough</bdi> again" in html and "<bdi>Witty</bdi> again" not in html
    assert 'name="category" value="physical"' in html and 'data-lists="bids"' in html
    assert "Challenge with Tough (Physical)" not in html


@pytest.mark.django_db
def test_under_ukm_a_bruised_character_bids_one_and_may_declare_surprise(game):
    game["chronicle"].ruleset = "ukm"
    game["chronicle"].save()
    game["session"].refresh_from_db()
    _hurt(game, 1)
    html = _form(game)
    assert 'aria-label="Challenge with Tough (Physical)"' in html
    assert 'name="surprise"' in html and 'data-optional="surprise weapon power"' in html
    assert 'name="power"' in html


@pytest.mark.django_db
def test_without_a_session_the_form_offers_one_bid_and_no_surprise(game):
    options = start_options(character_sheet(game["grady"], None))
    assert options["bids_needed"] == 1 and not options["surprise_allowed"]


@pytest.mark.django_db
def test_the_bid_buttons_sent_with_a_changed_sheet_still_ask_two_traits(game):
    """views.sheet_oob (a card's move changed her Traits at risk) renders
    with start_options: the rule is the ruleset's (rules.bids_required), not
    copied into the template."""
    _hurt(game, 1)
    sheet = character_sheet(game["grady"], game["session"])
    html = sheet_oob(sheet)
    assert "Bruised: bid two Traits, then tap Challenge." in html
    assert 'name="category" value="physical"' in html
    game["chronicle"].ruleset = "ukm"
    game["chronicle"].save()
    sheet = character_sheet(game["grady"], type(game["session"]).objects.get())
    html = sheet_oob(sheet)
    assert "bid two" not in html and "Challenge with Tough (Physical)" in html


#: What ``play_sheet_oob.html`` was before ``views.sheet_oob`` kept the bid buttons.
OLD_SHEET_OOB = engines["django"].from_string(
    '{% include "challenges/_sheet.html" with oob=True %}'
    '{% include "challenges/_start_bids.html" with oob=True %}\n'
)


@pytest.mark.django_db
def test_the_sheet_sent_with_a_card_is_byte_for_byte_what_it_was(game):
    """views.sheet_oob renders the bid buttons once per start_bids_key: for
    sheets whose buttons are alike (at risk, still free) or not (none free,
    two to bid, counts shown), in turn, it sends what play_sheet_oob.html did."""
    base = character_sheet(game["helen"], game["session"])
    sheets = []
    for health in (HealthLevel.HEALTHY, HealthLevel.BRUISED):
        sheet = replace(base, health=health)
        quick = sheet.with_risk(90, Category.PHYSICAL, [(None, "Quick")])
        both = quick.with_risk(91, Category.PHYSICAL, [(None, "Ferocious"), (None, "Ferocious")])
        sheets += [sheet, quick, both, sheet]
    shared_renders.items.clear()
    keys = []
    for sheet in sheets:
        options = start_options(sheet)
        keys.append(start_bids_key(sheet, options))
        old = OLD_SHEET_OOB.render({"sheet": sheet, "session": game["session"], **options})
        assert sheet_oob(sheet) == old
    assert "Bruised: bid two Traits" in sheet_oob(sheets[-1])
    assert keys[0] == keys[1] != keys[2]  # a copy at risk, another still free: the same buttons
    assert keys[4] != keys[5]  # two to bid: the free copies are counted


@pytest.mark.django_db
def test_a_surprised_defender_is_offered_only_her_stamina_based_traits(game):
    """seeds/004 Surprise: she defends with Stamina-based Physical Traits only."""
    from challenges import services
    from challenges.views.phone import phone_challenge
    from characters.models import Trait

    game["chronicle"].ruleset = "ukm"
    game["chronicle"].save()
    Trait.objects.filter(character=game["grady"], name="Tough").update(stamina=True)
    session = type(game["session"]).objects.get()
    challenge = services.challenge_open(
        session=session,
        challenger=game["helen"],
        defender=game["grady"],
        category="physical",
        bids=["Quick"],
        surprise=True,
        user=game["helen_player"],
        msg_id="surprise-1",
    )
    sheet = character_sheet(game["grady"], session)
    card = phone_challenge(game["grady"], session, challenge.pk, sheet)
    assert card is not None and [t.name for t in card.bid_choices] == ["Tough"]
    html = render_to_string("challenges/_card.html", {"c": card})
    assert "Surprise: <bdi>Helen</bdi> attacks by surprise." in html
