"""Websocket consumers: authenticate, translate one frame into one service call,
acknowledge, and render. They never call the rules engine or ``group_send``.

Client → server frames are JSON objects ``{"id": str, "action": str, ...}``
(htmx's ws extension sends a form's fields this way). Server → client frames are
either HTML fragments swapped in by id (the view) or JSON control frames:
``{"type": "ack", "id": ..., "status": "ok" | "already_done"}``,
``{"type": "error", "id": ..., "message": ...}``, ``{"type": "pong"}`` and, to a
dashboard whose session was followed by another, ``{"type": "goto", "url": ...}``.
On every (re)connect the client gets its full current view.

Every frame is checked by ``challenges.schema`` (shape) and a per-connection
``challenges.ratelimit.TokenBucket`` before it reaches a service.

Heartbeat (``challenges.heartbeat``): every view frame starts with
``<!--v:STAMP-->``; the client pings ``{"action": "ping", "v": STAMP}`` about
every 10 seconds and gets ``pong`` when its view is current, else the full view;
``{"action": "sync"}`` always gets the full view. Both re-join the connection's
groups, because a Redis restarted empty has forgotten them.

Channel layer down (Redis killed): the socket stays open. Moves still commit
(the database is the truth; their broadcasts fail and are logged), receiving
from the layer is retried with a capped backoff, and the heartbeat repairs the
view and the group memberships once the layer is back.

An unexpected exception in an action (a bug) is logged with its traceback and
answered with an error frame naming its id (``SERVER_ERROR_MESSAGE``); the move
ran in a transaction, so nothing of it is kept, and the socket stays open.

Close codes: 4401 not logged in, 4403 not allowed here, 4404 nothing to play,
4429 too many messages (a flood). Every socket also joins its user's group
(``user_group``): when ``join_links_revoke`` ends Django sessions of hers,
each of her sockets reads its own session again and closes with 4401 if it
was one of them.

Connecting costs one trip to the database thread before the view: the socket
is accepted at once, then the Django session, the user and the seat are read
together (``BaseConsumer.signed_in``, ``narrator.wsauth``), on every connect.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from challenges import heartbeat, schema, services, views
from challenges.ratelimit import ACTION_COST, HEARTBEAT_COST, TokenBucket
from challenges.realtime import (
    character_group,
    chronicle_group,
    collecting,
    narrators_group,
    send_collected,
    session_group,
    user_group,
)
from challenges.rules import RulesError
from characters.services import character_sheet
from narrator import wsauth

log = logging.getLogger(__name__)

#: Pauses between retries of a failed channel-layer receive: first, longest (seconds).
LAYER_RETRY_SECONDS = (0.5, 3.0)


FLOOD_MESSAGE = "Too many messages at once: this connection is closed and will reconnect."
#: The answer to a move that raised something unexpected (logged with its traceback).
SERVER_ERROR_MESSAGE = "The server could not do that; a narrator can help. (error logged)"


@functools.lru_cache(maxsize=2)
def _time_out_html(time_out: bool) -> str:
    """The phone's time-out banner (out of band) for ``time_out``."""
    return render_to_string(
        "challenges/_time_out.html", {"session": SimpleNamespace(time_out=time_out), "oob": True}
    )


def _echoed_stamp(scope: dict) -> str | None:
    """The ``v`` of the socket URL's query (the stamp a reconnecting screen
    shows), if it looks like a stamp."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    value = query.get("v", [""])[0]
    return value if heartbeat.looks_like_stamp(value) else None


def _goto(session_id: int) -> dict[str, str]:
    """The control frame that sends a dashboard to session ``session_id``'s."""
    return {"type": "goto", "url": views.dashboard_url(session_id)}


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
    bucket: TokenBucket | None = None  # this connection's rate limit, made on first frame
    flooded = False
    #: What this socket's screen shows, as ``challenges.heartbeat`` parts.
    stamp_parts: heartbeat.Parts = {}
    _join_failing = False

    async def dispatch(self, message: dict) -> None:
        """Channels' dispatch without its ``aclose_old_connections()``: that call
        takes a turn on the database thread before *every* handler (the
        handshake's ``connect`` too, so in a reconnect storm the accept waited
        behind every queued view until Daphne refused the handshake), and each
        group event (a Time out to 1,500 phones: 1,500 events) queued for that
        single thread behind the moves. Every database access here goes
        through ``database_sync_to_async``, which closes stale connections
        itself, before and after each call."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    @database_sync_to_async
    def signed_in(self, find: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
        """``(user, find(user, *args))`` for the socket's logged-in user, in one
        trip to the database thread; ``(None, None)`` if no one is logged in
        (``narrator.wsauth``: the session is read again on every connect, so an
        ended or revoked session is refused). Sets ``scope["user"]``."""
        user = wsauth.resolve_user(self.scope)
        if not user.is_authenticated:
            return None, None
        return user, find(user, *args)

    async def join(self, *groups: str) -> None:
        """Join ``groups`` and the signed-in user's own group (``user_group``)."""
        self.joined = [*groups, user_group(self.scope["user"].pk)]
        await self.rejoin()

    async def rejoin(self) -> None:
        """Add this socket to its groups again (``group_add`` is idempotent).

        Run on connect and on every heartbeat. A failing layer is logged, not
        raised: the socket keeps working and the next heartbeat tries again.
        """
        failed = False
        for group in getattr(self, "joined", []):
            try:
                await self.channel_layer.group_add(group, self.channel_name)
            except Exception as error:  # noqa: BLE001 - retried on the next heartbeat
                failed = True
                # Warn once per outage per socket, not on every heartbeat.
                level = logging.DEBUG if self._join_failing else logging.WARNING
                log.log(
                    level, "joining %s failed (%r); retried on the next heartbeat", group, error
                )
        self._join_failing = failed

    async def user_sessions_ended(self, event: dict) -> None:
        """Some of this user's Django sessions ended (join links revoked):
        close with 4401 if this socket's is one of them (a narrator's password
        login of the same user keeps her socket)."""
        if not await database_sync_to_async(wsauth.still_signed_in)(self.scope):
            await self.close(code=4401)

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "joined", []):
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception as error:  # noqa: BLE001 - the group entry expires anyway
                log.warning("leaving %s failed (%r)", group, error)

    # Channels' AsyncConsumer assigns ``channel_receive`` before dispatching;
    # this property keeps that receive alive through a channel-layer outage
    # instead of letting one error end the consumer with the socket still open.
    @property
    def channel_receive(self):
        return self._receive_from_layer

    @channel_receive.setter
    def channel_receive(self, receive) -> None:
        self._layer_receive = receive

    async def _receive_from_layer(self) -> dict:
        pause, longest = LAYER_RETRY_SECONDS
        failures = 0
        while True:
            try:
                return await self._layer_receive()
            except Exception as error:  # noqa: BLE001 - the layer is down: retry
                failures += 1
                if failures == 1:
                    log.warning("channel layer receive failed (%r); retrying", error)
                await asyncio.sleep(pause * (0.5 + random.random() / 2))
                pause = min(pause * 2, longest)

    async def send_json(self, payload: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(payload))

    @property
    def stamp(self) -> str:
        """The stamp of what this socket's screen shows now."""
        return heartbeat.digest(self.stamp_parts)

    async def send_stamped(self, html: str) -> None:
        """Send a view frame (whole or partial) headed by the current stamp."""
        await self.send(text_data=f"<!--v:{self.stamp}-->{html}")

    async def answer_heartbeat(self, message: dict) -> None:
        """Answer ``ping`` with ``pong`` if the echoed stamp ``v`` (default:
        the last one sent) is current, else with the full view; answer ``sync``
        with the full view. Both re-join the groups first. One query when current."""
        await self.rejoin()
        if message.get("action") == "ping":
            echoed = message.get("v", self.stamp)
            if echoed == heartbeat.digest(await self.current_parts()):
                await self.send_json({"type": "pong"})
                return
        await self.send_view()

    async def current_parts(self) -> heartbeat.Parts:
        raise NotImplementedError

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        # Entry checks before anything else: the frame's shape (challenges.schema)
        # and this connection's rate (challenges.ratelimit). A flood gets one
        # error, then the socket is closed with 4429; later frames are dropped.
        if self.flooded:
            return
        try:
            action, message = schema.parse_frame(text_data, bytes_data, allowed=set(self.actions))
            refused = None
        except schema.FrameRefused as error:
            action, message, refused = None, {}, error
        if self.bucket is None:
            self.bucket = TokenBucket(rate=settings.WS_RATE, burst=settings.WS_BURST)
        if not self.bucket.take(HEARTBEAT_COST if action in schema.HEARTBEAT else ACTION_COST):
            self.flooded = True
            msg_id = refused.msg_id if refused else message.get("id")
            msg_id = msg_id if isinstance(msg_id, str) else None
            await self.send_json({"type": "error", "id": msg_id, "message": FLOOD_MESSAGE})
            await self.close(code=4429)
            return
        if refused is not None:
            await self.send_json({"type": "error", "id": refused.msg_id, "message": str(refused)})
            return
        msg_id = None
        try:
            if action in ("ping", "sync"):
                await self.answer_heartbeat(message)
                return
            msg_id = message["id"]
            # The move's broadcasts go out from here, on the event loop, before
            # its ack (a refused move committed nothing and has none).
            with collecting() as outbox:
                try:
                    await getattr(self, self.actions[action])(message, msg_id)
                finally:
                    await send_collected(outbox)
        except services.AlreadyDone:
            await self.send_json({"type": "ack", "id": msg_id, "status": "already_done"})
            return
        except (BadMessage, RulesError, services.ActionRefused) as error:
            await self.send_json({"type": "error", "id": msg_id, "message": str(error)})
            return
        except Exception:
            # A bug, not a refusal: the move ran in a transaction that rolled
            # back, so answer it and keep the socket (closing with 1011 made
            # the phone resend the same failing move on every reconnect).
            log.exception("%s %r failed", action, msg_id)
            await self.send_json({"type": "error", "id": msg_id, "message": SERVER_ERROR_MESSAGE})
            return
        await self.send_json({"type": "ack", "id": msg_id, "status": "ok"})

    async def send_view(self) -> None:
        raise NotImplementedError


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
        await self.accept()
        user, found = await self.signed_in(
            views.player_seat, self.scope["url_route"]["kwargs"]["character_id"]
        )
        if user is None:
            await self.close(code=4401)
            return
        if found is None:
            await self.close(code=4403)
            return
        self.character, self.session = found
        groups = [character_group(self.character.pk), chronicle_group(self.character.chronicle_id)]
        if self.session is not None:
            groups.append(session_group(self.session.pk))
        await self.join(*groups)
        # A reconnect names the stamp its screen shows: if it is current, the
        # phone keeps its screen and gets "pong" (a reconnect storm after a
        # wifi drop then renders nothing).
        if (echoed := _echoed_stamp(self.scope)) and await self._resume(echoed):
            await self.send_json({"type": "pong"})
            return
        await self.send_view()

    @database_sync_to_async
    def _resume(self, echoed: str) -> bool:
        """True if ``echoed`` is the stamp of her current view; then learn what
        that screen shows (her cards' ids and versions) without rendering.
        The cards are read before the stamp: a move committed in between
        changes the stamp, so the phone gets its whole view instead."""
        if self.session is None:
            return False
        shown, done = views.phone_cards_shown(self.character, self.session)
        parts = self._parts()
        if heartbeat.digest(parts) != echoed:
            return False
        self.stamp_parts, self.shown, self.done, self.sheet = parts, shown, done, None
        return True

    def _parts(self) -> heartbeat.Parts:
        return heartbeat.play_parts(
            self.character.pk, self.session and self.session.pk, self.character.chronicle_id
        )

    def _follow_seat(self) -> bool:
        """Re-seat her if her chronicle's open session is no longer the one this
        phone shows (a session started or ended, ``session.changed``, or a
        missed one seen in the stamp's ``seat``). True if it moved; then the
        stamp parts are those of the new seat."""
        seat = self.stamp_parts.get("seat", (0,))[0]
        if seat == (self.session.pk if self.session is not None else 0):
            return False
        found = views.player_seat(self.scope["user"], self.character.pk)
        if found is None:
            return False
        self.character, self.session = found
        self.stamp_parts = self._parts()
        return True

    async def current_parts(self) -> heartbeat.Parts:
        return await database_sync_to_async(self._parts)()

    @database_sync_to_async
    def _render_view(self) -> str:
        # Stamp before rendering: a move committed in between makes the stamp
        # stale (one extra resync), never a stale view with a current stamp.
        self.stamp_parts = self._parts()
        old = self.session
        moved = self._follow_seat()
        # A new seat gets the "Challenge someone" form again (shown, or hidden without a session).
        context = views.play_context(self.character, self.session, with_opponents=moved)
        context["start_oob"] = moved
        self.regroup = (old, self.session) if moved else None
        self.sheet = context["sheet"]
        self.shown = {view.pk: view.challenge.version for view in context["challenges"]}
        self.done = [view.pk for view in context["challenges"] if view.is_resolved]
        return render_to_string("challenges/play_live.html", context)

    @database_sync_to_async
    def _render_change(self, challenge_id: int, version: int | None) -> str | None:
        """The frame for one changed challenge of hers: "" when the phone already
        shows that version, None when it needs its whole view (her sheet changed:
        a result cost her a Trait or a health level, or the change cannot be
        placed), else one card frame (``_card_frame.html``): replaced in place,
        appended to the open ones, or moved on top of the results (the oldest
        result beyond :data:`views.RECENT_RESOLVED` taken off). One query; her
        sheet is the one of her last whole view (only her own results change
        it, and those come here as a whole view)."""
        shown = getattr(self, "shown", None)
        if self.session is None or shown is None:
            return None
        if version is not None and shown.get(challenge_id, -1) >= version:
            return ""
        # Resumed without a render: read it, and send it with the card (what
        # the screen's sheet shows is not known); kept once it is sent.
        resumed = self.sheet is None
        sheet = self.sheet or character_sheet(self.character, self.session)
        card = views.phone_challenge(self.character, self.session, challenge_id, sheet, version)
        if card is None:
            return None
        version = card.challenge.version
        old = shown.get(challenge_id)
        if old is not None and old >= version:
            return ""
        screen = self.stamp_parts.get("screen")
        if screen is None or (old is None and challenge_id <= screen[2]):
            return None  # an older challenge she has not on screen: redraw all
        state = card.state
        if card.is_resolved and (
            self.character.pk in state.wounds
            or any(loss.character_id == self.character.pk for loss in state.losses)
        ):
            return None
        # Her Traits at risk changed (a bid of hers went in, or a challenge she
        # bid in is over): her sheet and bid buttons go with the card.
        risk_changed = resumed or (bool(card.my_bids) and not card.is_resolved) != (
            challenge_id in sheet.risked_in
        )
        if risk_changed and not resumed:
            # Only this challenge's bids of hers changed: no need to read her sheet.
            sheet = sheet.with_risk(challenge_id, state.category, card.my_bid_copies)
            views._with_sheet(card, sheet)
        self.sheet = sheet
        # Keep the stamp equal to what the screen will show: its "screen" part
        # counts her challenges (count, sum of versions, highest id). If it was
        # already behind, it stays unequal to the truth: one extra resync.
        count, total, top, *rest = screen
        if old is None:
            count, total, top = count + 1, total + version, max(top, challenge_id)
        else:
            total += version - old
        self.stamp_parts = {**self.stamp_parts, "screen": (count, total, top, *rest)}
        shown[challenge_id] = version
        remove: list[int] = []
        if not card.is_resolved:
            where = "replace" if old is not None else "open"
        elif challenge_id in self.done:
            where = "replace"
        else:
            where = "done"
            if old is not None:
                remove.append(challenge_id)
            self.done.insert(0, challenge_id)
            while len(self.done) > views.RECENT_RESOLVED:
                gone = self.done.pop()
                remove.append(gone)
                shown.pop(gone, None)
        frame = render_to_string(
            "challenges/_card_frame.html", {"card": card, "where": where, "remove": remove}
        )
        if risk_changed:
            frame += render_to_string(
                "challenges/play_sheet_oob.html", {"sheet": sheet, "session": self.session}
            )
        return frame

    async def send_view(self) -> None:
        html = await self._render_view()
        if getattr(self, "regroup", None):
            old, new = self.regroup
            self.regroup = None
            await self._move_groups(old, new)
        await self.send_stamped(html)

    async def _move_groups(self, old, new) -> None:
        """Leave the session group of ``old`` and join ``new``'s (sessions or None)."""
        if old is not None:
            gone = session_group(old.pk)
            self.joined = [g for g in self.joined if g != gone]
            try:
                await self.channel_layer.group_discard(gone, self.channel_name)
            except Exception as error:  # noqa: BLE001 - the group entry expires anyway
                log.warning("leaving %s failed (%r)", gone, error)
        if new is not None:
            self.joined.append(session_group(new.pk))
        await self.rejoin()

    @database_sync_to_async
    def _render_time_out(self) -> str:
        self.session.refresh_from_db()
        self.stamp_parts = {**self.stamp_parts, "session": heartbeat.session_part(self.session)}
        return render_to_string("challenges/_time_out.html", {"session": self.session, "oob": True})

    # Group events ---------------------------------------------------------
    async def challenge_updated(self, event: dict) -> None:
        # One changed card, not the whole view: a whole view costs ~9 queries
        # and every move of a challenge reaches both phones.
        html = await self._render_change(event["challenge_id"], event.get("version"))
        if html is None:
            await self.send_view()
        elif html:
            await self.send_stamped(html)

    async def character_updated(self, event: dict) -> None:
        # A narrator edited her sheet (challenges.signals): redraw it all.
        try:
            await database_sync_to_async(self.character.refresh_from_db)()
        except type(self.character).DoesNotExist:
            await self.close(code=4403)
            return
        await self.send_view()

    async def session_updated(self, event: dict) -> None:
        if "time_out" in event:
            # Time out reaches every phone at once: the flag is in the event,
            # so a phone neither queries nor renders (one string per flag).
            self.session.time_out = bool(event["time_out"])
            ended = self.stamp_parts.get("session", (0, 0))[1]
            self.stamp_parts = {**self.stamp_parts, "session": (int(self.session.time_out), ended)}
            await self.send_stamped(_time_out_html(self.session.time_out))
            return
        await self.send_stamped(await self._render_time_out())

    async def session_changed(self, event: dict) -> None:
        # A session started or ended in her chronicle: her whole view, re-seated.
        await self.send_view()

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
        "session.start": "start_session",
        "session.end": "end_session",
        "presence.set": "set_presence",
    }

    async def connect(self) -> None:
        await self.accept()
        user, session = await self.signed_in(
            views.narrated_session, self.scope["url_route"]["kwargs"]["session_id"]
        )
        if user is None:
            await self.close(code=4401)
            return
        if session is None:
            await self.close(code=4403)
            return
        self.session = session
        # Shown open: if it ends while this dashboard shows it and another
        # session opens, a missed session.changed is repaired on the next ping.
        self.shown_open = session.ended_at is None
        self.known: dict[int, int] = {}  # challenge id -> version shown
        self.places: dict[int, tuple] = {}  # challenge id -> views.dashboard_place()
        # character id -> (health, lost, on a break)
        self.known_roster: dict[int, tuple[int, int, int]] = {}
        await self.join(
            narrators_group(session.pk),
            session_group(session.pk),
            chronicle_group(session.chronicle_id),
        )
        await self.send_view()

    def _parts(self) -> heartbeat.Parts:
        return heartbeat.dashboard_parts(self.session.pk, views.DASHBOARD_LIMIT)

    async def current_parts(self) -> heartbeat.Parts:
        return await database_sync_to_async(self._parts)()

    @staticmethod
    def _roster_entry(entry) -> tuple[int, int, int]:
        return (
            int(entry.sheet.health),
            sum(c.lost for c in entry.sheet.categories),
            int(entry.sheet.on_break),
        )

    @database_sync_to_async
    def _render_view(self, with_choices: bool = False) -> str:
        """The whole dashboard; ``with_choices``: also the static challenge's
        and simple test's character choices (who is here changed)."""
        self.stamp_parts = self._parts()  # before rendering, as on a phone
        context = views.dashboard_context(self.session)
        if self.shown_open and self.session.ended_at is not None:
            self.shown_open = False
            following = self.session.chronicle.open_session()
            if following is not None:
                return json.dumps(_goto(following.pk))
        self.known = {c.pk: c.version for c in context["challenges"]}
        self.places = {row.pk: views.dashboard_place(row) for row in context["rows"]}
        self.known_roster = {e.character.pk: self._roster_entry(e) for e in context["roster"]}
        html = render_to_string("challenges/narrate_live.html", context)
        if with_choices:
            html += render_to_string("challenges/_character_choices_oob.html", context)
        return html

    async def send_view(self, with_choices: bool = False) -> None:
        html = await self._render_view(with_choices)
        if html.startswith("{"):  # a control frame: this dashboard moves on
            await self.send(text_data=html)
            return
        await self.send_stamped(html)

    def _oob_row(self, template: str, context_of, known: dict, pk: int, cause, shown_of) -> str:
        """One dashboard row (a challenge or a roster entry), inserted if this
        dashboard has not shown it yet, and recorded in ``known`` as
        ``shown_of(context)`` (what the stamp counts). ``cause`` (the event's
        version) lets every dashboard of this worker share one rendering; None
        renders anew."""
        insert = pk not in known

        def render() -> tuple[str, Any]:
            context = context_of(self.session, pk)
            if context is None:
                return "", None
            context["insert"] = insert
            return render_to_string(template, context), shown_of(context)

        key = None if cause is None else (template, self.session.pk, pk, cause, insert)
        html, shown = views.shared_renders.get(key, render)
        if html:
            known[pk] = shown
        return html

    @database_sync_to_async
    def _render_challenge(self, challenge_id: int, version: int | None = None) -> str:
        html = self._place_row(challenge_id, version)
        self.stamp_parts = {**self.stamp_parts, "challenges": heartbeat.aggregate(self.known)}
        return html

    def _place_row(self, challenge_id: int, version: int | None) -> str:
        """The frame putting one changed challenge where it belongs on this
        dashboard (``views.dashboard_move``: a move resets its "waiting since",
        a result goes to the top of the results, the last result beyond
        ``views.DASHBOARD_LIMIT`` goes). The row itself is rendered once per
        version for every dashboard of this worker; only its placing is this
        dashboard's. "" when it is not this session's."""

        def render() -> tuple[str, Any]:
            context = views.dashboard_row_context(self.session, challenge_id, version=version)
            if context is None:
                return "", None
            row = context["row"]
            html = render_to_string("challenges/_dashboard_row.html", context)
            return mark_safe(html), (row.challenge.version, views.dashboard_place(row))

        key = None if version is None else ("dashboard-row", self.session.pk, challenge_id, version)
        html, shown = views.shared_renders.get(key, render)
        if not html:
            return ""
        row_version, place = shown
        if self.known.get(challenge_id, 0) > row_version:
            return ""  # the screen already shows a later version
        remove, where = views.dashboard_move(self.places, challenge_id, place)
        for gone in remove:
            self.known.pop(gone, None)
        if where:
            self.known[challenge_id] = row_version
        return render_to_string(
            "challenges/_dashboard_row_oob.html",
            {"row_html": html, "where": where, "remove": remove},
        )

    @database_sync_to_async
    def _render_roster_row(self, character_id: int, cause: tuple | None = None) -> str:
        html = self._oob_row(
            "challenges/_roster_row_oob.html",
            views.roster_row_context,
            self.known_roster,
            character_id,
            cause,
            lambda context: self._roster_entry(context["entry"]),
        )
        self.stamp_parts = {**self.stamp_parts, "roster": heartbeat.roster_part(self.known_roster)}
        return html

    @database_sync_to_async
    def _render_controls(self) -> str:
        self.session.refresh_from_db()
        self.stamp_parts = {**self.stamp_parts, "session": heartbeat.session_part(self.session)}
        return render_to_string(
            "challenges/_narrator_controls_oob.html", {"session": self.session, "oob": True}
        )

    async def challenge_updated(self, event: dict) -> None:
        html = await self._render_challenge(event["challenge_id"], event.get("version"))
        if html:
            await self.send_stamped(html)

    async def character_updated(self, event: dict) -> None:
        if event.get("presence"):
            # A narrator marked someone present, on a break or absent: the roster
            # and the static/simple choices change together (rare: the whole view).
            await self.send_view(with_choices=True)
            return
        cause = None
        if "challenge_id" in event and "version" in event:
            cause = (event["challenge_id"], event["version"])
        if html := await self._render_roster_row(event["character_id"], cause):
            await self.send_stamped(html)

    async def session_updated(self, event: dict) -> None:
        await self.send_stamped(await self._render_controls())

    async def session_changed(self, event: dict) -> None:
        # Another session of the chronicle is open now: this dashboard goes
        # there (static/narrator/app.js answers "goto"); none: it shows its own
        # session ended, with the button that starts the next.
        session_id = int(event.get("session_id") or 0)
        if session_id and session_id != self.session.pk:
            self.shown_open = False
            await self.send_json(_goto(session_id))
            return
        await self.send_view()

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
    def start_session(self, message: dict, msg_id: str) -> None:
        services.session_start(
            chronicle=self.session.chronicle,
            user=self.scope["user"],
            name=_field(message, "name", str, required=False, limit=200) or "",
            number=_field(message, "number", int),
            msg_id=msg_id,
        )

    @database_sync_to_async
    def end_session(self, message: dict, msg_id: str) -> None:
        services.session_end(session=self.session, user=self.scope["user"], msg_id=msg_id)

    @database_sync_to_async
    def set_presence(self, message: dict, msg_id: str) -> None:
        services.presence_set(
            session=self.session,
            character=views.character_in_session(self.session, _field(message, "character", int)),
            status=_field(message, "status", str, limit=10),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def void(self, message: dict, msg_id: str) -> None:
        # A ruling is kept in the history with its reason: a dashboard must give one.
        reason = (_field(message, "reason", str, required=False) or "").strip()
        if not reason:
            raise BadMessage("Give a reason to void a challenge: it is kept in the history.")
        services.challenge_void(
            challenge_id=_field(message, "challenge", int),
            reason=reason,
            user=self.scope["user"],
            msg_id=msg_id,
        )
