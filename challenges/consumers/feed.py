"""Dashboards fed once per tick (issue 14): the rows of one session that
changed, gathered from every dashboard of this worker, rendered once, and
sent to each dashboard as one frame.

Every dashboard of a session needs every ``challenge.updated`` and
``character.updated``; each used to hear it on its own channel, take its own
trip to the database thread, place and wrap the row, sum its whole roster and
send a frame, per event. Now the session's :class:`DashboardFeed` hears the
session's ``narrators_group`` once per worker, on its own channel, and notes
the id (no trip, no frame). The first note of a tick starts
the feed's timer; ``settings.DASHBOARD_TICK_SECONDS`` later the feed takes
what was noted (later notes wait for the next tick: nothing is lost),
renders each changed row once in one trip to the database thread
(:func:`render_changes`: the committed challenge row of
``challenges.rows.committed_rows``, each changed roster row), and hands the
result to every dashboard of the session on this worker
(``NarrateConsumer.feed``), which places the rows as before
(``views.Placement``) and sends one frame. A row changed twice in a tick
is rendered once, at its latest version.

Correctness with several workers: a feed is per process and holds no state of
the game, only ids noted since the last flush; each worker's feed hears
every event through the channel layer, and the rows are read after the
events' commits (a version not kept by this process is read from the
database). A dashboard whose whole view was read after a flush's rows
(:attr:`Changes.seq`, counted on the database thread, where every read of this
process runs one at a time) skips that flush: its view already shows it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from challenges import heartbeat, views
from challenges.consumers.base import join_groups, receive_retrying
from challenges.realtime import (
    CHALLENGE_UPDATED,
    CHARACTER_UPDATED,
    MOB_UPDATED,
    ROLL_UPDATED,
    layer_failed,
    narrators_group,
)

log = logging.getLogger(__name__)

#: Reads of the database thread, numbered in the order they start (one thread per process).
_reads = itertools.count(1)


def next_read() -> int:
    """The number of a read about to start (call it on the database thread,
    before reading): a later number read later, so saw every earlier commit."""
    return next(_reads)


def roster_entry(entry) -> tuple[int, int, int]:
    """What the stamp counts of a roster row (``views.RosterRow``):
    ``(health, Traits lost tonight, on a break 0/1)``."""
    return (
        int(entry.sheet.health),
        sum(c.lost for c in entry.sheet.categories),
        int(entry.sheet.on_break),
    )


@dataclass
class RollChanges:
    """Issue 14: a flush's storytelling rolls for the dashboards' roll lists:
    ``listed``, ``(id, version)`` of the rolls a fresh dashboard lists, in
    order; ``cards``, ``{id: _roll_dashboard_card.html}`` of those that may
    have changed (``views.dashboard_roll_changes``), rendered once for all."""

    listed: list[tuple[int, int]]
    cards: dict[int, str]


@dataclass
class Changes:
    """One flush's rows, read after read number ``seq``.

    ``rows``: ``(challenge id, row html, version, views.dashboard_place())``
    per changed challenge of the session; ``roster``: ``(character id,
    roster_entry(), {insert: html})`` per changed character on the roster
    (``html[True]`` only for a character some dashboard did not show);
    ``rolls``: the roll list's changes (:class:`RollChanges`; None: none);
    ``mobs``: the mob scenes' section, out of band (``_mob_dashboard.html``),
    with its ``heartbeat.mob_part`` (None: no mob scene changed)."""

    seq: int
    rows: list[tuple[int, str, int, tuple]] = field(default_factory=list)
    roster: list[tuple[int, tuple[int, int, int], dict[bool, str]]] = field(default_factory=list)
    rolls: RollChanges | None = None
    mobs: tuple[str, tuple[int, int]] | None = None


def render_changes(
    session,
    challenges: dict[int, int | None],
    characters: dict[int, None],
    inserts: set[int],
    rolls: dict[int, None] | None = None,
    mobs: bool = False,
    rolls_listed: set[int] | None = None,
) -> Changes:
    """The rows of ``challenges`` (``{id: newest version noted}``, None: read
    anew) and of ``characters`` (ids) of ``session``, each rendered once;
    roster rows also as an insertion for the ids in ``inserts``. Rows not of
    the session, characters not on its roster are left out. Issue 14: with
    ``rolls`` (ids of storytelling rolls changed), or characters changed in
    a chronicle that rolls dice pools, the roll list's :class:`RollChanges`
    (``rolls_listed``: the ids of the list the last flush sent, None: none);
    with ``mobs`` (a mob scene or its test moved), the mob scenes' section.
    Runs on the database thread: a query per challenge not kept by
    ``committed_rows`` at that version, those of
    ``views.roster_rows_context`` once for all the characters, those of
    ``views.dashboard_roll_changes`` once for the rolls, those of
    ``views.mob_views`` (two) for the mob scenes."""
    changes = Changes(seq=next_read())
    if mobs:
        changes.mobs = render_mobs(session)
    if rolls or (characters and session.chronicle.has_dice_pools):
        changes.rolls = render_rolls(session, set(rolls or ()), set(characters), rolls_listed)
    for pk, version in challenges.items():
        context = views.dashboard_row_context(session, pk, version=version)
        if context is None:
            continue
        row = context["row"]
        html = mark_safe(render_to_string("challenges/_dashboard_row.html", context))
        changes.rows.append((pk, html, row.challenge.version, views.dashboard_place(row)))
    for pk, context in views.roster_rows_context(session, characters).items():
        html = {}
        for insert in (False, True) if pk in inserts else (False,):
            context["insert"] = insert
            html[insert] = render_to_string("challenges/_roster_row_oob.html", context)
        changes.roster.append((pk, roster_entry(context["entry"]), html))
    return changes


def render_mobs(session) -> tuple[str, tuple[int, int]]:
    """The mob scenes' section of ``session``'s dashboards, out of band, and
    its ``heartbeat.mob_part``: rendered once for every dashboard of this
    worker (issue 14: each dashboard rendered it on every move of a scene and
    of its test, ~30% of a worker in an evening with mob scenes)."""
    mobs = views.mob_views(session, None)
    html = render_to_string("challenges/_mob_dashboard.html", {"mobs": mobs, "oob": True})
    return html, heartbeat.mob_part(mobs)


def render_rolls(
    session, rolls: set[int], characters: set[int], listed_before: set[int] | None = None
) -> RollChanges:
    """:class:`RollChanges` after ``rolls`` or ``characters`` (ids) changed
    (``views.dashboard_roll_changes``; with it, the cards of rolls that came
    on the list since ``listed_before``), each card rendered once. Issue 14:
    without them a dashboard could not place a roll that came back on its
    list when another left, and took the whole list (each dashboard its own,
    ~35 kB) on nearly every tick of the storytelling evening."""
    rows, cards = views.dashboard_roll_changes(session, rolls, characters, listed_before)
    choices = views.roll_choices()
    return RollChanges(
        listed=[(row.pk, row.version) for row in rows],
        cards={
            card.pk: render_to_string(
                "challenges/_roll_dashboard_card.html", {"card": card, **choices}
            )
            for card in cards
        },
    )


def row_frame(row_html: str, where: str, remove: list[int]) -> str:
    """``_dashboard_row_oob.html`` without the template engine (one string per
    row and dashboard): the rows ``remove`` taken off the screen, then
    ``row_html`` put at ``where`` ("" : not put)."""
    deletes = "".join(
        f'<article id="challenge-{pk}" hx-swap-oob="delete"></article>' for pk in remove
    )
    return f'{deletes}<div hx-swap-oob="{where}">{row_html}</div>' if where else deletes


@dataclass(frozen=True)
class WholeView:
    """One read of a session's whole dashboard (``narrate_live.html``),
    shared by every dashboard of this worker that asked for it before the
    read began (:class:`SharedRead`; issue 14: at 1,500 characters a whole
    dashboard costs ~0.8 s of the database thread and ~0.75 MB, and twelve
    dashboards connecting, or a presence set, asked for twelve at once).

    ``read``: :func:`next_read` before reading; ``parts``: the stamp's
    parts read before rendering; ``html``; ``choices``: the static and simple
    tests' character choices, out of band (None: not asked); ``versions``
    ``{challenge id: (version,)}`` and ``places`` ``{challenge id:
    views.dashboard_place()}`` of the rows listed; ``roster`` ``{character
    id: roster_entry()}``; ``rolls``: ``(id, version)`` of the roll cards
    listed, in order; ``session``: the session's Time out and end fields as
    read (``{field: value}``); ``following``: the chronicle's open session's
    id when this one ended (None: none or not ended). Each dashboard makes
    its own tallies from these (:meth:`NarrateConsumer._render_view`)."""

    read: int
    parts: dict[str, tuple[int, ...]]
    html: str
    choices: str | None
    versions: dict[int, tuple[int]]
    places: dict[int, tuple]
    roster: dict[int, tuple[int, int, int]]
    rolls: list[tuple[int, int]]
    session: dict[str, Any]
    following: int | None


T = TypeVar("T")


class _Pending(Generic[T]):
    """A read asked for and not begun yet: its result, and the OR of its callers' flags."""

    def __init__(self, future: asyncio.Future) -> None:
        self.future = future
        self.flag = False


class SharedRead(Generic[T]):
    """One read on the database thread for every caller that asks before it
    begins: :meth:`get` joins the read asked for and not yet begun, or asks
    for a new one. A read that has begun is never joined, so each caller gets
    a read that began after it asked (it sees every commit before its call).
    The database thread runs one read at a time, so callers arriving while
    one runs share the next."""

    def __init__(self, run: Callable[[Callable[[], T]], Awaitable[T]] | None = None) -> None:
        # run(work): run ``work`` on the database thread (default: Channels'
        # database_sync_to_async); tests give their own.
        self._run_work = run or (lambda work: database_sync_to_async(work)())
        self._pending: _Pending[T] | None = None
        self._lock = threading.Lock()  # the flag and "begun" are read on the database thread

    async def get(self, read: Callable[[bool], T], flag: bool = False) -> T:
        """The result of ``read(flag)`` (a function run on the database
        thread), by a read that begins after this call; ``flag`` is the OR
        of every sharing caller's. Raises what ``read`` raises."""
        loop = asyncio.get_running_loop()
        with self._lock:
            pending = self._pending
            # A read that began is no longer pending (``work`` takes it away).
            start = (
                pending is None
                or pending.future.done()  # failed before it began
                or pending.future.get_loop() is not loop
            )
            if start:
                pending = self._pending = _Pending(loop.create_future())
            assert pending is not None
            pending.flag |= flag
        if start:
            loop.create_task(self._read(pending, read))
        return await asyncio.shield(pending.future)

    async def _read(self, pending: _Pending[T], read: Callable[[bool], T]) -> None:
        def work() -> T:
            with self._lock:
                flag = pending.flag
                if self._pending is pending:
                    self._pending = None
            return read(flag)

        try:
            result = await self._run_work(work)
        except asyncio.CancelledError:
            pending.future.cancel()
            raise
        except Exception as error:  # noqa: BLE001 - each caller gets it
            pending.future.set_exception(error)
        else:
            pending.future.set_result(result)


def tick_seconds() -> float:
    """``settings.DASHBOARD_TICK_SECONDS``: how long a feed gathers changes."""
    return float(getattr(settings, "DASHBOARD_TICK_SECONDS", 0.1))


class DashboardFeed:
    """The dashboards of one session on this worker, the worker's one channel
    in the session's ``narrators_group``, and the rows changed since its last
    flush. Get it with :func:`feed_of`; dashboards :meth:`join` and
    :meth:`leave`; their event handlers call :meth:`hear`.

    Issue 14: the worker's dashboards of a session do not join
    ``narrators_group`` each; the feed does, once, on a channel of its own,
    and hears each event once (:meth:`hear`), not once per dashboard (12
    dashboards: 12 layer messages and 12 handler calls per event, ~40% of a
    challenge's cost). Events that change one dashboard's own view
    (combats, fights, clock alerts, a presence set) are passed to each
    dashboard's channel, as the group would have."""

    def __init__(self, session) -> None:
        self.session = session
        self.dashboards: dict[Any, None] = {}  # NarrateConsumer -> None, in joining order
        self.challenges: dict[int, int | None] = {}
        self.characters: dict[int, None] = {}
        self.rolls: dict[int, None] = {}  # issue 14: storytelling rolls changed
        self.mobs = False  # issue 14: a mob scene (or its test) moved
        self.dice_pools = False  # the chronicle rolls dice pools: its rolls are listed
        self.rolls_listed: set[int] | None = None  # ids of the roll list the last flush sent
        self.task: asyncio.Task | None = None
        # Done once the changes noted so far are delivered; of the flush under way.
        self.next_flush: asyncio.Future | None = None
        self.in_flight: asyncio.Future | None = None
        # The feed's channel in narrators_group and the task receiving from it.
        self.channel: str | None = None
        self.listener: asyncio.Task | None = None
        # Whole views read once for the dashboards asking at the same time.
        self.whole_views: SharedRead[WholeView] = SharedRead()

    async def whole_view(self, read: Callable[[bool], WholeView], choices: bool) -> WholeView:
        """A :class:`WholeView` read after this call (``read(choices)`` on the
        database thread, a dashboard's), shared with the dashboards that
        ask before its read begins (``choices``: the character choices too,
        if any of them asks). Raises what ``read`` raises."""
        return await self.whole_views.get(read, choices)

    async def join(self, dashboard) -> None:
        """``dashboard`` (a ``NarrateConsumer``) is fed from now on; returns once
        this worker listens to the session's ``narrators_group`` (so a view
        read after this misses no event)."""
        self.dashboards[dashboard] = None
        self.dice_pools = dashboard.dice_pools
        loop = asyncio.get_running_loop()
        if self.listener is None or self.listener.done() or self.listener.get_loop() is not loop:
            layer = get_channel_layer()
            # Both calls run to the end without suspending: two dashboards
            # joining at once cannot make two listeners. The default prefix:
            # channels-redis pulls one list per prefix, the sockets' one.
            self.channel = await layer.new_channel()
            self.listener = loop.create_task(self._listen(layer, self.channel))
        await self.rejoin()

    async def rejoin(self) -> None:
        """Add the feed's channel to ``narrators_group`` (again: its dashboards'
        heartbeats ask, so a Redis that lost its groups feeds them again
        within a heartbeat; one membership for all of them). A failing layer
        is logged, not raised: the next heartbeat tries again."""
        if (channel := self.channel) is None:
            return
        try:
            await join_groups(get_channel_layer(), [narrators_group(self.session.pk)], channel)
        except Exception as error:  # noqa: BLE001 - retried on a dashboard's next heartbeat
            layer_failed()
            log.warning("the dashboards' feed could not join its group (%r)", error)

    async def leave(self, dashboard) -> None:
        """``dashboard`` is gone; with the last one the feed stops listening
        (its listener ended, its channel out of the group) and goes."""
        self.dashboards.pop(dashboard, None)
        if not self.dashboards and self.listener is not None:
            listener, channel = self.listener, self.channel
            self.listener = self.channel = None
            await _stop(listener)
            try:
                await get_channel_layer().group_discard(narrators_group(self.session.pk), channel)
            except Exception as error:  # noqa: BLE001 - the membership expires anyway
                log.warning("the dashboards' feed could not leave its group (%r)", error)
        if self.task is None:
            self._forget()

    def _forget(self) -> None:
        """Without dashboards, this feed goes (a later dashboard makes a new one)."""
        if not self.dashboards and _feeds.get(self.session.pk) is self:
            del _feeds[self.session.pk]

    async def _listen(self, layer, channel: str) -> None:
        """Hear every event of ``narrators_group`` on ``channel`` until cancelled."""
        while True:
            message = await receive_retrying(lambda: layer.receive(channel))
            try:
                if not self.hear(message):
                    await self._pass_on(layer, message)
            except Exception:  # noqa: BLE001 - one event's failure; the heartbeat repairs
                log.exception("the dashboards' feed could not handle %s", message.get("type"))

    async def _pass_on(self, layer, message: dict) -> None:
        """``message`` to each dashboard's own channel (its handler renders it)."""
        for dashboard in list(self.dashboards):
            try:
                await layer.send(dashboard.channel_name, message)
            except Exception as error:  # noqa: BLE001 - that screen's heartbeat repairs it
                log.warning("passing %s to a dashboard failed (%r)", message.get("type"), error)

    def hear(self, event: dict) -> bool:
        """Note what ``event`` (a ``narrators_group`` message) changed on every
        dashboard of the feed, for the next tick; False if it is not a
        change the feed sends (each dashboard handles it itself)."""
        kind = event.get("type")
        if kind == CHALLENGE_UPDATED:
            self.challenge_changed(event["challenge_id"], event.get("version"))
        elif kind == CHARACTER_UPDATED and not event.get("presence"):
            self.character_changed(event["character_id"])
        elif kind == MOB_UPDATED:
            self.mob_changed()
        elif kind == ROLL_UPDATED:
            if self.dice_pools and event.get("session_id") == self.session.pk:
                self.roll_changed(event["roll_id"])
        else:
            return False
        return True

    def challenge_changed(self, challenge_id: int, version: int | None) -> None:
        """Challenge ``challenge_id`` reached ``version`` (None: unknown, read it anew)."""
        if challenge_id in self.challenges:
            noted = self.challenges[challenge_id]
            version = None if noted is None or version is None else max(noted, version)
        self.challenges[challenge_id] = version
        self._start()

    def character_changed(self, character_id: int) -> None:
        """Her roster row changed."""
        self.characters[character_id] = None
        self._start()

    def roll_changed(self, roll_id: int) -> None:
        """Storytelling roll ``roll_id`` changed (issue 14): the roll list's cards."""
        self.rolls[roll_id] = None
        self._start()

    def mob_changed(self) -> None:
        """A mob scene of the session, or its test, moved: the mob scenes' section."""
        self.mobs = True
        self._start()

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        if self.task is not None and (self.task.done() or self.task.get_loop() is not loop):
            self.task = None  # left by a closed loop (tests)
        if self.next_flush is None or self.next_flush.get_loop() is not loop:
            self.next_flush = loop.create_future()
        if self.task is None:
            self.task = loop.create_task(self._run())

    def busy(self) -> bool:
        """Changes are noted or a flush is under way (their rows not all sent)."""
        return bool(self._noted() or self.in_flight)

    def _noted(self) -> bool:
        """Changes are noted for the next flush."""
        return bool(self.challenges or self.characters or self.rolls or self.mobs)

    async def flushed(self) -> None:
        """Wait until every change noted so far has been sent to this feed's
        dashboards (at once if none): at most a tick and a flush."""
        waiting = self.next_flush if self._noted() else self.in_flight
        if waiting is not None:
            await asyncio.shield(waiting)

    async def _run(self) -> None:
        """Flush once per tick while changes keep coming; one flush at a time,
        so each dashboard gets its frames in the order they were read."""
        try:
            while self._noted():
                await asyncio.sleep(tick_seconds())
                challenges, self.challenges = self.challenges, {}
                characters, self.characters = self.characters, {}
                rolls, self.rolls = self.rolls, {}
                mobs, self.mobs = self.mobs, False
                self.in_flight, self.next_flush = self.next_flush, None
                try:
                    await self._flush(challenges, characters, rolls, mobs)
                finally:
                    if self.in_flight is not None and not self.in_flight.done():
                        self.in_flight.set_result(None)
                    self.in_flight = None
        finally:
            self.task = None
            self._forget()

    async def _flush(
        self,
        challenges: dict[int, int | None],
        characters: dict[int, None],
        rolls: dict[int, None],
        mobs: bool = False,
    ) -> None:
        dashboards = list(self.dashboards)
        if not dashboards:
            return
        inserts = {pk for pk in characters if any(pk not in d.known_roster for d in dashboards)}
        try:
            changes = await database_sync_to_async(render_changes)(
                self.session, challenges, characters, inserts, rolls, mobs, self.rolls_listed
            )
        except Exception:  # noqa: BLE001 - the heartbeat repairs the screens
            log.exception("rendering the dashboards' changed rows failed")
            return
        if changes.rolls is not None:
            self.rolls_listed = {pk for pk, _ in changes.rolls.listed}
        for dashboard in dashboards:
            if dashboard in self.dashboards:
                try:
                    await dashboard.feed(changes)
                except Exception:  # noqa: BLE001 - one socket's failure, not the others'
                    log.exception("feeding a dashboard failed")


async def _stop(task: asyncio.Task) -> None:
    """Cancel ``task`` and wait for it to end (its ``finally`` blocks run: a
    channel layer's receive leaves its bookkeeping clean)."""
    if task.done() or task.get_loop() is not asyncio.get_running_loop():
        return
    task.cancel()
    await asyncio.wait({task})


#: This process's feeds by session id.
_feeds: dict[int, DashboardFeed] = {}


def feed_of(session) -> DashboardFeed:
    """The feed of ``session`` (a ``GameSession``) on this worker, made on first use."""
    feed = _feeds.get(session.pk)
    if feed is None:
        feed = _feeds[session.pk] = DashboardFeed(session)
    return feed
