"""Issue 14: a narrator's roster sums a MET character's Traits in the
database (``characters.services.roster_sheets``) instead of building every
Trait line; what a roster row shows must be what her whole sheet says."""

import itertools

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from challenges.models import TraitLoss
from challenges.rules import Category, HealthLevel
from characters.models import Character, Chronicle, GameSession, Presence, Trait
from characters.services import RosterSheet, character_sheets, roster_sheets
from tests.factories import evening

pytestmark = pytest.mark.django_db


@pytest.fixture
def game(db):
    return evening()


_chronicles = itertools.count(1)  # each example its own chronicle (names are unique)

# One Trait: (category, count on the sheet, negative, copies lost tonight).
TRAITS = st.lists(
    st.tuples(
        st.sampled_from(list(Category)),
        st.integers(1, 4),
        st.booleans(),
        st.integers(0, 6),  # more than its count: a loss rule never allows it, the sums cap it
    ),
    max_size=8,
)
SEAT = st.one_of(
    st.none(),  # not seated: her sheet's health, "present"
    st.tuples(st.sampled_from(list(HealthLevel)), st.sampled_from(list(Presence.Status))),
)


def _shown(sheet) -> tuple:
    """What a roster row and a health clock read of a sheet."""
    return (
        sheet.health,
        sheet.status,
        sheet.on_break,
        sheet.trait_sheet,
        [(c.category, c.label, c.held, c.lost) for c in sheet.categories],
        [sheet.held(category) for category in Category],
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    people=st.lists(st.tuples(TRAITS, SEAT), min_size=1, max_size=4),
    ruleset=st.sampled_from(["met_classic", "ukm"]),
)
def test_a_roster_sheet_shows_what_the_whole_sheet_says(people, ruleset):
    chronicle = Chronicle.objects.create(name=f"Roster {next(_chronicles)}", ruleset=ruleset)
    other = GameSession.objects.create(
        chronicle=chronicle, name="Last night", number=1, ended_at=timezone.now()
    )
    session = GameSession.objects.create(chronicle=chronicle, name="Tonight", number=2)
    characters = []
    for index, (traits, seat) in enumerate(people):
        character = Character.objects.create(
            chronicle=chronicle, name=f"Kindred {index}", health=HealthLevel.BRUISED
        )
        characters.append(character)
        if seat is not None:
            Presence.objects.create(
                session=session, character=character, health=seat[0], status=seat[1]
            )
        for number, (category, count, negative, lost) in enumerate(traits):
            # Two Traits alike but for their names: their losses must not mix.
            trait = Trait.objects.create(
                character=character,
                name=f"Trait {number}",
                category=category,
                count=count,
                negative=negative,
            )
            for _ in range(lost):
                TraitLoss.objects.create(session=session, character=character, trait=trait)
            # Another session's loss is not tonight's.
            TraitLoss.objects.create(session=other, character=character, trait=trait)
    whole = character_sheets(characters, session, risks=False)
    roster = roster_sheets(characters, session)
    assert set(roster) == {c.pk for c in characters}
    for character in characters:
        assert isinstance(roster[character.pk], RosterSheet)
        assert _shown(roster[character.pk]) == _shown(whole[character.pk])


def test_a_roster_sheet_caps_each_traits_losses_at_its_count(game):
    """Two Physical Traits of 2: three losses of one and none of the other
    leave 2 held (not 1), 2 lost; three queries however many characters."""
    helen, session = game["helen"], game["session"]
    before = roster_sheets([helen], session)[helen.pk].held(Category.PHYSICAL)
    first = Trait.objects.create(character=helen, name="Dogged", category="physical", count=2)
    Trait.objects.create(character=helen, name="Tireless", category="physical", count=2)
    for _ in range(3):
        TraitLoss.objects.create(session=session, character=helen, trait=first)
    sheet = roster_sheets([helen], session)[helen.pk]
    physical = next(c for c in sheet.categories if c.category == Category.PHYSICAL)
    assert (physical.held, physical.lost) == (before + 2, 2)


def test_a_roster_of_many_costs_three_queries(game, django_assert_num_queries):
    session = GameSession.objects.select_related("chronicle").get(pk=game["session"].pk)
    people = list(Character.objects.filter(chronicle=session.chronicle))
    assert len(people) >= 2
    with django_assert_num_queries(3):
        sheets = roster_sheets(people, session)
    assert len(sheets) == len(people)
