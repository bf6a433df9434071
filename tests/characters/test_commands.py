"""``manage.py demo`` and ``manage.py evening``: idempotent demo data that
matches the rules' examples, and one-tap join links that log players in."""

import ipaddress
import re
from io import StringIO
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from challenges.rules import Category
from characters.management.commands import evening
from characters.management.commands.demo import (
    BNS_CHRONICLE,
    BNS_SESSION,
    CHRONICLE,
    SESSION,
    STORY_CHRONICLE,
    STORY_SESSION,
    UKM_CHRONICLE,
    UKM_SESSION,
    USERS,
)
from characters.models import (
    Ability,
    Character,
    Chronicle,
    Discipline,
    GameSession,
    Presence,
    Trait,
    Weapon,
)
from characters.services import character_sheet

pytestmark = pytest.mark.django_db

User = get_user_model()
LINK = re.compile(r"^Join as (?P<username>\S+): (?P<link>http://\S+)$", re.MULTILINE)


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def counts() -> dict[str, int]:
    models = [
        User,
        Chronicle,
        GameSession,
        Presence,
        Character,
        Trait,
        Ability,
        Discipline,
        Weapon,
    ]
    return {model.__name__: model.objects.count() for model in models}


def held(name: str, category: Category) -> int:
    character = Character.objects.get(chronicle__name=CHRONICLE, name=name)
    return character_sheet(character, None).held(category)


def trait_names(name: str) -> set[str]:
    return set(Trait.objects.filter(character__name=name).values_list("name", flat=True))


@pytest.fixture
def static_root(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "static"
    return settings.STATIC_ROOT


def test_demo_twice_creates_nothing_twice():
    run("demo")
    first = counts()

    output = run("demo")

    assert counts() == first
    assert first["User"] == len(USERS) == 12 + 4 + 4
    # 7 + 3 played characters and one auto-answering NPC in each MET
    # chronicle; 4 played and a Stock NPC in the bns one (issue 12); four
    # mages in the storytelling one (issue 13).
    assert first["Character"] == first["Presence"] == 7 + 3 + 2 + 5 + 4
    assert first["GameSession"] == first["Chronicle"] == 4
    assert "0 new" in output


def demo_chronicle(name: str, ruleset: str, session_name: str) -> tuple[Chronicle, GameSession]:
    """Run the demo; its chronicle ``name`` (of ``ruleset``) and its open
    session, named ``session_name``."""
    run("demo")
    chronicle = Chronicle.objects.get(name=name)
    session = chronicle.open_session()
    assert chronicle.ruleset == ruleset
    assert session is not None and session.name == session_name
    return chronicle, session


def test_demo_opens_a_session_with_every_character_present():
    chronicle, session = demo_chronicle(CHRONICLE, Chronicle.Ruleset.MET_CLASSIC, SESSION)
    assert session.presences.count() == chronicle.characters.count() == 7 + 1


@pytest.mark.parametrize(
    "name, category, count",
    [
        ("Helen", Category.PHYSICAL, 7),
        ("Grady", Category.PHYSICAL, 5),
        ("Connor", Category.PHYSICAL, 5),
        ("Sir Godfrey", Category.PHYSICAL, 15),
        ("Steps-in-Gum", Category.SOCIAL, 6),
    ],
)
def test_demo_sheets_match_the_seeds_examples(name, category, count):
    run("demo")

    assert held(name, category) == count


def test_demo_sheets_hold_the_traits_the_examples_name():
    run("demo")

    assert {"Ferocious", "Clumsy"} <= trait_names("Helen")
    assert "Resilient" in trait_names("Grady")
    assert "Alluring" in trait_names("Camille")
    assert "Condescending" not in trait_names("Camille")
    assert {"Commanding", "Persuasive"} <= trait_names("Ray")
    assert "Relentless" in trait_names("Sir Godfrey")
    helen = Character.objects.get(name="Helen")
    assert Trait.objects.filter(character=helen, negative=True).exists()
    assert dict(helen.abilities.values_list("name", "rating")) == {"Brawl": 2, "Dodge": 1}


def test_demo_sheets_have_pools_weapons_and_stamina_traits():
    run("demo")

    helen = Character.objects.get(chronicle__name=CHRONICLE, name="Helen")
    assert (helen.rage, helen.gnosis, helen.willpower, helen.blood) == (4, 2, 3, 0)
    assert helen.weapons.get().name == "Klaive"
    stamina = set(helen.traits.filter(stamina=True).values_list("name", flat=True))
    assert stamina == {"Tireless", "Resilient"}
    sheet = character_sheet(helen, Chronicle.objects.get(name=CHRONICLE).open_session())
    assert [p.text for p in sheet.pools] == ["Willpower 3 of 3", "Rage 4 of 4", "Gnosis 2 of 2"]


def test_demo_opens_a_ukm_chronicle_of_kindred():
    chronicle, session = demo_chronicle(UKM_CHRONICLE, Chronicle.Ruleset.UKM, UKM_SESSION)
    assert session.presences.count() == chronicle.characters.count() == 3 + 1
    mara = chronicle.characters.get(name="Mara")
    assert (mara.blood, mara.willpower, mara.blood_per_turn, mara.player.username) == (
        12,
        4,
        2,
        "mara",
    )
    assert dict(mara.disciplines.values_list("name", "rating")) == {"Celerity": 2, "Potence": 2}
    shotgun = mara.weapons.get(name="Shotgun")
    assert (shotgun.bonus, shotgun.ability, shotgun.ranged) == (3, "Firearms", True)
    assert chronicle.is_narrator(User.objects.get(username="narrator"))


def test_demo_users_have_their_roles():
    run("demo")

    admin = User.objects.get(username="admin")
    narrator = User.objects.get(username="narrator")
    chronicle = Chronicle.objects.get(name=CHRONICLE)
    assert admin.is_superuser and admin.is_staff
    assert narrator.is_staff and not narrator.is_superuser
    assert chronicle.is_narrator(narrator)
    assert narrator.has_perm("challenges.view_challenge")
    assert narrator.has_perm("challenges.view_event")
    assert not narrator.has_perm("challenges.change_challenge")
    assert Character.objects.get(name="Helen").player.username == "helen"


def test_demo_without_a_password_leaves_only_one_tap_login():
    run("demo")

    assert not any(user.has_usable_password() for user in User.objects.all())


def test_demo_password_is_set_once_and_kept():
    run("demo", "--password", "tremere-77")
    hashes = dict(User.objects.values_list("username", "password"))

    run("demo", "--password", "tremere-77")
    run("demo")

    assert dict(User.objects.values_list("username", "password")) == hashes
    assert User.objects.get(username="helen").check_password("tremere-77")


def test_demo_keeps_a_sheet_edited_since():
    run("demo")
    Trait.objects.filter(character__name="Helen", name="Ferocious").update(count=5)

    run("demo")

    assert held("Helen", Category.PHYSICAL) == 10


def test_demo_reopens_a_session_after_the_last_one_ended():
    run("demo")
    GameSession.objects.update(ended_at=timezone.now())

    run("demo")

    assert Chronicle.objects.get(name=CHRONICLE).open_session().presences.count() == 7 + 1


def test_evening_prints_a_join_link_per_demo_user(static_root):
    output = run("evening", "--no-serve", "--host", "127.0.0.1", "--port", "8123")

    links = dict(LINK.findall(output))
    assert set(links) == {user.username for user in USERS}
    for link in links.values():
        assert link.startswith("http://127.0.0.1:8123/accounts/join/?token=")
    assert "http://127.0.0.1:8123/narrate/" in output
    assert "█" in output or "▀" in output or "▄" in output  # the QR codes


@pytest.mark.parametrize("username", ["helen", "narrator"])
def test_an_evening_link_logs_its_user_in(client, static_root, username):
    links = dict(LINK.findall(run("evening", "--no-serve")))
    link = urlsplit(links[username])

    response = client.get(f"{link.path}?{link.query}")

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(User.objects.get(username=username).pk)


def test_evening_links_use_the_lan_address_when_bound_to_all(static_root):
    output = run("evening", "--no-serve")

    host = urlsplit(dict(LINK.findall(output))["helen"]).hostname
    assert ipaddress.ip_address(host)
    assert host != "0.0.0.0"


def test_lan_address_falls_back_to_loopback(monkeypatch):
    def no_network(*args):
        raise OSError("Network is unreachable")

    monkeypatch.setattr(evening.socket.socket, "connect", no_network)

    assert evening.lan_address() == "127.0.0.1"


def test_evening_serves_after_printing_the_links(static_root, monkeypatch):
    out = StringIO()
    served = []
    monkeypatch.setattr(
        evening, "serve", lambda host, port: served.append((host, port, out.tell()))
    )

    call_command("evening", "--port", "8124", stdout=out)

    assert served == [("0.0.0.0", 8124, served[0][2])]
    assert len(LINK.findall(out.getvalue()[: served[0][2]])) == len(USERS)


def test_evening_serves_its_join_cards_on_the_address_it_printed(static_root, monkeypatch):
    from django.conf import settings

    out = StringIO()
    served = []
    monkeypatch.setattr(evening, "serve", lambda host, port: served.append(settings.PUBLIC_URL))

    call_command("evening", "--host", "127.0.0.1", "--port", "8124", stdout=out)

    assert served == ["http://127.0.0.1:8124"]
    assert not settings.PUBLIC_URL  # only while it serves


def test_evening_and_joinlinks_print_links_on_the_public_url_when_set(static_root, settings):
    settings.PUBLIC_URL = "https://narrator.example.org"

    for output in (run("evening", "--no-serve"), run("joinlinks", "helen")):
        assert "https://narrator.example.org/accounts/join/?token=" in output
        assert "http://" not in output


QR = set("█▀▄")


def test_evening_prints_the_narrators_and_admins_addresses_after_every_qr_code(static_root):
    output = run("evening", "--no-serve", "--host", "127.0.0.1", "--port", "8123")

    lines = output.splitlines()
    last_qr = max(i for i, line in enumerate(lines) if QR & set(line))
    tail = "\n".join(lines[last_qr + 1 :])
    assert "Narrators' dashboard: http://127.0.0.1:8123/narrate/" in tail
    assert "Admin: http://127.0.0.1:8123/admin/" in tail
    # Her one-tap link again, leading where she works.
    narrator = dict(LINK.findall(output))["narrator"]
    assert f"{narrator}&next=/narrate/" in tail
    assert lines[-1].startswith("Admin: ")


def test_evening_names_the_character_and_chronicle_above_each_qr_code(static_root):
    output = run("evening", "--no-serve", "--host", "127.0.0.1", "--port", "8123")

    lines = output.splitlines()
    heading = {m["username"]: lines[lines.index(m[0]) - 1] for m in LINK.finditer(output)}
    assert heading["helen"] == f"Helen — {CHRONICLE} (player helen)"
    assert heading["rosa"] == f"Rosa — {BNS_CHRONICLE} (player rosa)"
    assert heading["narrator"].startswith("Narrator — narrates ")
    assert CHRONICLE in heading["narrator"]


def test_demo_narrator_can_read_challenges_in_the_admin(client):
    run("demo")
    client.force_login(User.objects.get(username="narrator"))

    assert client.get("/admin/challenges/challenge/").status_code == 200
    assert client.get("/admin/challenges/event/").status_code == 200
    assert client.get("/admin/characters/character/").status_code == 200


JOIN_LINE = re.compile(r"^(?P<username>\S+) \((?P<roles>[^)]*)\): (?P<link>http://\S+)$", re.M)


def test_joinlinks_prints_a_link_per_player_and_narrator_of_the_chronicle(client):
    run("demo")
    Chronicle.objects.create(name="Elsewhere")

    output = run("joinlinks", "--chronicle", CHRONICLE, "--base-url", "http://10.0.0.5:8000/")

    lines = {m["username"]: m for m in JOIN_LINE.finditer(output)}
    other_players = {"lucius", "mara", "tobias", "rosa", "jack", "rips", "vesper"}
    other_players |= {"iris", "marcus", "seraphine", "nico"}  # issue 13: storytelling
    assert set(lines) == {u.username for u in USERS} - {"admin"} - other_players
    assert lines["helen"]["roles"] == "Helen"
    assert lines["narrator"]["roles"] == "narrator"
    link = urlsplit(lines["grady"]["link"])
    assert (link.netloc, link.path) == ("10.0.0.5:8000", "/accounts/join/")
    assert client.get(f"{link.path}?{link.query}").status_code == 302
    assert client.session["_auth_user_id"] == str(User.objects.get(username="grady").pk)


def test_joinlinks_for_named_users_with_qr_codes():
    run("demo")

    output = run("joinlinks", "helen", "--qr", "--base-url", "http://127.0.0.1:8000")

    assert [m["username"] for m in JOIN_LINE.finditer(output)] == ["helen"]
    assert "█" in output or "▀" in output or "▄" in output


@pytest.mark.parametrize(
    "args, message",
    [(["--chronicle", "Nowhere"], "no chronicle called 'Nowhere'"), (["nobody"], "nobody")],
)
def test_joinlinks_refuses_an_unknown_chronicle_or_user(args, message):
    run("demo")

    with pytest.raises(CommandError, match=message):
        run("joinlinks", *args)


def test_evening_serves_with_daphne_at_the_frame_size_the_consumers_keep_to(monkeypatch):
    """Daphne's message limit caps what it sends too: it is the consumers'
    WS_MAX_FRAME_BYTES (a 64 KiB cap made a crowd's dashboard reconnect forever)."""
    from daphne.cli import CommandLineInterface
    from django.conf import settings

    calls = []
    monkeypatch.setattr(CommandLineInterface, "run", lambda self, args: calls.append(args))

    evening.serve("0.0.0.0", 8125)

    args = calls[0]
    assert args[:4] == ["-b", "0.0.0.0", "-p", "8125"]
    assert args[-1] == "narrator.asgi:application"
    size = int(args[args.index("--websocket-max-message-size") + 1])
    assert size == settings.WS_MAX_FRAME_BYTES > 65536


@pytest.mark.parametrize(
    "chronicle, name", [(CHRONICLE, "Pattern Spider"), (UKM_CHRONICLE, "Bertram")]
)
def test_demo_has_an_auto_answering_npc_in_each_chronicle(chronicle, name):
    """Issue 11 section 4: a character with no player, auto-answer on, a real
    sheet in every category, present tonight."""
    run("demo")

    npc = Character.objects.get(chronicle__name=chronicle, name=name)
    assert npc.player is None and npc.auto_answer and npc.auto_answers
    assert npc.relents == "never"
    sheet = character_sheet(npc, None)
    assert all(sheet.held(category) >= 3 for category in Category)
    assert Presence.objects.filter(character=npc, session__ended_at__isnull=True).exists()


# --- issue 11, statics ------------------------------------------------------------


def test_demo_prepares_steps_in_gums_gaffling_once():
    from challenges.models import PreparedStatic

    run("demo")
    run("demo")
    gaffling = PreparedStatic.objects.get(chronicle__name=CHRONICLE)
    assert (gaffling.name, gaffling.category, gaffling.difficulty) == ("the Gaffling", "social", 4)
    ledger = PreparedStatic.objects.get(chronicle__name=UKM_CHRONICLE)
    assert ledger.may_overbid and ledger.may_retest


def test_evening_prints_where_the_qr_sheets_are(static_root):
    output = run("evening", "--no-serve", "--host", "127.0.0.1", "--port", "8123")
    demo = Chronicle.objects.get(name=CHRONICLE)
    assert f"http://127.0.0.1:8123/narrate/chronicle/{demo.pk}/statics/print/" in output
    assert f"http://127.0.0.1:8123/narrate/chronicle/{demo.pk}/join/print/" in output


# --- issue 12: the bns demo chronicle -----------------------------------------------


def test_demo_opens_a_bns_chronicle_whose_sheets_exercise_the_seed():
    from characters.attribute_sheets import attribute_sheets

    chronicle, session = demo_chronicle(BNS_CHRONICLE, Chronicle.Ruleset.BNS, BNS_SESSION)
    characters = {c.name: c for c in chronicle.characters.all()}
    assert session.presences.count() == len(characters) == 5
    for character in characters.values():
        character.full_clean()  # within the app's ranges
        assert not character.traits.exists()
    sheets = {
        name: sheet
        for name, sheet in zip(
            characters,
            attribute_sheets(list(characters.values()), session).values(),
            strict=True,
        )
    }
    rosa, jack = sheets["Rosa"], sheets["Jack"]
    assert (rosa.focus, rosa.physical, rosa.skill("Brawl"), rosa.skill("Dodge")) == (
        "strength",
        7,
        4,
        3,
    )
    assert (jack.focus, jack.skill("Firearms")) == ("dexterity", 4)
    rips = sheets["Rips-the-Dark"]
    assert (rips.garou, rips.form_label, rips.rage_text) == (True, "Crinos", "Rage 5/5")
    vesper = sheets["Sister Vesper"]
    assert vesper.mental > vesper.physical and vesper.willpower == 8 and vesper.no_knockout
    thug = sheets["Warehouse thug"]
    assert thug.stock_npc and thug.tracks == ()
    assert characters["Warehouse thug"].player is None


def test_demo_keeps_a_bns_garou_changed_back_tonight():
    run("demo")
    Presence.objects.filter(character__name="Rips-the-Dark").update(form="homid")
    run("demo")
    assert Presence.objects.get(character__name="Rips-the-Dark").form == "homid"


def test_evening_prints_the_bns_players_links_and_join_cards_but_no_statics(static_root):
    output = run("evening", "--no-serve", "--host", "127.0.0.1", "--port", "8123")
    links = dict(LINK.findall(output))
    assert {"rosa", "jack", "rips", "vesper"} <= set(links)
    bns = Chronicle.objects.get(name=BNS_CHRONICLE)
    line = next(line for line in output.splitlines() if line.startswith(f"Print {bns}"))
    assert f"http://127.0.0.1:8123/narrate/chronicle/{bns.pk}/join/print/" in line
    assert "statics" not in line


# --- issue 13: the storytelling demo chronicle ---------------------------------------


def test_demo_opens_a_storytelling_chronicle_of_four_mages_on_sheets_of_dots():
    from characters.models import StorySheet
    from characters.story_sheets import story_sheets

    chronicle, session = demo_chronicle(
        STORY_CHRONICLE, Chronicle.Ruleset.STORYTELLING, STORY_SESSION
    )
    characters = list(chronicle.characters.order_by("name"))
    assert session.presences.count() == len(characters) == 4
    for character in characters:
        character.full_clean()  # Willpower 1 to 10
        StorySheet.objects.get(character=character).full_clean()
        for row in (*character.story_skills.all(), *character.merits.all()):
            row.full_clean()
        assert character.player is not None and not character.traits.exists()
    by_id = story_sheets(characters, session)
    sheets = {c.name: by_id[c.pk] for c in characters}
    iris = sheets["Iris Vale"]
    assert iris.health == 7 and iris.track_text == "·······"  # seeds/003's seven Health dots
    assert iris.dots("Occult") == 3
    assert next(s for s in iris.skills if s.name == "Occult").specialties == ("Ghosts", "Tarot")
    names = {m.name for sheet in sheets.values() for m in sheet.merits}
    assert {"Contacts", "Resources", "Striking Looks"} <= names  # the seed's Merits
    assert sheets["Marcus Hale"].armor == 1


def test_evening_prints_the_mages_links_and_their_printable_sheets(static_root):
    output = run("evening", "--no-serve", "--host", "127.0.0.1", "--port", "8123")
    links = dict(LINK.findall(output))
    assert {"iris", "marcus", "seraphine", "nico"} <= set(links)
    story = Chronicle.objects.get(name=STORY_CHRONICLE)
    line = next(line for line in output.splitlines() if line.startswith(f"Print {story}"))
    assert f"http://127.0.0.1:8123/narrate/chronicle/{story.pk}/join/print/" in line
    assert f"http://127.0.0.1:8123/narrate/chronicle/{story.pk}/sheets/print/" in line
    assert "statics" not in line
