"""Issue 11, section 2: a mob scene played through the UI of the real app
(Daphne, websockets, Debian's chromium) on four 360 px phones (three
attackers, one defender) and the 1024x768 tablet. seeds/000 "The Mob Scene":
the narrator starts it and closes the choosing, nobody sees another's target
before that, the attackers pick a leader, each bids one Trait, the defender
one per attacker, the leader's test is an ordinary challenge card, and the
dashboard shows the whole scene with whose move it is."""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.browser.test_evening import AT_ONCE, SHOTS, Screen, assert_usable, log_in

pytestmark = pytest.mark.browser


def _copy_row(db, table: str, where: str, args: tuple, **changes) -> int:
    """Insert a copy of the one row of ``table`` matching ``where`` with
    ``changes``; returns the new row's id."""
    columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})") if row[1] != "id"]
    values = [f"? AS {c}" if c in changes else c for c in columns]
    args = tuple(changes[c] for c in columns if c in changes) + args
    sql = (
        f"INSERT INTO {table} ({', '.join(columns)}) "
        f"SELECT {', '.join(values)} FROM {table} WHERE {where}"
    )
    return db.execute(sql, args).lastrowid


def _jo(live) -> None:
    """Jo, a fourth present character with Helen's Traits, played by user
    "jo" (Helen's password hash: she logs in with "pw-helen")."""
    with sqlite3.connect(live.db) as db:
        user = _copy_row(db, "auth_user", "username = ?", ("helen",), username="jo")
        jo = _copy_row(
            db, "characters_character", "id = ?", (live.ids["helen"],), name="Jo", player_id=user
        )
        for (trait,) in db.execute(
            "SELECT id FROM characters_trait WHERE character_id = ?", (live.ids["helen"],)
        ).fetchall():
            _copy_row(db, "characters_trait", "id = ?", (trait,), character_id=jo)
        _copy_row(
            db, "characters_presence", "character_id = ?", (live.ids["helen"],), character_id=jo
        )


def _log_in_as(page, url: str, username: str, password: str) -> None:
    page.goto(url)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def _mob(screen: Screen):
    return screen.page.locator("article.mob")


def test_three_attackers_and_a_defender_settle_a_mob_scene(live, phone, tablet) -> None:
    _jo(live)
    helen, grady, ines, jo = (Screen(phone()) for _ in range(4))
    narrator = Screen(tablet())
    log_in(helen.page, live("/accounts/login/"), "helen")
    grady.page.goto(live(live.ids["grady_join"]))
    log_in(ines.page, live("/accounts/login/"), "ines")
    _log_in_as(jo.page, live("/accounts/login/"), "jo", "pw-helen")
    for screen in (helen, grady, ines, jo):
        screen.connected()
    log_in(narrator.page, live("/accounts/login/?next=/narrate/"), "narrator")
    narrator.connected()

    # The narrator starts it: four characters, Physical, an attack.
    narrator.tap(narrator.page.get_by_text("Start a mob scene…", exact=True))
    for name in ("Helen", "Grady", "Ines", "Jo"):
        narrator.page.get_by_role("checkbox", name=name, exact=True).check()
    narrator.tap(narrator.control("button", "Start a mob scene"))
    scene = narrator.page.locator("#mob-dashboard article.mob")
    expect(scene).to_contain_text("Choosing targets", timeout=AT_ONCE)
    expect(scene).to_contain_text("0 of 4 have chosen")

    # Three point at Jo; nobody sees whom until the choosing closes.
    for screen in (helen, grady, ines):
        expect(_mob(screen)).to_contain_text("Choose my target", timeout=AT_ONCE)
        _mob(screen).get_by_role("combobox").select_option(label="Jo")
        screen.tap(_mob(screen).get_by_role("button", name="Choose my target"))
        expect(_mob(screen)).to_contain_text("You chose: Jo", timeout=AT_ONCE)
    expect(scene).to_contain_text("3 of 4 have chosen", timeout=AT_ONCE)
    expect(_mob(jo)).not_to_contain_text("→")
    expect(scene).not_to_contain_text("→")
    jo.page.screenshot(path=f"{SHOTS}/phone-mob-choosing.png", full_page=True)
    assert_usable(jo)
    narrator.tap(scene.get_by_role("button", name="Close the choosing"))
    expect(scene).to_contain_text("Helen → Jo", timeout=AT_ONCE)
    expect(scene).to_contain_text("Jo → nobody")
    expect(scene).to_contain_text("Whose move: Grady, Helen, Ines")

    # The attackers pick Helen to lead; each bids one Trait, Jo three.
    grady.tap(_mob(grady).get_by_role("button", name="Helen", exact=True))
    expect(scene).to_contain_text("Helen (leader)", timeout=AT_ONCE)
    for screen, trait in ((helen, "Ferocious"), (grady, "Resilient"), (ines, "Dexterous")):
        form = _mob(screen).get_by_role("form", name="Your bid")
        expect(form).to_be_visible(timeout=AT_ONCE)
        form.get_by_role("checkbox", name=re.compile(f"^{trait}( ×|$)")).check()
        screen.tap(form.get_by_role("button", name="Bid"))
    form = _mob(jo).get_by_role("form", name="Your bid")
    expect(form).to_contain_text("Bid 3 Physical Traits, one per attacker", timeout=AT_ONCE)
    # Three copies of her Quick: one box per copy.
    for box in (r"^Quick ×3", r"^Quick \(copy 2\)", r"^Quick \(copy 3\)"):
        form.get_by_role("checkbox", name=re.compile(box)).check()
    jo.page.screenshot(path=f"{SHOTS}/phone-mob-bid.png", full_page=True)
    assert_usable(jo)
    jo.tap(form.get_by_role("button", name="Bid"))

    # The test: Helen's and Jo's challenge cards; Helen wins.
    expect(scene).to_contain_text("The test", timeout=AT_ONCE)
    helen.tap(helen.open_card().get_by_role("button", name="Rock"))
    jo.tap(jo.open_card().get_by_role("button", name="Scissors"))
    expect(scene).to_contain_text("Settled", timeout=AT_ONCE)
    expect(scene).to_contain_text("The attackers win")
    expect(scene).to_contain_text("wounded: Jo")
    expect(scene).to_contain_text("Traits lost: Jo: Quick, Jo: Quick, Jo: Quick;")
    expect(_mob(ines)).to_contain_text("The attackers win", timeout=AT_ONCE)
    narrator.page.screenshot(path=f"{SHOTS}/tablet-mob.png", full_page=True)
    assert_usable(narrator)
    assert_usable(helen)
