"""What every websocket consumer shares (:class:`BaseConsumer`): the signed-in
user, groups joined again on a heartbeat after a channel-layer failure (and at
least every ``REJOIN_SECONDS``), a channel-layer receive retried
through an outage, and frame handling: schema, rate limit, dispatch, acks and
errors. The protocol is described in :mod:`challenges.consumers`."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from challenges import heartbeat, schema, services
from challenges.ratelimit import (
    ACTION_COST,
    FLOOD_MESSAGE,
    HEARTBEAT_COST,
    OWED_HEARTBEAT_SECONDS,
    REFUSED_MESSAGE,
    FailedLogins,
    Limiter,
    Verdict,
)
from challenges.realtime import (
    collecting,
    layer_failed,
    layer_failures,
    send_collected,
    user_group,
)
from challenges.rules import RulesError
from narrator import wsauth

log = logging.getLogger(__name__)

#: Pauses between retries of a failed channel-layer receive: first, longest (seconds).
LAYER_RETRY_SECONDS = (0.5, 3.0)
#: Seconds a closed socket waits for the channel layer to take it out of its
#: groups (a dashboard's feed too). A layer that does not answer (a hung
#: Redis: each command waits ``REDIS_SOCKET_TIMEOUT``, twice) would otherwise
#: hold a stopping Uvicorn, which waits for every socket's consumer to end;
#: memberships not removed expire (channels-redis ``group_expiry``).
LEAVE_SECONDS = 2.0
#: The close code of a socket whose server is stopping: "service restart",
#: on which the phone's script reconnects at once (to another worker).
SERVICE_RESTART = 1012
#: A socket re-joins its groups on a heartbeat at least this often (seconds),
#: and on the first heartbeat after any channel-layer failure this process saw
#: (``BaseConsumer.rejoin_if_due``). Issue 14: re-joining on every heartbeat
#: was half of a ping's CPU on channels-redis (0.52-0.60 -> 0.26-0.27 ms, in
#: process), a Redis round trip for each of 1,500 phones every 10 s.
REJOIN_SECONDS = 60.0
#: Stamps of the latest frames a socket sent, kept to know a heartbeat that
#: crossed them (``BaseConsumer.shown_after_frames``); a dashboard keeps more
#: (``NarrateConsumer.sent_stamps_kept``).
SENT_STAMPS_KEPT = 16
#: Follows the stamp of a whole view that answers a heartbeat (ping or sync).
HEARTBEAT_MARK = "<!--heartbeat-->"

#: A ping echoing a stamp this socket never sent gets the whole view at most
#: once in this many seconds (a heartbeat's interval: a phone's screen left
#: from an earlier connection needs one); the others get
#: :data:`UNKNOWN_STAMP_MESSAGE` and cost no query.
UNKNOWN_STAMP_SECONDS = 10.0
UNKNOWN_STAMP_MESSAGE = (
    "That view was never sent on this connection: its whole view comes at most every 10 seconds."
)

#: Sent instead of a frame larger than the server accepts (``WS_MAX_FRAME_BYTES``).
FRAME_TOO_LARGE_MESSAGE = (
    "This screen ({kib} KiB) is too large to send: narrow it (a filter, fewer rows) "
    "or ask the organisers to raise WS_MAX_FRAME_BYTES."
)


def frame_bytes(text: str) -> int:
    """The size of ``text`` as a websocket frame's UTF-8 payload (bytes),
    encoded only when it could pass ``settings.WS_MAX_FRAME_BYTES`` (a
    character is at most 4 bytes); below that, its length in characters."""
    if len(text) * 4 <= settings.WS_MAX_FRAME_BYTES:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


#: Close codes when the rights behind a socket end while it is open
#: (``BaseConsumer.rights_refusal``), the same a new socket would get: its
#: login ended (the client goes to the login page), or it is signed in but
#: what it serves is no longer hers (the client goes to her home page, her
#: remaining characters and chronicles).
CLOSE_SIGNED_OUT = 4401
CLOSE_SEAT_LOST = 4410
#: At connect: signed in, but what the socket asks for is not hers.
CLOSE_NOT_ALLOWED = 4403

#: The answer to a move that raised something unexpected (logged with its traceback).
SERVER_ERROR_MESSAGE = "The server could not do that; a narrator can help. (error logged)"


# One round trip for every group of a socket on one Redis shard: what
# channels-redis's group_add does for one (ZADD with the time, then EXPIRE).
_JOIN_SCRIPT = """
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[2], ARGV[1])
  redis.call('EXPIRE', key, ARGV[3])
end
return #KEYS
"""


def join_batches(layer, groups: list[str]) -> list[list[str]]:
    """``groups`` split as :func:`join_groups` takes them: on channels-redis
    one list per shard (the groups kept on one Redis server), else one list
    per group (a layer's own ``group_add`` each)."""
    if not isinstance(layer, RedisChannelLayer):
        return [[group] for group in groups]
    shards: dict[int, list[str]] = {}
    for group in groups:
        shards.setdefault(layer.consistent_hash(group), []).append(group)
    return list(shards.values())


async def join_groups(layer, groups: list[str], channel: str) -> None:
    """Add ``channel`` to ``groups`` (a batch of :func:`join_batches`):
    channels-redis's ``group_add`` for each, but on Redis in one script call
    (one round trip instead of two per group: 0.58 -> 0.15 ms of CPU for a
    phone's four groups). Raises what the layer raises."""
    if not isinstance(layer, RedisChannelLayer):
        for group in groups:
            await layer.group_add(group, channel)
        return
    for group in groups:
        assert layer.require_valid_group_name(group), "Group name not valid"
    assert layer.require_valid_channel_name(channel), "Channel name not valid"
    connection = layer.connection(layer.consistent_hash(groups[0]))
    script = connection.register_script(_JOIN_SCRIPT)  # EVALSHA, loaded again if Redis forgot it
    keys = [layer._group_key(group) for group in groups]
    await script(keys=keys, args=[channel, time.time(), layer.group_expiry])


async def receive_retrying(receive: Callable[[], Awaitable[dict]]) -> dict:
    """The next message of ``receive()`` (a channel layer's receive of one
    channel), retried through a layer outage with growing pauses
    (:data:`LAYER_RETRY_SECONDS`, jittered) instead of raising: a socket, or
    a worker's dashboard feed, keeps listening until the layer is back.
    Cancellation is not caught."""
    pause, longest = LAYER_RETRY_SECONDS
    failures = 0
    while True:
        try:
            return await receive()
        except Exception as error:  # noqa: BLE001 - the layer is down: retry
            layer_failed()
            failures += 1
            if failures == 1:
                log.warning("channel layer receive failed (%r); retrying", error)
            await asyncio.sleep(pause * (0.5 + random.random() / 2))
            pause = min(pause * 2, longest)


_failed_logins: FailedLogins | None = None


def failed_logins() -> FailedLogins:
    """This process's count of failed websocket logins per address, made on
    first use from the settings."""
    global _failed_logins
    if _failed_logins is None:
        _failed_logins = FailedLogins(
            rate=settings.WS_LOGIN_FAILURES_RATE, burst=settings.WS_LOGIN_FAILURES_BURST
        )
    return _failed_logins


def _client_address(scope: dict) -> str:
    """The client's address as the ASGI server reports it (behind the
    deployment's proxy, its ``X-Forwarded-For``: ``deploy/serve``); "" if
    none is given."""
    client = scope.get("client")
    return str(client[0]) if client else ""


def _ignore_outcome(task: asyncio.Task) -> None:
    """Retrieve the end of a task no one awaits any more (no warning logged)."""
    if not task.cancelled():
        task.exception()


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


def _names(message: dict, name: str, single: str | None = None, *, most: int = 5) -> list[str]:
    """A list of Trait names from ``message[name]`` (or, if absent, the one name
    in ``message[single]``): at most ``most`` non-empty strings of at most
    100 characters each; BadMessage otherwise. [] when neither is given."""
    value = message.get(name)
    if value is None and single is not None:
        one = message.get(single)
        value = [] if one in (None, "") else [one]
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if (
        not isinstance(value, list)
        or len(value) > most
        or not all(isinstance(v, str) and 0 < len(v) <= 100 for v in value)
    ):
        raise BadMessage(f"'{name}' must be a list of Trait names.")
    return value


def _flag(message: dict, name: str) -> bool:
    """A checkbox or boolean field: True for true, "on", "true", "1"."""
    return message.get(name) in (True, "on", "true", "1")


def pool_spec(message: dict) -> dict:
    """Issue 13: the pool a ``roll.*`` frame describes, checked by
    ``services.roll_spec`` (an unknown Attribute or Skill is refused there)."""
    modifiers = []
    if message.get("modifier"):
        modifiers.append((message.get("reason") or "Narrator", message["modifier"]))
    return services.roll_spec(
        attribute=message["attribute"],
        skill=message.get("skill"),
        specialty=bool(message.get("specialty")),
        equipment=message.get("equipment") or 0,
        modifiers=modifiers,
        willpower_allowed=message.get("willpower_allowed", True),
    )


class RollActions:
    """Issue 13: the ``roll.*`` taps a phone and a dashboard share, each one
    call of ``challenges.services.rolls``; ``roll_actor(roll_id, side)``
    names who taps (``side``: "character" or "opponent" of the roll)."""

    scope: dict

    def roll_actor(self, roll_id: int, side: str):
        raise NotImplementedError

    @database_sync_to_async
    def roll_resist(self, message: dict, msg_id: str) -> None:
        services.roll_resist(
            roll_id=message["roll"],
            character=self.roll_actor(message["roll"], "opponent"),
            spec=pool_spec(message),
            willpower=message["willpower"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def roll_extended_roll(self, message: dict, msg_id: str) -> None:
        services.roll_extended_roll(
            roll_id=message["roll"],
            character=self.roll_actor(message["roll"], "character"),
            willpower=message["willpower"],
            user=self.scope["user"],
            msg_id=msg_id,
        )


class BaseConsumer(AsyncWebsocketConsumer):
    """Shared frame handling: size cap, JSON parsing, dispatch, acks and errors."""

    actions: dict[str, str] = {}  # action name -> method name
    limiter: Limiter | None = None  # this connection's rate limit, made on first frame
    flooded = False
    #: A heartbeat the limiter refused, answered ``OWED_HEARTBEAT_SECONDS``
    #: later (``heartbeat_owed``); None: none owed.
    owed_heartbeat: dict | None = None
    _stamp_parts: heartbeat.Parts = {}
    #: The stamps of the latest frames sent on this socket (``send_stamped``),
    #: oldest first (a dict for its order and O(1) lookups), at most
    #: :attr:`sent_stamps_kept`; made on first send.
    sent_stamps: dict[str, None] | None = None
    sent_stamps_kept = SENT_STAMPS_KEPT
    #: ``heartbeat.now()`` when ``stamp_parts`` was last set (never: +inf).
    stamped_at = float("inf")
    _join_failing = False
    #: ``layer_failures()`` when the groups were last joined, and when
    #: (``heartbeat.now()``); never: -1 and -inf.
    _joined_failures = -1
    #: ``heartbeat.now()`` when a ping echoing a stamp never sent here was
    #: last answered with the whole view (never: -inf).
    _unknown_stamp_at = float("-inf")
    #: The close code :meth:`recheck_rights` closed this socket with (None: open).
    closed_for_rights: int | None = None
    _joined_at = float("-inf")

    @property
    def stamp_parts(self) -> heartbeat.Parts:
        """What this socket's screen shows, as ``challenges.heartbeat`` parts;
        setting them records when (``stamped_at``), so that a ping is answered
        from a snapshot only if it was read after."""
        return self._stamp_parts

    @stamp_parts.setter
    def stamp_parts(self, parts: heartbeat.Parts) -> None:
        self._stamp_parts = parts
        self.stamped_at = heartbeat.now()

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

    async def sign_in(self, find: Callable[..., Any], *args: Any) -> Any:
        """Accept the handshake and find what this socket serves for its
        signed-in user, ``find(user, *args)`` (:meth:`signed_in`); None
        when the socket was closed instead, the caller's connect then ends:

        - its address failed to log in more than ``FailedLogins`` allows
          (``settings.WS_LOGIN_FAILURES_RATE`` / ``_BURST``): the handshake
          is refused unaccepted (HTTP 403), nothing read;
        - no session cookie: 4401 without a trip to the database thread;
        - a session that logs no one in: 4401, charged to its address;
        - signed in but nothing found for her: 4403.
        """
        address = _client_address(self.scope)
        failures = failed_logins()
        if not failures.allowed(address):
            log.info("websocket handshake from %s refused: too many failed logins", address)
            await self.close()
            return None
        await self.accept()
        if not getattr(self.scope.get("session"), "session_key", None):
            failures.failed(address)
            await self.close(code=CLOSE_SIGNED_OUT)
            return None
        user, found = await self.signed_in(find, *args)
        if user is None:
            failures.failed(address)
            await self.close(code=CLOSE_SIGNED_OUT)
            return None
        if found is None:
            await self.close(code=CLOSE_NOT_ALLOWED)
            return None
        return found

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
        """Add this socket to its groups again (``group_add`` is idempotent;
        on channels-redis all of them in one round trip, :func:`join_groups`).

        Run on connect, when the groups change, and on a heartbeat when
        :meth:`rejoin_if_due`. A failing layer is logged, not raised: the
        socket keeps working and the next heartbeat tries again.
        """
        self._joined_failures = layer_failures()  # a failure from now on: join again
        self._joined_at = heartbeat.now()
        failed = False
        for groups in join_batches(self.channel_layer, getattr(self, "joined", [])):
            try:
                await join_groups(self.channel_layer, groups, self.channel_name)
            except Exception as error:  # noqa: BLE001 - retried on the next heartbeat
                layer_failed()
                failed = True
                # Warn once per outage per socket, not on every heartbeat.
                level = logging.DEBUG if self._join_failing else logging.WARNING
                log.log(
                    level,
                    "joining %s failed (%r); retried on the next heartbeat",
                    ", ".join(groups),
                    error,
                )
        self._join_failing = failed

    async def rejoin_if_due(self) -> None:
        """:meth:`rejoin`, if this process's channel layer failed since this
        socket last joined (it may have come back empty: Redis restarted
        without persistence), the last join failed, or it was
        ``REJOIN_SECONDS`` ago or more (a layer emptied without an error
        seen here, such as a Redis flushed by hand). After a layer failure it
        first reads the socket's rights again (:meth:`recheck_rights`): the
        failing layer may have lost the ``RIGHTS_CHANGED`` that would have
        closed it. Run on every heartbeat."""
        # A failed join counts as a layer failure too (rejoin): the count covers it.
        if self._joined_failures != layer_failures():
            # A failing layer may have lost a RIGHTS_CHANGED meant for this
            # socket as well: read its rights again too.
            await self.recheck_rights()
            if self.closed_for_rights is not None:
                return
            await self.rejoin()
        elif heartbeat.now() - self._joined_at >= REJOIN_SECONDS:
            await self.rejoin()

    async def rights_changed(self, event: dict) -> None:
        """The rights behind this socket may have changed (``RIGHTS_CHANGED``,
        ``challenges.rights``): read its Django session and its seat again
        and close if either is gone (:meth:`rights_refusal`)."""
        await self.recheck_rights()

    async def recheck_rights(self) -> None:
        """Close with :meth:`rights_refusal`'s code, if any. One trip to the
        database thread (three small queries)."""
        if (code := await database_sync_to_async(self.rights_refusal)()) is not None:
            log.info("closing a socket of user %s: %s", self.scope["user"].pk, code)
            self.closed_for_rights = code
            await self.close(code=code)

    async def send(self, text_data=None, bytes_data=None, close=False) -> None:
        """Channels' send, or nothing once the socket was closed for its
        rights: a frame rendered meanwhile (an event already queued, a
        dashboard feed's row) must not reach a screen whose rights ended.
        A text frame over ``settings.WS_MAX_FRAME_BYTES`` is replaced by an
        error frame (:data:`FRAME_TOO_LARGE_MESSAGE`) and logged."""
        if self.closed_for_rights is not None:
            return
        if text_data is not None and (size := frame_bytes(text_data)) > settings.WS_MAX_FRAME_BYTES:
            # The server would refuse it (Daphne raises, and the client
            # reconnects into the same frame forever): say so instead.
            log.error("a %d-byte frame not sent (WS_MAX_FRAME_BYTES)", size)
            text_data = json.dumps(
                {
                    "type": "error",
                    "id": None,
                    "message": FRAME_TOO_LARGE_MESSAGE.format(kib=size >> 10),
                }
            )
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    def rights_refusal(self) -> int | None:
        """Why this socket may no longer serve, as the close code a new
        socket at its address would get, or None: 4401 when its Django
        session no longer logs its user in (``wsauth.user_now``: logged out,
        link revoked, password changed, user deactivated or deleted), 4410
        when she is signed in but its seat is no longer hers
        (:meth:`seat_held`: a character given to another player, a narrator
        role taken away). A narrator's password login and her join-link login
        are separate sessions: ending one leaves the other's sockets open.
        Synchronous (the database thread)."""
        user = wsauth.user_now(self.scope)
        if user is None:
            return CLOSE_SIGNED_OUT
        if not self.seat_held(user):
            return CLOSE_SEAT_LOST
        return None

    def seat_held(self, user) -> bool:
        """True if ``user`` may still use what this socket serves (each
        consumer says what its seat is). Synchronous (the database thread)."""
        raise NotImplementedError

    async def __call__(self, scope, receive, send) -> None:
        """Channels' consumer, until its socket closes. Cancelled, as Daphne
        cancels every consumer when told to stop (SIGTERM), it first closes
        its socket with :data:`SERVICE_RESTART`, or 1000 where the server
        refuses that code (Daphne: Autobahn sends only 1000 or 3000-4999);
        the phone's script reconnects on both. Without it the phone saw the
        connection drop (1006) when the process exited."""
        try:
            await super().__call__(scope, receive, send)
        except asyncio.CancelledError:
            for code in (SERVICE_RESTART, 1000):
                try:
                    await self.close(code=code, reason="service restart")
                    break
                except Exception:  # noqa: BLE001, S112 - a code refused; or never accepted, gone
                    continue
            raise

    async def websocket_disconnect(self, message: dict) -> None:
        """Channels' goodbye (leave the groups, :meth:`disconnect`, stop),
        given at most :data:`LEAVE_SECONDS` to reach the channel layer."""
        try:
            await asyncio.wait_for(super().websocket_disconnect(message), LEAVE_SECONDS)
        except TimeoutError:
            log.warning("leaving the groups took over %s s; they expire instead", LEAVE_SECONDS)
            raise StopConsumer from None

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
        # The layer's receive runs as a task of its own, so that cancelling
        # this one (the socket closed, the server stopping) ends it at once
        # even if the layer's receive absorbs the cancellation and waits on:
        # seen with channels-redis, it held a stopping Uvicorn over 13 s.
        receiving = asyncio.ensure_future(receive_retrying(self._layer_receive))
        try:
            return await asyncio.shield(receiving)
        except asyncio.CancelledError:
            receiving.cancel()
            receiving.add_done_callback(_ignore_outcome)
            raise

    async def send_json(self, payload: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(payload))

    @property
    def stamp(self) -> str:
        """The stamp of what this socket's screen shows now."""
        return heartbeat.digest(self.stamp_parts)

    async def send_stamped(self, html: str, heartbeat_answer: bool = False) -> None:
        """Send a view frame (whole or partial) headed by the current stamp;
        ``heartbeat_answer``: a whole view answering a heartbeat, so marked
        (:data:`HEARTBEAT_MARK`: the bench and a browser's tools tell it from
        a move's whole view)."""
        stamp = self.stamp
        self._note_sent(stamp)
        mark = HEARTBEAT_MARK if heartbeat_answer else ""
        await self.send(text_data=f"<!--v:{stamp}-->{mark}{html}")

    def _note_sent(self, stamp: str) -> None:
        """Keep ``stamp`` as the latest sent, forgetting the oldest beyond
        :attr:`sent_stamps_kept`."""
        sent = self.sent_stamps
        if sent is None:
            sent = self.sent_stamps = {}
        sent.pop(stamp, None)  # sent again: now the latest
        sent[stamp] = None
        if len(sent) > self.sent_stamps_kept:
            del sent[next(iter(sent))]

    def shown_after_frames(self, echoed: str) -> str:
        """The stamp the screen will show once the frames already sent arrive:
        ``echoed`` (the stamp a heartbeat names) if it is not one this socket
        sent lately, else the latest it sent. A ping crosses the
        frames on their way to the phone (issue 14: under load nearly every
        frame is on its way for a while, and each such ping cost a whole
        view, which fed the load); the frames of one socket arrive in order,
        before this ping's answer. A stamp this socket never sent (another
        connection's, forged) is taken as it is."""
        sent = self.sent_stamps
        return next(reversed(sent)) if sent and echoed in sent else echoed

    async def answer_heartbeat(self, message: dict, recheck: int = 0) -> None:
        """Answer ``ping`` with ``pong`` if the echoed stamp ``v`` (default:
        the last one sent) is current, else with the full view; answer ``sync``
        with the full view. Both re-join the groups first when due
        (:meth:`rejoin_if_due`). A ping echoing the
        stamp this socket last sent is answered from this worker's snapshot
        when it agrees (``current_in_snapshot``: no query); otherwise, or if
        it does not, one query decides. When that query finds the database
        ahead of the stamp this socket last sent, the answer waits for a
        ``heartbeat.recheck`` (``recheck``: the how-manieth this is) behind
        the events already on their way here, then is ``pong``, a
        :meth:`repair`, another recheck (at most
        ``settings.HEARTBEAT_RECHECKS``, each twice as late) or the whole view."""
        await self.rejoin_if_due()
        if self.closed_for_rights is not None:
            return
        await self.tick_clocks()
        if message.get("action") == "ping":
            stamp = self.stamp  # one digest per ping (issue 14: the heartbeats' fixed cost)
            echoed = self.shown_after_frames(message.get("v", stamp))
            if echoed != stamp and not self.sent_recently(echoed) and self._unknown_stamp_again():
                await self.send_json(
                    {"type": "error", "id": None, "message": UNKNOWN_STAMP_MESSAGE}
                )
                return
            if echoed == stamp and await self.current_in_snapshot():
                await self.send_json({"type": "pong"})
                return
            current = await self.current_parts()
            # Frames sent while the parts were read count too: they reach the
            # screen before this answer (issue 14: in a burst a dashboard's
            # feed sent one during that read, and the ping cost its whole view).
            echoed = self.shown_after_frames(echoed)
            if echoed == heartbeat.digest(current):
                await self.send_json({"type": "pong"})
                return
            if echoed == self.stamp and not recheck:
                # The database is ahead of what this socket last sent: most
                # often a move whose broadcast is on its way to this very
                # socket. Ask again behind it (issue 14: under load every
                # such ping cost a whole view, which fed the load).
                self._recheck_later(1)
                return
            if recheck and await self.repair(current):
                return
            if recheck and recheck < int(getattr(settings, "HEARTBEAT_RECHECKS", 3)):
                # Still behind: on a busy worker the move's broadcast can wait
                # seconds behind the others (issue 14: at 1,500 phones, one
                # recheck left ~1,100 whole views in a minute, which fed the load).
                self._recheck_later(recheck + 1)
                return
        await self.send_view(heartbeat_answer=True)

    def sent_recently(self, stamp: str) -> bool:
        """True if ``stamp`` is among the stamps of the latest frames this
        socket sent (:attr:`sent_stamps`)."""
        return bool(self.sent_stamps) and stamp in self.sent_stamps

    def _unknown_stamp_again(self) -> bool:
        """A ping echoed a stamp this socket never sent (a forged or replayed
        ping, or a screen left from another connection): True if another
        did less than ``UNKNOWN_STAMP_SECONDS`` ago (refuse it: a whole view
        each would let one socket draw hundreds of views a minute), else
        False, noting the time (answer it, with the whole view)."""
        now = heartbeat.now()
        if now - self._unknown_stamp_at < UNKNOWN_STAMP_SECONDS:
            return True
        self._unknown_stamp_at = now
        return False

    async def repair(self, current: heartbeat.Parts) -> bool:
        """Bring a screen the recheck still found behind the database
        (``current``: the parts just read) up to date with less than its
        whole view, and answer the ping; True if it did (here: never, the
        whole view goes)."""
        return False

    def _recheck_later(self, recheck: int) -> None:
        """Put the ``recheck``-th ``heartbeat.recheck`` (1, 2, …) in this
        socket's own channel (:meth:`_heartbeat_later`), so a broadcast
        committed before the ping is shown first: the first in
        ``settings.HEARTBEAT_RECHECK_SECONDS``, each next twice as late."""
        first = float(getattr(settings, "HEARTBEAT_RECHECK_SECONDS", 0.25))
        self._heartbeat_later("heartbeat.recheck", first * 2 ** (recheck - 1), tries=recheck)

    def _heartbeat_later(self, event_type: str, delay: float, **fields: int) -> None:
        """In ``delay`` seconds, put an ``event_type`` event (with ``fields``)
        in this socket's own channel: it is handled after every event already
        queued there. If the layer refuses it (an outage), the whole view
        goes at once, as before the recheck existed."""

        async def send() -> None:
            try:
                await self.channel_layer.send(self.channel_name, {"type": event_type, **fields})
            except Exception as error:  # noqa: BLE001 - the layer is down: answer now
                layer_failed()
                log.warning("%s not queued (%r): whole view", event_type, error)
                self.owed_heartbeat = None  # the whole view answers it
                try:
                    await self.send_view()
                except Exception:  # noqa: BLE001 - the socket is gone; the next ping retries
                    log.exception("heartbeat whole view failed")

        loop = asyncio.get_running_loop()
        loop.call_later(delay, lambda: loop.create_task(send()))

    def _owe_heartbeat(self, message: dict) -> None:
        """Answer a heartbeat the limiter refused ``OWED_HEARTBEAT_SECONDS``
        later (``heartbeat_owed``) instead of now. One is owed at a time: a
        later one replaces it (a ping echoes a newer stamp), except that a
        ping never replaces a sync (the sync's whole view answers both)."""
        owed = self.owed_heartbeat
        if owed is None:
            self._heartbeat_later("heartbeat.owed", OWED_HEARTBEAT_SECONDS)
        if owed is None or owed.get("action") != "sync":
            self.owed_heartbeat = message

    async def heartbeat_owed(self, event: dict) -> None:
        """The answer to a heartbeat the limiter refused (``_owe_heartbeat``),
        as it would have been answered then."""
        message, self.owed_heartbeat = self.owed_heartbeat, None
        if message is not None and not self.flooded:
            await self.answer_heartbeat(message)

    async def heartbeat_recheck(self, event: dict) -> None:
        """Another look at a ping that found the database ahead (``tries``:
        the how-manieth): ``pong`` if this socket's stamp is current now (the
        move's frame went out meanwhile), else a repair, a later look or its
        whole view (:meth:`answer_heartbeat`)."""
        tries = event.get("tries")
        recheck = tries if isinstance(tries, int) and tries > 0 else 1
        await self.answer_heartbeat({"action": "ping", "v": self.stamp}, recheck=recheck)

    async def current_parts(self) -> heartbeat.Parts:
        raise NotImplementedError

    async def current_in_snapshot(self) -> bool:
        """True if a ``heartbeat`` snapshot read after ``stamp_parts`` were
        set holds them exactly (then the screen is current within
        ``heartbeat.SNAPSHOT_SECONDS``); False: check exactly. Here: never."""
        return False

    async def tick_clocks(self) -> None:
        """s11 clocks: apply the health clocks due in this socket's session
        (``services.clocks``), at most once a second per session and worker,
        so every heartbeat of the evening keeps them running; their
        broadcasts redraw the screens."""
        session = getattr(self, "session", None)
        if session is not None and services.clocks.tick_wanted(session.pk):
            await database_sync_to_async(services.clocks.clocks_tick)(session.pk)
            if getattr(self, "dice_pools", False):  # issue 13: a track's natural healing
                await database_sync_to_async(services.story_heal_tick)(session.pk)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        # Entry checks before anything else: the frame's shape (challenges.schema)
        # and this connection's rate (challenges.ratelimit). A frame beyond the
        # rate is refused: an action gets an error and changes nothing, a
        # heartbeat is answered a moment later. A flood (far beyond the rate,
        # more than lateness explains) gets one error, then the socket is
        # closed with 4429; later frames are dropped, as are those that come
        # after the socket was closed for its rights (rights_changed).
        if self.flooded or self.closed_for_rights is not None:
            return
        try:
            action, message = schema.parse_frame(text_data, bytes_data, allowed=set(self.actions))
            refused = None
        except schema.FrameRefused as error:
            action, message, refused = None, {}, error
        if self.limiter is None:
            self.limiter = Limiter(
                rate=settings.WS_RATE, burst=settings.WS_BURST, late=settings.WS_LATE_SECONDS
            )
        verdict = self.limiter.check(HEARTBEAT_COST if action in schema.HEARTBEAT else ACTION_COST)
        if verdict is Verdict.REFUSE and action in schema.HEARTBEAT:
            self._owe_heartbeat(message)
            return
        if verdict is not Verdict.ANSWER:
            msg_id = refused.msg_id if refused else message.get("id")
            msg_id = msg_id if isinstance(msg_id, str) else None
            if verdict is Verdict.REFUSE:
                await self.send_json({"type": "error", "id": msg_id, "message": REFUSED_MESSAGE})
                return
            self.flooded = True
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

    async def send_view(self, heartbeat_answer: bool = False) -> None:
        """Send the whole view (``heartbeat_answer``: marked as a heartbeat's
        answer, ``send_stamped``)."""
        raise NotImplementedError
