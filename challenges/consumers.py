"""Websocket consumers: authenticate, translate one frame into one service call,
acknowledge, and render. They never call the rules engine or ``group_send``.

Client → server frames are JSON objects ``{"id": str, "action": str, ...}``
(htmx's ws extension sends a form's fields this way). Server → client frames are
either HTML fragments swapped in by id (the view) or JSON control frames:
``{"type": "ack", "id": ..., "status": "ok" | "already_done"}``,
``{"type": "error", "id": ..., "message": ...}`` and ``{"type": "pong"}``.
On every (re)connect the client gets its full current view.

Close codes: 4401 not logged in, 4403 not allowed here, 4404 nothing to play.
"""

from __future__ import annotations

import functools
import json
import logging
from types import SimpleNamespace
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.template.loader import render_to_string

from challenges import services, views
from challenges.realtime import character_group, narrators_group, session_group
from challenges.rules import RulesError

log = logging.getLogger(__name__)


class BadMessage(Exception):
    """A frame that is not a well-formed action; ``str()`` is shown to the user."""


def _field(message: dict, name: str, kind: type, *, required: bool = True, limit: int = 300):
    value = message.get(name)
    if value in (None, "") and not required:
        return None
    if kind is int:
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise BadMessage(f"'{name}' must be a number.") from None
        if not 0 <= value <= 10**6:
            raise BadMessage(f"'{name}' is out of range.")
        return value
    if not isinstance(value, str) or not value or len(value) > limit:
        raise BadMessage(f"'{name}' is missing or not valid.")
    return value


class BaseConsumer(AsyncWebsocketConsumer):
    """Shared frame handling: size cap, JSON parsing, dispatch, acks and errors."""

    actions: dict[str, str] = {}  # action name -> method name

    async def join(self, *groups: str) -> None:
        self.joined = list(groups)
        for group in groups:
            await self.channel_layer.group_add(group, self.channel_name)

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def send_json(self, payload: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(payload))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        raw = text_data if text_data is not None else ""
        msg_id = None
        try:
            if bytes_data is not None or len(raw.encode()) > settings.WS_MAX_MESSAGE_BYTES:
                raise BadMessage("That message is too large or not text.")
            try:
                message = json.loads(raw)
            except ValueError:
                raise BadMessage("That message is not valid JSON.") from None
            if not isinstance(message, dict):
                raise BadMessage("That message is not an action.")
            action = message.get("action")
            if action == "ping":
                await self.send_json({"type": "pong"})
                return
            if action == "sync":
                await self.send_view()
                return
            msg_id = _field(message, "id", str, limit=64)
            handler = self.actions.get(action) if isinstance(action, str) else None
            if handler is None:
                raise BadMessage("Unknown action.")
            await getattr(self, handler)(message, msg_id)
        except services.AlreadyDone:
            await self.send_json({"type": "ack", "id": msg_id, "status": "already_done"})
            return
        except (BadMessage, RulesError, services.ActionRefused) as error:
            await self.send_json({"type": "error", "id": msg_id, "message": str(error)})
            return
        await self.send_json({"type": "ack", "id": msg_id, "status": "ok"})

    async def send_view(self) -> None:
        raise NotImplementedError


@functools.lru_cache(maxsize=2)
def _time_out_html(time_out: bool) -> str:
    """The phone's time-out banner (out of band) for ``time_out``."""
    return render_to_string(
        "challenges/_time_out.html", {"session": SimpleNamespace(time_out=time_out), "oob": True}
    )


class PlayConsumer(BaseConsumer):
    """A player's phone for one of her characters in its chronicle's open session."""

    actions = {
        "challenge.open": "open_challenge",
        "challenge.bid": "bid",
        "challenge.relent": "relent",
        "challenge.throw": "throw",
        "challenge.declare": "declare",
    }

    async def connect(self) -> None:
        user = self.scope["user"]
        await self.accept()
        if not user.is_authenticated:
            await self.close(code=4401)
            return
        found = await database_sync_to_async(views.player_seat)(
            user, self.scope["url_route"]["kwargs"]["character_id"]
        )
        if found is None:
            await self.close(code=4403)
            return
        self.character, self.session = found
        groups = [character_group(self.character.pk)]
        if self.session is not None:
            groups.append(session_group(self.session.pk))
        await self.join(*groups)
        await self.send_view()

    @database_sync_to_async
    def _render_view(self) -> str:
        context = views.play_context(self.character, self.session)
        self.cards_shown = {view.pk for view in context["challenges"]}
        return render_to_string("challenges/play_live.html", context)

    @database_sync_to_async
    def _render_card(self, challenge_id: int) -> str | None:
        """Only the changed card (out of band) when the phone shows it and it is
        still open; None when the phone needs its whole view (a new challenge,
        a result that changes her sheet)."""
        if self.session is None or challenge_id not in getattr(self, "cards_shown", ()):
            return None
        card = views.phone_card(self.character, self.session, challenge_id)
        if card is None:
            return None
        return render_to_string("challenges/_card.html", {"c": card, "card_oob": True})

    async def send_view(self) -> None:
        await self.send(text_data=await self._render_view())

    @database_sync_to_async
    def _render_time_out(self) -> str:
        self.session.refresh_from_db()
        return render_to_string("challenges/_time_out.html", {"session": self.session, "oob": True})

    # Group events ---------------------------------------------------------
    async def challenge_updated(self, event: dict) -> None:
        # A bid or a first throw changes one card: send it, not the whole view
        # (with hundreds present, the view is mostly the opponent list).
        if html := await self._render_card(event["challenge_id"]):
            await self.send(text_data=html)
        else:
            await self.send_view()

    async def character_updated(self, event: dict) -> None:
        await self.send_view()

    async def session_updated(self, event: dict) -> None:
        if "time_out" in event:
            # Time out reaches every phone at once: the flag is in the event,
            # so a phone neither queries nor renders (one string per flag).
            self.session.time_out = bool(event["time_out"])
            await self.send(text_data=_time_out_html(self.session.time_out))
            return
        await self.send(text_data=await self._render_time_out())

    # Actions --------------------------------------------------------------
    def _require_session(self):
        if self.session is None:
            raise services.ActionRefused("No session is open tonight.")
        return self.session

    @database_sync_to_async
    def open_challenge(self, message: dict, msg_id: str) -> None:
        session = self._require_session()
        defender = views.character_in_session(session, _field(message, "defender", int))
        # The phone's Trait buttons carry "category:Trait"; a category field wins.
        bid = _field(message, "bid", str, limit=120)
        category = _field(message, "category", str, required=False, limit=20)
        if category is None:
            category, colon, bid = bid.partition(":")
            if not colon or not bid:
                raise BadMessage("Choose a Trait to bid.")
        services.challenge_open(
            session=session,
            challenger=self.character,
            defender=defender,
            category=category,
            bids=[bid],
            is_attack=message.get("is_attack") in (True, "on", "true", "1"),
            stakes=_field(message, "stakes", str, required=False) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def bid(self, message: dict, msg_id: str) -> None:
        services.challenge_bid(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            bids=[_field(message, "bid", str, limit=100)],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def relent(self, message: dict, msg_id: str) -> None:
        services.challenge_bid(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            bids=None,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def throw(self, message: dict, msg_id: str) -> None:
        services.challenge_throw(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            throw=_field(message, "throw", str, limit=10),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def declare(self, message: dict, msg_id: str) -> None:
        services.challenge_declare(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            count=_field(message, "count", int, required=False),
            user=self.scope["user"],
            msg_id=msg_id,
        )


class NarrateConsumer(BaseConsumer):
    """A narrator's dashboard of one session of a chronicle she narrates."""

    actions = {
        "session.time_out": "time_out",
        "session.resume": "resume",
        "static.open": "open_static",
        "simple.open": "open_simple",
        "challenge.void": "void",
    }

    async def connect(self) -> None:
        user = self.scope["user"]
        await self.accept()
        if not user.is_authenticated:
            await self.close(code=4401)
            return
        session = await database_sync_to_async(views.narrated_session)(
            user, self.scope["url_route"]["kwargs"]["session_id"]
        )
        if session is None:
            await self.close(code=4403)
            return
        self.session = session
        self.known: set[int] = set()
        self.known_roster: set[int] = set()
        await self.join(narrators_group(session.pk), session_group(session.pk))
        await self.send_view()

    @database_sync_to_async
    def _render_view(self) -> str:
        context = views.dashboard_context(self.session)
        self.known = {c.pk for c in context["challenges"]}
        self.known_roster = {entry.character.pk for entry in context["roster"]}
        return render_to_string("challenges/narrate_live.html", context)

    async def send_view(self) -> None:
        await self.send(text_data=await self._render_view())

    def _oob_row(self, template: str, context_of, known: set[int], pk: int, cause) -> str:
        """One dashboard row (a challenge or a roster entry), inserted if this
        dashboard has not shown it yet. ``cause`` (the event's version) lets
        every dashboard of this worker share one rendering; None renders anew."""
        insert = pk not in known
        known.add(pk)

        def render() -> str:
            context = context_of(self.session, pk)
            if context is None:
                return ""
            context["insert"] = insert
            return render_to_string(template, context)

        key = None if cause is None else (template, self.session.pk, pk, cause, insert)
        return views.shared_renders.get(key, render)

    @database_sync_to_async
    def _render_challenge(self, challenge_id: int, version: int | None = None) -> str:
        return self._oob_row(
            "challenges/_dashboard_row_oob.html",
            views.dashboard_row_context,
            self.known,
            challenge_id,
            version,
        )

    @database_sync_to_async
    def _render_roster_row(self, character_id: int, cause: tuple | None = None) -> str:
        return self._oob_row(
            "challenges/_roster_row_oob.html",
            views.roster_row_context,
            self.known_roster,
            character_id,
            cause,
        )

    @database_sync_to_async
    def _render_controls(self) -> str:
        self.session.refresh_from_db()
        return render_to_string(
            "challenges/_narrator_controls_oob.html", {"session": self.session, "oob": True}
        )

    async def challenge_updated(self, event: dict) -> None:
        html = await self._render_challenge(event["challenge_id"], event.get("version"))
        if html:
            await self.send(text_data=html)

    async def character_updated(self, event: dict) -> None:
        cause = None
        if "challenge_id" in event and "version" in event:
            cause = (event["challenge_id"], event["version"])
        if html := await self._render_roster_row(event["character_id"], cause):
            await self.send(text_data=html)

    async def session_updated(self, event: dict) -> None:
        await self.send(text_data=await self._render_controls())

    @database_sync_to_async
    def time_out(self, message: dict, msg_id: str) -> None:
        services.session_time_out(session=self.session, user=self.scope["user"], msg_id=msg_id)

    @database_sync_to_async
    def resume(self, message: dict, msg_id: str) -> None:
        services.session_resume(session=self.session, user=self.scope["user"], msg_id=msg_id)

    @database_sync_to_async
    def open_static(self, message: dict, msg_id: str) -> None:
        services.static_open(
            session=self.session,
            character=views.character_in_session(self.session, _field(message, "character", int)),
            category=_field(message, "category", str, limit=20),
            difficulty=_field(message, "difficulty", int),
            narrator_throw=_field(message, "narrator_throw", str, required=False, limit=10),
            stakes=_field(message, "stakes", str, required=False) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def open_simple(self, message: dict, msg_id: str) -> None:
        services.simple_test_open(
            session=self.session,
            character=views.character_in_session(self.session, _field(message, "character", int)),
            narrator_throw=_field(message, "narrator_throw", str, required=False, limit=10),
            stakes=_field(message, "stakes", str, required=False) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def void(self, message: dict, msg_id: str) -> None:
        services.challenge_void(
            challenge_id=_field(message, "challenge", int),
            reason=_field(message, "reason", str, required=False) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )
