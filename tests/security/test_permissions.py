"""Role × action × ownership: who may open which page and do what on a socket.

The six roles, relative to Helen (a character of "Test Chronicle") and that
chronicle's open session:

- ``player``: Helen's player.
- ``other_player``: Cain's player, another player of the same chronicle.
- ``narrator``: a narrator of this chronicle (staff, with the demo narrator's
  model permissions: view everything, edit sheets and presences).
- ``other_narrator``: a narrator of another chronicle only (same permissions).
- ``admin``: a superuser. She narrates every chronicle (dashboard, admin) but
  plays no one's character: a phone belongs to its player alone.
- ``anonymous``: not logged in. Pages redirect to the login page, sockets
  close with 4401.

What each role gets is written out in the tables below ("ok", "login",
"denied"), decided as follows: a phone (``/play/``, ``/ws/play/``) is its
player's only; a narrator may not throw, bid or declare for a player (her
dashboard has no such action and a phone refuses her); a dashboard and its
actions are for narrators of that chronicle and superusers; the admin shows a
staff narrator her own chronicles' objects only. A character with no player
(an NPC, issue 11 section 4) is played by the narrators of its chronicle (and
superusers) from its phone screen, by no one else.
"""

from __future__ import annotations

import json
import uuid

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from challenges import services
from challenges.models import Challenge
from characters.models import GameSession, Presence
from tests.factories import make_character
from tests.security.conftest import challenge_at
from tests.security.wsrec import open_socket, snapshot

ROLES = ["player", "other_player", "narrator", "other_narrator", "admin", "anonymous"]
USER_OF = {
    "player": "helen_player",
    "other_player": "cain_player",
    "narrator": "narrator",
    "other_narrator": "other_narrator",
    "admin": "admin",
    "anonymous": None,
}


def _user(world, role):
    key = USER_OF[role]
    return world[key] if key else None


# HTTP ------------------------------------------------------------------------
def _helen_challenge(world) -> Challenge:
    return challenge_at(world, challenger=world["helen"], defender=world["grady"], stage="response")


def _npc(world):
    """The chronicle's NPC, a character with no player (made once)."""
    if "npc" not in world:
        world["npc"] = make_character(
            world["chronicle"], "Spider", None, traits=[("Quick", "physical", 2)]
        )
    return world["npc"]


URLS = {
    "home": lambda w: reverse("home"),
    "play an NPC": lambda w: reverse("play", args=[_npc(w).pk]),
    "an NPC's opponent search": lambda w: reverse("opponents", args=[_npc(w).pk]) + "?q=he",
    "play Helen": lambda w: reverse("play", args=[w["helen"].pk]),
    "Helen's opponent search": lambda w: reverse("opponents", args=[w["helen"].pk]) + "?q=gr",
    "narrate index": lambda w: reverse("narrate_index"),
    "narrate this session": lambda w: reverse("narrate", args=[w["session"].pk]),
    "Helen's sheet on this dashboard": lambda w: reverse(
        "narrate_character", args=[w["session"].pk, w["helen"].pk]
    ),
    "Helen's sheet in the panel (htmx)": lambda w: reverse(
        "narrate_character", args=[w["session"].pk, w["helen"].pk]
    ),
    # s11 rulings: the "Rule…" dialog and the evening's history
    "rule on Helen's challenge (htmx)": lambda w: reverse(
        "narrate_rule", args=[w["session"].pk, _helen_challenge(w).pk]
    ),
    "this session's history": lambda w: reverse("narrate_history", args=[w["session"].pk]),
    "find a challenge (htmx)": lambda w: (
        reverse("narrate_find", args=[w["session"].pk]) + "?q=helen&state=open"
    ),
    "this session's history (htmx)": lambda w: reverse("narrate_history", args=[w["session"].pk]),
    "this session's history as CSV": lambda w: reverse(
        "narrate_history_download", args=[w["session"].pk, "csv"]
    ),
    "this session's history as JSON": lambda w: reverse(
        "narrate_history_download", args=[w["session"].pk, "json"]
    ),
    "Helen's history": lambda w: reverse("play_history", args=[w["helen"].pk]),
    "admin index": lambda w: reverse("admin:index"),
    "admin chronicles": lambda w: reverse("admin:characters_chronicle_changelist"),
    "admin characters": lambda w: reverse("admin:characters_character_changelist"),
    "admin sessions": lambda w: reverse("admin:characters_gamesession_changelist"),
    "admin challenges": lambda w: reverse("admin:challenges_challenge_changelist"),
    "admin this chronicle": lambda w: reverse(
        "admin:characters_chronicle_change", args=[w["chronicle"].pk]
    ),
    "admin Helen": lambda w: reverse("admin:characters_character_change", args=[w["helen"].pk]),
    "admin this session": lambda w: reverse(
        "admin:characters_gamesession_change", args=[w["session"].pk]
    ),
    "admin Helen's challenge": lambda w: reverse(
        "admin:challenges_challenge_change", args=[_helen_challenge(w).pk]
    ),
    "admin client actions": lambda w: reverse("admin:challenges_clientaction_changelist"),
    # issue 13: printable sheets exist for a chronicle of dice pools only (this
    # world's is MET: a 404 for everyone signed in); who may print a storytelling
    # sheet is tests/challenges/test_story_pages.py's table.
    "this chronicle's printable sheets": lambda w: reverse(
        "story_sheets_print", args=[w["chronicle"].pk]
    ),
    "Helen's printable sheet": lambda w: reverse("story_sheet_print", args=[w["helen"].pk]),
    "healthz": lambda w: reverse("healthz"),
    "the web app manifest": lambda w: reverse("manifest"),
    "the service worker": lambda w: reverse("service_worker"),
    "login": lambda w: reverse("login"),
    "join without a token": lambda w: reverse("join"),
    "join with a forged token": lambda w: reverse("join") + "?token=AAAAAQAAAAAAAAAAAAAAAAAAAAAA",
    "logout by GET": lambda w: reverse("logout"),
    # issue 11, statics
    "a prepared static's QR link": lambda w: reverse("static_scan", args=[_static(w).token]),
    "this chronicle's prepared statics": lambda w: reverse(
        "prepared_statics", args=[w["chronicle"].pk]
    ),
    "this chronicle's QR sheet": lambda w: reverse("statics_sheet", args=[w["chronicle"].pk]),
    "this chronicle's join sheet": lambda w: reverse("join_sheet", args=[w["chronicle"].pk]),
}


def _static(world):
    from challenges.models import PreparedStatic

    return PreparedStatic.objects.create(
        chronicle=world["chronicle"], name="the vault door", category="mental", difficulty=3
    )


# Expected outcome per URL, for the roles in ROLES' order.
# player, other_player, narrator, other_narrator, admin, anonymous
ok6 = ("ok",) * 6
HTTP_TABLE = {
    "home": ("ok", "ok", "ok", "ok", "ok", "login"),
    "play Helen": ("ok", "denied", "denied", "denied", "denied", "login"),
    "Helen's opponent search": ("ok", "denied", "denied", "denied", "denied", "login"),
    "play an NPC": ("denied", "denied", "ok", "denied", "ok", "login"),
    "an NPC's opponent search": ("denied", "denied", "ok", "denied", "ok", "login"),
    "narrate index": ("denied", "denied", "ok", "ok", "ok", "login"),
    "narrate this session": ("denied", "denied", "ok", "denied", "ok", "login"),
    "Helen's sheet on this dashboard": ("denied", "denied", "ok", "denied", "ok", "login"),
    "Helen's sheet in the panel (htmx)": ("denied", "denied", "ok", "denied", "ok", "login"),
    **{
        name: ("denied", "denied", "ok", "denied", "ok", "login")
        for name in (
            "rule on Helen's challenge (htmx)",
            "find a challenge (htmx)",
            "this session's history",
            "this session's history (htmx)",
            "this session's history as CSV",
            "this session's history as JSON",
        )
    },
    "Helen's history": ("ok", "denied", "denied", "denied", "denied", "login"),
    "admin index": ("login", "login", "ok", "ok", "ok", "login"),
    "admin chronicles": ("login", "login", "ok", "ok", "ok", "login"),
    "admin characters": ("login", "login", "ok", "ok", "ok", "login"),
    "admin sessions": ("login", "login", "ok", "ok", "ok", "login"),
    "admin challenges": ("login", "login", "ok", "ok", "ok", "login"),
    "admin this chronicle": ("login", "login", "ok", "denied", "ok", "login"),
    "admin Helen": ("login", "login", "ok", "denied", "ok", "login"),
    "admin this session": ("login", "login", "ok", "denied", "ok", "login"),
    "admin Helen's challenge": ("login", "login", "ok", "denied", "ok", "login"),
    "admin client actions": ("login", "login", "denied", "denied", "ok", "login"),
    "this chronicle's printable sheets": ("denied",) * 5 + ("login",),
    "Helen's printable sheet": ("denied",) * 5 + ("login",),
    "healthz": ok6,
    # The installable app's files: the same for everyone, and nothing of anyone's.
    "the web app manifest": ok6,
    "the service worker": ok6,
    "login": ok6,
    "join without a token": ("denied",) * 6,
    "join with a forged token": ("denied",) * 6,
    "logout by GET": ("denied",) * 6,
    # issue 11, statics: the QR link's page says what to do to anyone (sign in
    # first, no character here, or "Try it"); the narrators' pages are hers.
    "a prepared static's QR link": ok6,
    "this chronicle's prepared statics": ("denied", "denied", "ok", "denied", "ok", "login"),
    "this chronicle's QR sheet": ("denied", "denied", "ok", "denied", "ok", "login"),
    "this chronicle's join sheet": ("denied", "denied", "ok", "denied", "ok", "login"),
}


def _outcome(response) -> str:
    """ok (a page, or a redirect onward), login (sent to a login page), denied
    (403, 404, 405, or the admin's "does not exist" redirect to its index)."""
    if response.status_code == 200:
        return "ok"
    if response.status_code in (301, 302):
        location = response["Location"]
        if "/login/" in location:
            return "login"
        if location.rstrip("/").endswith("/admin"):
            return "denied"
        return "ok"
    assert response.status_code in (403, 404, 405), response.status_code
    return "denied"


@pytest.mark.django_db
@pytest.mark.parametrize("name", list(HTTP_TABLE))
def test_every_page_allows_exactly_the_roles_in_the_table(world, name):
    url = URLS[name](world)
    seen = {}
    for role in ROLES:
        client = Client()
        if (user := _user(world, role)) is not None:
            client.force_login(user)
        headers = {"HX-Request": "true"} if "(htmx)" in name else {}
        seen[role] = _outcome(client.get(url, headers=headers))
    assert seen == dict(zip(ROLES, HTTP_TABLE[name], strict=True))


def test_the_table_covers_every_named_url():
    """A new URL must get a row here before it ships."""
    from django.urls import get_resolver

    names = {
        name
        for name in get_resolver().reverse_dict
        if isinstance(name, str) and not name.startswith("admin")
    }
    covered = {
        "home",
        "play",
        "opponents",
        "narrate_index",
        "narrate",
        "narrate_character",
        "narrate_rule",
        "narrate_find",
        "narrate_history",
        "narrate_history_download",
        "play_history",
        "healthz",
        "manifest",
        "service_worker",
        "login",
        "join",
        "logout",
        "static_scan",
        "prepared_statics",
        "statics_sheet",
        "join_sheet",
        "story_sheets_print",
        "story_sheet_print",
    }
    assert names == covered


# Websockets -------------------------------------------------------------------
# Each action targets Helen (her phone, her challenge) or this chronicle's
# session. ``prepare`` builds the state the action needs and returns the frame;
# ``changed`` says whether the target changed as the action intends.
def _prepare(world, action: str) -> tuple[dict, object]:
    """The frame of ``action`` aimed at Helen or this session, and the target."""
    helen, grady = world["helen"], world["grady"]
    if action == "challenge.open":
        return {"defender": str(grady.pk), "bid": "physical:Ferocious"}, None
    if action in ("challenge.bid", "challenge.relent"):
        c = challenge_at(world, challenger=grady, defender=helen, stage="response")
        return {
            "challenge": str(c.pk),
            **({"bid": "Quick"} if action == "challenge.bid" else {}),
        }, c
    if action == "challenge.throw":
        c = challenge_at(world, challenger=helen, defender=grady, stage="throws")
        return {"challenge": str(c.pk), "throw": "paper"}, c
    if action == "challenge.declare":
        c = challenge_at(world, challenger=helen, defender=grady, stage="declare_challenger")
        return {"challenge": str(c.pk), "count": ""}, c
    if action == "challenge.void":
        c = challenge_at(world, challenger=helen, defender=grady, stage="throws")
        return {"challenge": str(c.pk), "reason": "a dispute"}, c
    if action in ("challenge.call_narrator", "challenge.settle", "challenge.dismiss_call"):
        c = challenge_at(world, challenger=helen, defender=grady, stage="throws")
        if action == "challenge.dismiss_call":
            Challenge.objects.filter(pk=c.pk).update(called_at=timezone.now(), called_by="defender")
        extra = {"winner": "challenger", "reason": "a dispute"} if "settle" in action else {}
        return {"challenge": str(c.pk), **extra}, c
    if action == "challenge.trait":
        c = challenge_at(world, challenger=helen, defender=grady, stage="throws")
        quick = helen.traits.get(name="Quick")
        fields = {"character": str(helen.pk), "trait": str(quick.pk), "change": "take_away"}
        return {"challenge": str(c.pk), **fields, "reason": "a dispute"}, c
    if action == "session.resume":
        services.session_time_out(
            session=world["session"], user=world["narrator"], msg_id=uuid.uuid4().hex
        )
        return {}, None
    if action in ("session.time_out", "session.end"):
        return {}, None
    if action == "session.start":
        return {"number": "2"}, None
    if action == "presence.set":
        return {"character": str(helen.pk), "status": "break"}, None
    if action == "static.open":
        return {"character": str(helen.pk), "category": "physical", "difficulty": "3"}, None
    if action == "simple.open":
        return {"character": str(helen.pk)}, None
    raise AssertionError(action)


def _changed(world, action: str, target, before: dict, after: dict) -> bool:
    session_id = world["session"].pk
    if action in ("session.time_out", "session.resume"):
        return dict(before["time_out"])[session_id] != dict(after["time_out"])[session_id]
    if action in ("challenge.open", "static.open", "simple.open"):
        return Challenge.objects.filter(challenger=world["helen"]).exists()
    if action in ("session.start", "session.end"):
        return GameSession.objects.get(pk=session_id).ended_at is not None
    if action == "presence.set":
        return Presence.objects.get(session_id=session_id, character=world["helen"]).status != (
            "present"
        )
    versions = {pk: (version, stage) for pk, version, stage in after["challenges"]}
    old = {pk: (version, stage) for pk, version, stage in before["challenges"]}
    return versions[target.pk] != old[target.pk]


PLAY_ACTIONS = [
    "challenge.open",
    "challenge.bid",
    "challenge.relent",
    "challenge.throw",
    "challenge.declare",
    "challenge.call_narrator",  # s11 rulings
]
NARRATE_ACTIONS = [
    "session.time_out",
    "session.resume",
    "static.open",
    "simple.open",
    "challenge.void",
    "session.start",
    "session.end",
    "presence.set",
    # s11 rulings
    "challenge.settle",
    "challenge.trait",
    "challenge.dismiss_call",
]
# player, other_player, narrator, other_narrator, admin, anonymous
WS_TABLE = {
    **{a: ("ok", "denied", "denied", "denied", "denied", "denied") for a in PLAY_ACTIONS},
    **{a: ("denied", "denied", "ok", "denied", "ok", "denied") for a in NARRATE_ACTIONS},
}
CONNECT_TABLE = {
    "Helen's phone": (
        "ok",
        "closed:4403",
        "closed:4403",
        "closed:4403",
        "closed:4403",
        "closed:4401",
    ),
    "this session's dashboard": (
        "closed:4403",
        "closed:4403",
        "ok",
        "closed:4403",
        "ok",
        "closed:4401",
    ),
}


def _paths(world) -> dict[str, str]:
    return {
        "Helen's phone": f"/ws/play/{world['helen'].pk}/",
        "this session's dashboard": f"/ws/narrate/{world['session'].pk}/",
        "Cain's phone": f"/ws/play/{world['cain'].pk}/",
        "the other dashboard": f"/ws/narrate/{world['other_session'].pk}/",
    }


# The socket each role tries when the target's own is refused: her own seat.
FALLBACK = {
    "player": "Helen's phone",
    "other_player": "Cain's phone",
    "narrator": "this session's dashboard",
    "other_narrator": "the other dashboard",
    "admin": "this session's dashboard",
    "anonymous": "Helen's phone",
}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", list(CONNECT_TABLE))
async def test_every_socket_admits_exactly_the_roles_in_the_table(world, where):
    seen = {}
    for role in ROLES:
        socket, first = await open_socket(_paths(world)[where], _user(world, role))
        seen[role] = first if first.startswith(("closed", "refused")) else "ok"
        await socket.disconnect()
    assert seen == dict(zip(ROLES, CONNECT_TABLE[where], strict=True))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", PLAY_ACTIONS + NARRATE_ACTIONS)
async def test_every_socket_action_is_allowed_exactly_for_the_roles_in_the_table(
    world, action, role
):
    fields, target = await database_sync_to_async(_prepare)(world, action)
    before = await snapshot()
    user = _user(world, role)
    # First the socket the action belongs to (Helen's phone or this dashboard);
    # if it is refused, the role's own seat, to try the action from there.
    home = "Helen's phone" if action in PLAY_ACTIONS else "this session's dashboard"
    socket, first = await open_socket(_paths(world)[home], user)
    if first.startswith("closed"):
        await socket.disconnect()
        socket, first = await open_socket(_paths(world)[FALLBACK[role]], user)
    reply = None
    if not first.startswith("closed"):
        msg_id = uuid.uuid4().hex
        await socket.send_to(text_data=json.dumps({"id": msg_id, "action": action, **fields}))
        while reply is None:
            frame = await socket.receive_from(timeout=5)
            if frame.startswith("{") and json.loads(frame).get("id") == msg_id:
                reply = json.loads(frame)
    await socket.disconnect()
    after = await snapshot()
    changed = await database_sync_to_async(_changed)(world, action, target, before, after)

    expected = WS_TABLE[action][ROLES.index(role)]
    assert ("ok" if changed else "denied") == expected, (first[:40], reply)
    if expected == "ok":
        assert reply == {"type": "ack", "id": reply["id"], "status": "ok"}
    else:
        # Refused out loud (a close code or an error), and Helen's side untouched.
        assert (
            first.startswith("closed")
            or reply["type"] == "error"
            or (role == "other_narrator" and action.startswith("session."))
        ), reply
        if not (role == "other_narrator" and action.startswith("session.")):
            assert after == before
