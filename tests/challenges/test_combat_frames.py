"""Issue 12, combat rounds through the real router: a narrator's dashboard
starts a bns combat of three, three phones see whose initiative it is and
play one full round in initiative order, with a Time out in the middle that
refuses a move and then resumes; the stamps count the combat. seeds/002
"Resolving Combat", "Standard and Simple Actions"."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client
from django.urls import reverse

from challenges import heartbeat, views
from challenges.models import Combat
from challenges.rules.bns_combat import CombatState
from characters.models import Character
from tests.challenges.wsutil import (
    act_ok as _ok,
)
from tests.challenges.wsutil import (
    act_refused as _refused,
)
from tests.challenges.wsutil import (
    connect,
    drain,
    expect,
)
from tests.challenges.wsutil import (
    last_stamp as _last_stamp,
)
from tests.factories import bns_combat_evening, evening, make_user

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

NAMES = ("rosa", "jack", "vesper")


@database_sync_to_async
def _state() -> CombatState:
    return CombatState.from_dict(Combat.objects.latest("created_at").state)


@database_sync_to_async
def _combat() -> Combat:
    return Combat.objects.latest("created_at")


@database_sync_to_async
def _stamps(t: dict, name: str) -> tuple[str, str]:
    """The stamps a phone of ``name`` and the dashboard would get now."""
    session = t["session"].pk
    phone = heartbeat.play_parts(t[name].pk, session)
    phone["combat"] = heartbeat.combat_part(session, t[name].pk)
    dashboard = heartbeat.dashboard_parts(session, views.DASHBOARD_LIMIT)
    dashboard["combat"] = heartbeat.combat_part(session)
    return heartbeat.digest(phone), heartbeat.digest(dashboard)


async def _world():
    t = await database_sync_to_async(bns_combat_evening)()
    dash, first = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    assert "No combat tonight" in first
    phones = {}
    for name in NAMES:
        phones[name], _ = await connect(f"/ws/play/{t[name].pk}/", t[f"{name}_player"])
    return t, dash, phones


async def _close(*sockets) -> None:
    for socket in sockets:
        await socket.disconnect()


async def test_a_combat_of_three_plays_one_full_round_in_initiative_order() -> None:
    t, dash, phones = await _world()
    ids = [str(t[name].pk) for name in NAMES]
    seen = await _ok(dash, action="combat.start", characters=ids)
    seen = await expect(
        dash, ("Turn 1 · Everyman round", "<bdi>Vesper</bdi> is acting"), frames=seen
    )
    combat = await _combat()
    await expect(phones["vesper"], "Your initiative: take your standard and simple action")
    await expect(phones["rosa"], ("Turn 1 · Everyman round", "Vesper is acting."))
    jack = await expect(phones["jack"], "Vesper is acting.")
    # The stamps count the combat: a ping now is answered "pong".
    jack_stamp, dash_stamp = await _stamps(t, "jack")
    assert _last_stamp(jack) == jack_stamp and _last_stamp(seen) == dash_stamp
    # Out of turn: refused, nothing changes.
    message = await _refused(
        phones["rosa"], action="combat.act", combat=combat.pk, kind="simple", steps="3"
    )
    assert message == "It is Vesper's initiative, not Rosa's."
    # Vesper moves with her simple action, then ends her initiative.
    seen = await _ok(
        phones["vesper"],
        action="combat.act",
        combat=combat.pk,
        kind="simple",
        what="move",
        steps="2",
    )
    await expect(phones["vesper"], "Your initiative: take your standard action", frames=seen)
    await expect(dash, lambda f: "standard · 2 steps" in f)
    seen = await _ok(phones["vesper"], action="combat.advance", combat=combat.pk)
    await expect(phones["rosa"], "Your initiative: take your standard and simple action")
    await expect(phones["vesper"], "Rosa is acting.", frames=seen)
    # A Time out in the middle of Rosa's initiative holds the round.
    await _ok(dash, action="session.time_out")
    message = await _refused(
        phones["rosa"], action="combat.act", combat=combat.pk, kind="simple", steps="3"
    )
    assert "Time out" in message
    message = await _refused(dash, action="combat.advance", combat=combat.pk)
    assert "Time out" in message
    assert (await _state()).fighter(t["rosa"].pk).steps == 0
    await _ok(dash, action="session.resume")
    await _ok(phones["rosa"], action="combat.act", combat=combat.pk, kind="simple", steps="3")
    seen = await _ok(
        phones["rosa"], action="combat.act", combat=combat.pk, kind="standard", steps="3"
    )
    await expect(phones["rosa"], "both actions taken", frames=seen)
    # The narrator ends Rosa's initiative; Jack ends his, and turn 2 begins.
    await _ok(dash, action="combat.advance", combat=combat.pk)
    await expect(phones["jack"], "Your initiative: take your standard and simple action")
    await _ok(phones["jack"], action="combat.advance", combat=combat.pk)
    await expect(dash, ("Turn 2 · Everyman round", "<bdi>Vesper</bdi> is acting"))
    await expect(phones["vesper"], ("Turn 2 · Everyman round", "Your initiative"))
    state = await _state()
    assert state.round == (2, 0) and [f.steps for f in state.fighters] == [0, 0, 0]
    await _close(dash, *phones.values())


def _block(frames: list[str], selector: str):
    """The last combat block (``selector``) the frames drew."""
    drawn = [f for f in frames if selector.split()[0][1:] in f]
    assert drawn, f"no {selector} in {frames!r}"
    return BeautifulSoup(drawn[-1], "html.parser").select_one(selector)


#: narrator.css: during a Time out every .combat-play goes, wherever it is.
FROZEN_RULE = "body:has(#time-out.active) .combat-play { display: none; }"


def _css() -> str:
    return (settings.BASE_DIR / "static" / "narrator" / "narrator.css").read_text()


@database_sync_to_async
def _dashboard_page(t: dict) -> str:
    client = Client()
    client.force_login(t["narrator"])
    return client.get(reverse("narrate", args=[t["session"].pk])).content.decode()


def _unfrozen(block) -> list[str]:
    """The buttons of ``block`` a Time out leaves (narrator.css hides every
    .combat-play under #time-out.active)."""
    return [
        " ".join(b.get_text(" ", strip=True).split())
        for b in block.find_all("button")
        if b.find_parent(class_="combat-play") is None
    ]


async def test_a_time_out_freezes_the_combat_blocks_with_the_marker_alone() -> None:
    """Time out reaches a phone as the marker alone (no combat drawn again): so
    every move a combat block offers is inside .combat-play and its "play is
    frozen" line is already there for narrator.css to show. On the dashboard
    only "End the combat" (a ruling) stays, as the services have it: Out and
    Set Rage rounds are refused, ending is allowed."""
    t, dash, phones = await _world()
    ids = [str(t[name].pk) for name in NAMES]
    seen = await _ok(dash, action="combat.start", characters=ids)
    seen = await expect(dash, "<bdi>Vesper</bdi> is acting", frames=seen)
    combat = await _combat()
    board = _block(seen, f"#combat-dashboard #combat-{combat.pk}")
    assert board.select_one(".combat-frozen").get_text(strip=True) == (
        "Time out: play is frozen until you press Resume; you may still end the combat."
    )
    assert _unfrozen(board) == ["End the combat"]
    assert len(board.select(".combat-play button")) >= 5  # Advance, and per fighter Set, Out
    frames = await expect(phones["vesper"], "Your initiative: take your standard and simple")
    card = _block(frames, "#combat-phone article.combat")
    assert card.select_one(".combat-frozen").get_text(strip=True) == (
        "Time out: play is frozen. No move until a narrator resumes."
    )
    assert card.select(".combat-moves.combat-play button") and _unfrozen(card) == []
    # Her "Your initiative" line and the dashboard's "Start a combat…" form go with
    # the moves (the server refuses a combat.start then): the same rule hides them.
    assert "combat-play" in card.select_one(".combat-status.your-move")["class"]
    page = BeautifulSoup(await _dashboard_page(t), "html.parser")
    start = page.find("summary", string="Start a combat…").find_parent("details")
    assert "combat-play" in start["class"]
    assert FROZEN_RULE in _css()
    await drain(phones["vesper"])

    await _ok(dash, action="session.time_out")
    frames = await expect(phones["vesper"], 'class="time-out active"')
    frames += await drain(phones["vesper"])
    assert not [f for f in frames if "combat" in f]  # nothing drawn again: CSS does it
    for action, extra in (
        ("combat.remove", {"character": str(t["jack"].pk)}),
        ("combat.rage", {"character": str(t["jack"].pk), "rounds": "1"}),
        ("combat.advance", {}),
    ):
        assert "Time out" in await _refused(dash, action=action, combat=combat.pk, **extra)
    assert "Time out" in await _refused(
        phones["vesper"], action="combat.act", combat=combat.pk, kind="simple", steps="1"
    )
    assert (await _combat()).version == combat.version
    assert "Time out" in await _refused(dash, action="combat.start", characters=ids)
    await _ok(dash, action="session.resume")
    await expect(phones["vesper"], 'class="time-out"')
    await _ok(phones["vesper"], action="combat.act", combat=combat.pk, kind="simple", steps="1")

    # The narrator may end it during a Time out; an ended block says nothing frozen.
    await _ok(dash, action="session.time_out")
    seen = await _ok(dash, action="combat.end", combat=combat.pk)
    seen = await expect(dash, "Combat over", frames=seen)
    assert _block(seen, f"#combat-dashboard #combat-{combat.pk}").select(".combat-frozen") == []
    frames = await expect(phones["jack"], "Combat over")
    assert _block(frames, "#combat-phone article.combat").select(".combat-frozen") == []
    await _close(dash, *phones.values())


async def test_the_narrator_reorders_ties_sets_rage_rounds_and_ends_the_combat() -> None:
    t = await database_sync_to_async(bns_combat_evening)()
    dash, _ = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])
    tooth, _ = await connect(f"/ws/play/{t['tooth'].pk}/", t["tooth_player"])
    ids = [str(t[n].pk) for n in ("vesper", "tooth", "rosa")]
    seen = await _ok(dash, action="combat.start", characters=ids, surprise=str(t["rosa"].pk))
    await expect(
        dash, ("Surprise Action", "The seed names no rule for equal initiatives"), frames=seen
    )
    combat = await _combat()
    assert [f.name for f in (await _state()).fighters] == ["Tooth", "Vesper", "Rosa"]
    order = [str(t[n].pk) for n in ("vesper", "tooth", "rosa")]
    await _ok(dash, action="combat.reorder", combat=combat.pk, order=order)
    assert [f.name for f in (await _state()).fighters] == ["Vesper", "Tooth", "Rosa"]
    bad = [str(t[n].pk) for n in ("rosa", "vesper", "tooth")]
    assert "cannot act after" in await _refused(
        dash, action="combat.reorder", combat=combat.pk, order=bad
    )
    await _ok(
        dash, action="combat.rage", combat=combat.pk, character=str(t["tooth"].pk), rounds="1"
    )
    assert (await _state()).fighter(t["tooth"].pk).rage_rounds == 1
    seen = await _ok(dash, action="combat.end", combat=combat.pk)
    await expect(dash, "Combat over", frames=seen)
    await expect(tooth, "Combat over")
    assert "This combat is over." in await _refused(dash, action="combat.advance", combat=combat.pk)
    await _close(dash, tooth)


async def test_a_player_cannot_move_for_a_combat_she_is_not_in_nor_send_forged_frames() -> None:
    t, dash, phones = await _world()
    ids = [str(t[name].pk) for name in ("vesper", "jack")]
    await _ok(dash, action="combat.start", characters=ids)
    combat = await _combat()
    message = await _refused(phones["rosa"], action="combat.advance", combat=combat.pk)
    assert message == "That character is not in this combat."
    message = await _refused(phones["vesper"], action="combat.act", combat=combat.pk, kind="big")
    assert message == "'kind' must be standard or simple."
    message = await _refused(phones["vesper"], action="combat.start", characters=ids)
    assert message == "Unknown action."
    assert (await _combat()).version == combat.version
    await _close(dash, *phones.values())


async def test_a_met_dashboard_and_phone_show_no_combat() -> None:
    game = await database_sync_to_async(evening)()
    dash, first = await connect(f"/ws/narrate/{game['session'].pk}/", game["narrator"])
    phone, view = await connect(f"/ws/play/{game['helen'].pk}/", game["helen_player"])
    assert "combat" not in first.lower() and "combat-phone" not in view
    message = await _refused(
        dash, action="combat.start", characters=[str(game["helen"].pk), str(game["grady"].pk)]
    )
    assert message == "This chronicle's rules have no combat rounds."
    assert await drain(phone) == []
    await _close(dash, phone)


async def test_a_late_arrival_can_be_ticked_for_a_combat_at_once() -> None:
    t = await database_sync_to_async(bns_combat_evening)()
    dash, _ = await connect(f"/ws/narrate/{t['session'].pk}/", t["narrator"])

    @database_sync_to_async
    def latecomer():
        player = make_user("mara")
        mara = Character.objects.create(
            chronicle=t["chronicle"], name="Mara", player=player, physical_attribute=4
        )
        return mara, player

    mara, player = await latecomer()
    phone, _ = await connect(f"/ws/play/{mara.pk}/", player)
    frames = await expect(dash, 'hx-swap-oob="beforeend:#combat-people"')
    arrival = next(f for f in frames if "#combat-people" in f)
    assert f'name="characters" value="{mara.pk}"' in arrival
    assert f'type="radio" name="surprise" value="{mara.pk}"' in arrival
    assert "static-character" not in arrival
    await _close(dash, phone)


async def test_a_bns_phone_reconnecting_with_its_current_stamp_gets_pong() -> None:
    """Issue 14: a resumed phone's stamp has its ruleset's ``combat`` part,
    known from her chronicle; without it a bns phone got its whole view on
    every reconnect."""
    from tests.faults.phones import Phone

    t = await database_sync_to_async(bns_combat_evening)()
    rosa = Phone(f"/ws/play/{t['rosa'].pk}/", t["rosa_player"])
    await rosa.connect()
    stamp = rosa.stamp
    assert stamp == (await _stamps(t, "rosa"))[0]
    await rosa.drop()
    rosa.path += f"?v={stamp}"
    assert await rosa.connect() == '{"type": "pong"}'
    await rosa.close()
