"""Issue 13 polish: the admin's character list shows each character in her
sheet's own terms. A Trait sheet counts its Traits by category and names its
MET health level; a test-pool sheet (``bns``) gives its three Attributes and
no MET health level; a sheet of dots (``storytelling``) gives "—" for all four
(three Attributes a category, Health boxes marked on the presence)."""

import pytest
from bs4 import BeautifulSoup

from challenges.rules import Category
from characters.models import Character, Chronicle, Trait
from tests.characters.test_admin import character_url as _url
from tests.factories import make_iris, make_rosa

pytestmark = pytest.mark.django_db

COLUMNS = ["physical", "social", "mental", "health_level"]


def _helen(chronicle: Chronicle) -> Character:
    helen = Character.objects.create(chronicle=chronicle, name="Helen", health=1)
    Trait.objects.create(character=helen, name="Ferocious", category=Category.PHYSICAL, count=2)
    Trait.objects.create(character=helen, name="Witty", category=Category.SOCIAL)
    return helen


@pytest.mark.parametrize(
    ("ruleset", "make", "shown"),
    [
        (Chronicle.Ruleset.MET_CLASSIC, _helen, [2, 1, 0, "Bruised"]),
        (Chronicle.Ruleset.BNS, make_rosa, [7, 3, 4, "—"]),
        (Chronicle.Ruleset.STORYTELLING, make_iris, ["—", "—", "—", "—"]),
    ],
)
def test_the_character_list_shows_what_her_sheet_kind_uses(
    admin_client, admin_user, ruleset, make, shown
):
    chronicle = Chronicle.objects.create(name="Tonight", ruleset=ruleset)
    chronicle.narrators.add(admin_user)
    character = make(chronicle)
    response = admin_client.get(_url("changelist"))
    cl = response.context["cl"]
    row = next(r for r in cl.result_list if r.pk == character.pk)
    assert [getattr(cl.model_admin, name)(row) for name in COLUMNS] == shown
    # The page itself: her row's cells, as the narrator reads them.
    page = BeautifulSoup(response.content, "html.parser")
    cells = [page.select_one(f"td.field-{name}").get_text(strip=True) for name in COLUMNS]
    assert cells == [str(value) for value in shown]


def test_a_character_of_an_unknown_ruleset_keeps_the_trait_sheet_columns(admin_client):
    chronicle = Chronicle.objects.create(name="Odd", ruleset="homebrew")
    helen = _helen(chronicle)
    cl = admin_client.get(_url("changelist")).context["cl"]
    row = next(r for r in cl.result_list if r.pk == helen.pk)
    assert [getattr(cl.model_admin, name)(row) for name in COLUMNS] == [2, 1, 0, "Bruised"]
