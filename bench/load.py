"""Simulated phones and dashboards, and the scenarios they play.

Many sockets live in one asyncio process. A :class:`Conn` behaves like
``static/narrator/app.js``: every action carries an id and its reply is an ack
(or an error); HTML frames are views. Tests wait for markers in those frames
(the ``<article id="card-N" class="card stage-…">`` of a challenge, the
``time-out active`` banner, the ``id="live"`` view), and the time a marker
first arrives is the time a person would have seen it.

A :class:`Target` is one app under load: ``Narrator`` (the real consumers,
challenges opened, answered and thrown as a player would) or ``Bare`` (the
baseline of ``bench.bare``). Scenarios take a target and return a
:class:`~bench.report.Result`.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import json
import math
import random
import re
import time
import uuid
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.protocol import State

from bench.fixtures import BID_TRAIT
from bench.report import Result
from challenges.ratelimit import REFUSED_MESSAGE

# Seconds a phone waits for an ack, a view or a result before it counts as lost.
# Long on purpose: a late result is measured (its round trip shows in the
# percentiles), only one that never arrives is lost. ``manage.py bench --wait``.
WAIT = 120.0
LATE = 2.0  # seconds: the burst's goal is p99 under this; its note counts results after it
APP_JS = Path(__file__).resolve().parent.parent / "static" / "narrator" / "app.js"


def client_constant(name: str, text: str | None = None) -> float:
    """The number ``static/narrator/app.js`` assigns to ``var NAME`` (its
    default when a ``window.`` override may come first), read from the file so
    the bench follows the real client. Raises LookupError if it is not there."""
    text = APP_JS.read_text() if text is None else text
    found = re.search(rf"var {name} = (?:[\w.]+ \|\| )?(\d+(?:\.\d+)?)\s*;", text)
    if found is None:
        raise LookupError(f"no 'var {name} = <number>;' in {APP_JS}")
    return float(found.group(1))


# The client's heartbeat (app.js: ``setInterval(ping, HEARTBEAT_MS)``), in seconds.
# app.js adds no jitter to it: sockets ping out of step only because they opened
# at different moments, so each simulated socket starts at a random phase.
HEARTBEAT = client_constant("HEARTBEAT_MS") / 1000
THROWS = ("rock", "paper", "scissors")
BEATS = {"rock": "scissors", "paper": "rock", "scissors": "paper"}


# A whole view answering a heartbeat follows its stamp with this mark
# (challenges.consumers.base.HEARTBEAT_MARK): a loser's whole view that comes
# while her ping waits is not its answer.
HEARTBEAT_MARK = "<!--heartbeat-->"
WHOLE_DASHBOARD = 'id="challenge-list"'  # in a dashboard's whole view, not in its updates


# What a phone shows, one article each, by the Conn attribute that keeps it:
# challenge cards (MET; bns: "card pooled"), mob scenes, dice rolls.
_SHOWN = (
    ("cards", re.compile(r'<article id="card-(\d+)" class="card (?:pooled )?stage-')),
    ("mobs", re.compile(r'<article class="card mob[^"]*" data-mob="(\d+)"')),
    ("rolls", re.compile(r'<article class="card roll [^"]*" id="roll-(\d+)"')),
)
# Her start form's choices, by kind (first marker to the end marker): the MET
# Trait buttons (in her view, and sent alone when her Traits change); the bns
# attacks and the storytelling "Contest someone" form (in her page: load_page).
_START_FORMS = {
    "bids": ('<fieldset id="start-bids"', "</fieldset>"),
    "attacks": ('<fieldset class="attacks">', "</fieldset>"),
    "contest": ('<details id="roll-start"', "</form>"),
}


class Lost(Exception):
    """A frame, ack or result never arrived within :data:`WAIT` seconds."""


def set_wait(seconds: float) -> None:
    """Set :data:`WAIT` (seconds, > 0) for every later wait of this process."""
    global WAIT  # noqa: PLW0603 - one setting for the whole load generator
    if seconds <= 0:
        raise ValueError(f"the wait must be positive, not {seconds!r} s")
    WAIT = float(seconds)


RULINGS_PER_SECOND = 8.0  # a dashboard's rulings while the others are away, under WS_RATE
#: Seconds a narrator waits after a ruling refused for too many messages
#: (``REFUSED_MESSAGE``: an overloaded server read her taps bunched) before
#: tapping it again, then on at her pace.
REFUSED_PAUSE = 1.0
_PHASES = random.Random(11)  # each socket's heartbeat phase


class Heartbeats:
    """The heartbeat of every socket of a run: its interval (seconds; 0: off)
    and a pause the idle waits between rows use (a paused tick is skipped, as a
    sleeping phone's would be, and the sockets keep their phases)."""

    def __init__(self, interval: float = HEARTBEAT) -> None:
        self.interval = interval
        self.paused = False
        # The heartbeat row's window (perf_counter seconds): a ping counts in
        # it when its tick was due in [since, until), however late the event
        # loop ran the tick; ticks due from ``until`` on are skipped.
        self.since = 0.0
        self.until = float("inf")


# What moves a card on a phone's screen, in a frame's order (_live.html,
# _card_frame.html, _card.html): the whole view's two lists, the out-of-band
# wrappers that append or put on top, a card (its version, and whether it
# replaces one in place) and a card taken off.
_CARD_PLACES = re.compile(
    r'<div id="(open|done)-cards">'
    r'|<div hx-swap-oob="(beforeend:#open-cards|afterbegin:#done-cards)">'
    r'|<article id="card-(\d+)" '
    r'(?:hx-swap-oob="(delete)"|class="[^"]*" data-version="(\d+)"([^>]*)>)'
)


class CardsShown:
    """The challenge cards a phone's screen shows, kept from its frames as
    htmx places them, so that a reconnect names them as app.js does
    (``&open=ID.VERSION,…&done=…``; the server checks them against the
    stamp, and a wrong list costs a whole view, never a stale screen)."""

    def __init__(self) -> None:
        self.open: dict[int, int] = {}  # id: version, in screen order
        self.done: list[tuple[int, int]] = []  # (id, version), newest first

    def apply(self, frame: str) -> None:
        """Place the cards of one view frame (whole or partial)."""
        whole_view = 'id="live"' in frame
        if not whole_view and 'id="card-' not in frame:
            return
        if whole_view:  # the lists start again
            self.open, self.done = {}, []
        where, at = "", 0  # the list a card goes to, and where in done
        for found in _CARD_PLACES.finditer(frame):
            whole, wrapper, pk, delete, version, rest = found.groups()
            if whole or wrapper:
                where, at = (whole or wrapper[-10:-6]), (len(self.done) if whole else 0)
                continue
            card = int(pk)
            if delete or 'hx-swap-oob="true"' in rest:
                index = next((i for i, (d, _) in enumerate(self.done) if d == card), None)
                if delete:
                    self.open.pop(card, None)
                    if index is not None:
                        del self.done[index]
                elif card in self.open:
                    self.open[card] = int(version)
                elif index is not None:
                    self.done[index] = (card, int(version))
                continue
            if where == "open":
                self.open[card] = int(version)
            elif where == "done":
                self.done.insert(at, (card, int(version)))
                at += 1

    def query(self) -> str:
        """``&open=…&done=…`` for the socket URL, after ``?v=STAMP``."""
        open_, done = (",".join(f"{pk}.{v}" for pk, v in c) for c in (self.open.items(), self.done))
        return f"&open={open_}&done={done}"


class Conn:
    """One websocket (a phone or a dashboard) with its acks and frame waiters."""

    def __init__(
        self,
        url: str,
        origin: str,
        cookie: str | None = None,
        ident: int = 0,
        beats: Heartbeats | None = None,
    ) -> None:
        self.url = url
        self.beats = beats  # shared by every socket of a run; None: no heartbeat
        self.origin = origin
        self.headers = {"Cookie": f"sessionid={cookie}"} if cookie else {}
        self.ident = ident  # character id (Narrator) or pair number (bare)
        self.ws = None
        self.reader: asyncio.Task | None = None
        self.closing = False
        self.server_closed = 0
        self.doubled = 0
        self.errors: list[str] = []
        self.pending: dict[str, asyncio.Future] = {}
        self.acked: set[str] = set()
        self.waiters: list[tuple[Callable[[str], object], asyncio.Future]] = []
        self.stamp = ""  # of the last view frame, as app.js keeps it
        self.beating: asyncio.Task | None = None  # the heartbeat, once the first view came
        self.ping_at = 0.0  # when the unanswered ping went out (0: none)
        self.pings = 0  # heartbeats sent
        self.pongs: list[float] = []  # seconds from each ping to its pong
        self.ping_views = 0  # pings answered with a whole view (the screen was stale)
        self.syncs = 0  # "sync" heartbeats sent and not yet answered (their whole view)
        # The evening rows read the screen as a player would (``track_cards``):
        # the last HTML of each challenge card, mob scene and dice roll, when
        # it came (``_SHOWN``), and the choices of her start form.
        self.track_cards = False
        self.last_answer_at = 0.0  # when the last ack or error of an action arrived
        self.cards: dict[int, tuple[float, str]] = {}
        self.mobs: dict[int, tuple[float, str]] = {}
        self.rolls: dict[int, tuple[float, str]] = {}
        self.start_forms: dict[str, str] = {}  # by kind of _START_FORMS
        self.card_changed = asyncio.Event()
        # A phone names the cards its screen shows when it reconnects, as app.js.
        self.cards_shown = CardsShown() if "/ws/play/" in url else None
        # The crowded dashboard row's: each frame's size in bytes, and whether
        # it was a whole dashboard (None: not kept).
        self.sizes: list[tuple[int, bool]] | None = None

    async def load_page(self) -> None:
        """Load her page over HTTP (``/ws/play/ID/`` → ``/play/ID/``, with her
        cookie), as a browser opening the app before its socket, and read it
        as a frame (:meth:`_read_cards`: the start form a page alone holds).
        Raises Lost unless it answers 200 within :data:`WAIT` seconds."""
        url = urlsplit(self.url)
        path = url.path.removeprefix("/ws")
        cookie = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        request = f"GET {path} HTTP/1.0\r\nHost: {url.netloc}\r\n{cookie}\r\n"

        async def get() -> bytes:
            reader, writer = await asyncio.open_connection(url.hostname, url.port)
            try:
                writer.write(request.encode())
                return await reader.read()  # HTTP/1.0: the server closes after the body
            finally:
                writer.close()

        answer = (await within(get())).decode()
        if not answer.startswith(("HTTP/1.0 200", "HTTP/1.1 200")):
            raise Lost(answer.partition("\r")[0] or "no answer")
        self._read_cards(time.perf_counter(), answer)

    async def open(self) -> None:
        """Open the socket; a reconnect names the last stamp (``?v=``), as
        ``static/narrator/app.js`` does, and may get ``pong`` instead of a view."""
        self.closing = False
        query = f"?v={self.stamp}" if self.stamp else ""
        if query and self.cards_shown is not None:
            query += self.cards_shown.query()
        self.ws = await connect(
            self.url + query,
            origin=self.origin,
            additional_headers=self.headers,
            compression=None,
            proxy=None,
            open_timeout=120,
            ping_interval=None,
            close_timeout=10,
            max_size=None,
            max_queue=None,
        )
        self.reader = asyncio.create_task(self._read())

    def start_heartbeat(self) -> None:
        """Ping as app.js does, every ``beats.interval`` seconds from a random
        phase: ``{"action": "ping", "v": <last stamp>}``. No-op if off or running."""
        beats = self.beats
        if beats is None or beats.interval <= 0:
            return
        if self.beating is not None and not self.beating.done():
            return
        self.beating = asyncio.create_task(self._beat(beats, _PHASES.random() * beats.interval))

    def stop_heartbeat(self) -> None:
        """Stop pinging (a closed socket, or the heartbeat row ending); idempotent."""
        if self.beating is not None:
            self.beating.cancel()
            self.beating = None
        self.ping_at = 0.0

    async def _beat(self, beats: Heartbeats, phase: float) -> None:
        next_at = time.perf_counter() + phase
        while True:
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            due, next_at = next_at, next_at + beats.interval
            if beats.paused or due >= beats.until:
                continue
            if self.ws is None or self.ws.state is not State.OPEN:
                continue
            counted = due >= beats.since
            # app.js pings on every tick; one is timed at a time, and only one
            # counted (a tick due before the heartbeat row: its answer is not
            # the row's, CI once timed 43 answers for 42 pings).
            if not self.ping_at and counted:
                self.ping_at = time.perf_counter()
            self.pings += counted
            await self._send(json.dumps({"action": "ping", "v": self.stamp}))

    def _answered(self, now: float, whole_view: bool) -> None:
        if self.ping_at:
            self.pongs.append(now - self.ping_at)
            self.ping_views += whole_view
            self.ping_at = 0.0

    async def sync(self) -> None:
        """Ask for the whole view (``{"action": "sync"}``, as app.js does when
        a phone wakes); its answer is not counted as a ping's."""
        self.syncs += 1
        await self._send(json.dumps({"action": "sync"}))

    async def close(self) -> None:
        self.closing = True
        self.stop_heartbeat()
        if self.ws is not None:
            await self.ws.close()
        if self.reader is not None:
            await self.reader

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self._on_frame(time.perf_counter(), frame)
        except ConnectionClosed:
            pass
        if not self.closing:
            self.server_closed += 1

    def _on_frame(self, now: float, frame: str) -> None:
        if self.sizes is not None:
            self.sizes.append((len(frame.encode()), WHOLE_DASHBOARD in frame))
        if frame[:6] == "<!--v:":
            end = frame.index("-->")
            self.stamp = frame[6:end]
            if frame.startswith(HEARTBEAT_MARK, end + 3):
                if self.syncs:
                    # A sync's whole view, not the ping's answer (a ping never
                    # replaces a sync on the server, so it is answered first
                    # or after): the evening rows start with a sync per phone.
                    self.syncs -= 1
                elif self.ping_at:
                    self._answered(now, whole_view=True)  # a stale screen's ping
        if frame[:1] == "{":
            data = json.loads(frame)
            if data.get("type") == "pong":
                self._answered(now, whole_view=False)
                self._match(now, frame)  # "your screen is current"
                return
            if data.get("type") not in ("ack", "error"):
                return
            future = self.pending.pop(data.get("id"), None)
            if future is None:
                if data.get("id") in self.acked:
                    self.doubled += 1
                return
            self.acked.add(data["id"])
            self.last_answer_at = now
            if data["type"] == "error":
                self.errors.append(data.get("message", ""))
            if not future.done():
                future.set_result(data)
            return
        self._match(now, frame)

    def _read_cards(self, now: float, frame: str) -> None:
        for kind, pattern in _SHOWN:
            shown = getattr(self, kind)
            for found in pattern.finditer(frame):
                end = frame.find("</article>", found.end())
                shown[int(found.group(1))] = (now, frame[found.start() : end])
                self.card_changed.set()
        for kind, (marker, closing) in _START_FORMS.items():
            start = frame.find(marker)
            if start >= 0:
                self.start_forms[kind] = frame[start : frame.find(closing, start)]

    def _match(self, now: float, frame: str) -> None:
        if self.cards_shown is not None:
            self.cards_shown.apply(frame)
        if self.track_cards:
            self._read_cards(now, frame)
        if not self.waiters:
            return
        still = []
        for match, future in self.waiters:
            if future.done():
                continue
            found = match(frame)
            if found is None:
                still.append((match, future))
            else:
                future.set_result((now, found))
        self.waiters = still

    def outstanding(self) -> int:
        """Frames this socket still expects: unanswered actions and unmet waits."""
        self.waiters = [(m, f) for m, f in self.waiters if not f.done()]
        return len(self.waiters) + sum(not f.done() for f in self.pending.values())

    def forget(self) -> int:
        """Stop expecting what never came (after a scenario); returns how many."""
        dropped = self.outstanding()
        for _, future in self.waiters:
            future.cancel()
        for future in self.pending.values():
            if not future.done():
                future.cancel()
        self.waiters, self.pending = [], {}
        return dropped

    def wait(self, match: str | re.Pattern) -> asyncio.Future:
        """A future of ``(arrival time, match)`` for the first frame holding ``match``
        (a substring, or a regex whose first group is returned). Register it
        before sending what triggers the frame."""
        if isinstance(match, str):

            def test(frame: str, marker: str = match) -> object:
                return True if marker in frame else None
        else:

            def test(frame: str, pattern: re.Pattern = match) -> object:
                found = pattern.search(frame)
                return found.group(1) if found else None

        future = asyncio.get_running_loop().create_future()
        self.waiters.append((test, future))
        return future

    async def _send(self, text: str) -> None:
        # A closed socket is counted by its reader; the ack never comes (Lost).
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(text)

    async def act(self, **message) -> dict:
        """Send an action with a new id; returns its ack or error (Lost if none)."""
        future = self.send_action(**message)
        return await within(future)

    def send_action(self, *, msg_id: str | None = None, **message) -> asyncio.Future:
        """Queue an action now (no await between several sends); its ack future.
        Lost at once if the socket never opened."""
        msg_id = msg_id or uuid.uuid4().hex
        future = asyncio.get_running_loop().create_future()
        if self.ws is None:
            future.set_exception(Lost("not connected"))
            future.exception()  # may be awaited or not: never "exception was never retrieved"
            return future
        self.pending[msg_id] = future
        asyncio.ensure_future(self._send(json.dumps({"id": msg_id, **message})))
        return future


async def within(future, timeout: float | None = None):
    """Await ``future`` for ``timeout`` seconds (default :data:`WAIT`); Lost after."""
    try:
        return await asyncio.wait_for(future, WAIT if timeout is None else timeout)
    except TimeoutError:
        raise Lost from None


async def gather_within(*futures, timeout: float | None = None) -> list:
    return await within(asyncio.gather(*futures), timeout)


class Target:
    """An app under load: its phones (pairs are phones 2p and 2p+1), its
    dashboards, and how one challenge is readied and thrown."""

    name = ""

    def __init__(self, phones: list[Conn], dashboards: list[Conn]) -> None:
        self.phones = phones
        self.dashboards = dashboards
        self.rng = random.Random(7)
        # Issue 14: the steps before the throws, seconds each (Narrator's ready):
        # "open" → the defender sees the request, "bid" → both see the throw buttons.
        self.steps: dict[str, list[float]] = {"open": [], "bid": []}
        # Issue 14: per thrown challenge, (time of the last throw, one future a dashboard).
        self.dashboard_seen: list[tuple[float, list[asyncio.Future]]] = []

    @property
    def pairs(self) -> int:
        return len(self.phones) // 2

    def pair(self, p: int) -> tuple[Conn, Conn]:
        return self.phones[2 * p], self.phones[2 * p + 1]

    def connected(self) -> list[Conn]:
        """The phones whose socket is open (a failed handshake leaves one closed)."""
        return [c for c in self.phones if c.ws is not None and c.ws.state is State.OPEN]

    def playable(self, p: int) -> bool:
        """Both phones of pair ``p`` have an open socket (a phone whose handshake
        failed would leave its partner waiting :data:`WAIT` s for each frame)."""
        return all(c.ws is not None and c.ws.state is State.OPEN for c in self.pair(p))

    async def ready(self, p: int) -> object:
        """Bring pair ``p``'s next challenge to its throws; returns its handle."""
        raise NotImplementedError

    async def throw(self, p: int, handle: object) -> float:
        """Both phones throw at once; seconds until the result is on both (Lost)."""
        raise NotImplementedError

    async def time_out(self) -> tuple[float, list[asyncio.Future]]:
        """A narrator calls Time out; returns the send time and each phone's future."""
        futures = [phone.wait('class="time-out active"') for phone in self.connected()]
        start = time.perf_counter()
        await self.dashboards[0].act(action="session.time_out")
        return start, futures

    async def resume(self) -> None:
        """Lift the time out (the bare app has nothing to lift)."""

    async def while_away(self, handles: list[object]) -> str:
        """Rulings made through the first dashboard while the other sockets are
        away: the bare app's is a Time out (one group send). Returns what changed."""
        await self.dashboards[0].act(action="session.time_out")
        return "Time out called"

    def counters(self) -> tuple[int, int]:
        """(doubled acks, server-closed sockets) so far, over every socket."""
        conns = [*self.phones, *self.dashboards]
        return sum(c.doubled for c in conns), sum(c.server_closed for c in conns)


class Narrator(Target):
    """The real app: open (challenger) → bid (defender) → both throw."""

    name = "narrator"
    RESPONSE = re.compile(r'id="card-(\d+)" class="card stage-response')

    async def ready(self, p: int) -> object:
        challenger, defender = self.pair(p)
        asked = defender.wait(self.RESPONSE)
        start = time.perf_counter()
        reply = await challenger.act(
            action="challenge.open", defender=defender.ident, bid=f"physical:{BID_TRAIT}"
        )
        if reply["type"] != "ack":
            raise Lost(reply.get("message"))
        arrived, pk = await within(asked)
        self.steps["open"].append(arrived - start)
        marker = f'id="card-{pk}" class="card stage-throws'
        seen = [challenger.wait(marker), defender.wait(marker)]
        start = time.perf_counter()
        reply = await defender.act(action="challenge.bid", challenge=pk, bid=BID_TRAIT)
        if reply["type"] != "ack":
            raise Lost(reply.get("message"))
        shown = await gather_within(*seen)
        self.steps["bid"].append(max(t for t, _ in shown) - start)
        return pk

    async def throw(self, p: int, handle: object) -> float:
        challenger, defender = self.pair(p)
        marker = f'id="card-{handle}" class="card stage-resolved'
        results = [challenger.wait(marker), defender.wait(marker)]
        row = f'id="challenge-{handle}" class="row stage-resolved'
        on_dashboards = [dashboard.wait(row) for dashboard in self.dashboards]
        # No ties: a tie would need Trait counts declared (another round trip).
        first = self.rng.choice(THROWS)
        second = BEATS[first] if self.rng.random() < 0.5 else BEATS[BEATS[first]]
        start = time.perf_counter()
        acks = [
            challenger.send_action(action="challenge.throw", challenge=handle, throw=first),
            defender.send_action(action="challenge.throw", challenge=handle, throw=second),
        ]
        self.dashboard_seen.append((start, on_dashboards))
        seen = await gather_within(*results)
        replies = await gather_within(*acks)
        if any(r["type"] != "ack" for r in replies):
            raise Lost(replies)
        return max(t for t, _ in seen) - start

    async def while_away(self, handles: list[object]) -> str:
        """The first dashboard voids every challenge of ``handles`` (readied to
        their throws) and calls Time out: every away phone's and dashboard's
        screen is stale. Returns what changed."""
        refused = []
        self.too_many = 0
        for pk in handles:
            reply = await self._tap(action="challenge.void", challenge=pk, reason="bench: ruled")
            if reply["type"] != "ack":
                refused.append(reply.get("message"))
        if refused:
            raise Lost(f"{len(refused)} voids refused: {refused[:3]}")
        reply = await self._tap(action="session.time_out")
        if reply["type"] != "ack":
            raise Lost(f"Time out refused: {reply.get('message')}")
        return (
            f"{len(handles)} challenges voided and Time out called "
            f"({self.too_many} taps refused as too many messages, tapped again)"
        )

    too_many = 0  # the kept dashboard's taps refused as too many messages (tapped again)
    _tapped = 0.0  # when the kept dashboard last tapped (time.perf_counter)

    async def _tap(self, **message) -> dict:
        """A narrator's tap on the first dashboard, its answer. Taps go one
        after another, under the socket's rate limit (settings.WS_RATE, 10
        actions/s): each at least 1/RULINGS_PER_SECOND after the one before,
        as a person taps (late acks do not make her catch up in a burst). The
        server may still read them bunched behind a backlog; a tap then
        refused as too many is tapped again after :data:`REFUSED_PAUSE`."""
        while True:
            pause = self._tapped + 1 / RULINGS_PER_SECOND - time.perf_counter()
            await asyncio.sleep(max(0.0, pause))
            self._tapped = time.perf_counter()
            reply = await self.dashboards[0].act(**message)
            if reply.get("message") != REFUSED_MESSAGE:
                return reply
            self.too_many += 1
            await asyncio.sleep(REFUSED_PAUSE)

    async def resume(self) -> None:
        futures = [phone.wait('class="time-out" role') for phone in self.connected()]
        reply = await self._tap(action="session.resume")
        if reply["type"] != "ack":
            raise Lost(f"Resume refused: {reply.get('message')}")
        await gather_within(*futures)


class Bare(Target):
    """The baseline: each throw is one group send; a phone has the result once
    it has seen both throws of its pair."""

    name = "bare"

    async def ready(self, p: int) -> object:
        return None

    async def throw(self, p: int, handle: object) -> float:
        a, b = self.pair(p)
        ids = [uuid.uuid4().hex, uuid.uuid4().hex]
        results = [phone.wait(f'data-throw="{i}"') for phone in (a, b) for i in ids]
        start = time.perf_counter()
        acks = [
            phone.send_action(msg_id=msg_id, action="throw")
            for phone, msg_id in zip((a, b), ids, strict=True)
        ]
        seen = await gather_within(*results)
        await gather_within(*acks)
        return max(t for t, _ in seen) - start


async def collect_dashboards(target: Target, result: Result) -> None:
    """Wait (up to :data:`WAIT` seconds) until every dashboard shows every result
    thrown so far; each arrival goes to ``result.dashboard_latencies`` (seconds
    from the last throw), each result a dashboard never showed to
    ``result.dashboard_lost``."""
    seen, target.dashboard_seen = target.dashboard_seen, []
    futures = [f for _, fs in seen for f in fs]
    if futures:
        await asyncio.wait(futures, timeout=WAIT)
    # A dashboard lists the newest results only (views.DASHBOARD_LIMIT): one
    # with that many results thrown after it may have left the list before its
    # row was sent (rows of one moment come in their commit order), and that
    # is not a result lost.
    window = DASHBOARD_RESULTS
    starts = sorted(start for start, _ in seen)
    for start, fs in seen:
        newer = len(starts) - bisect.bisect_right(starts, start)
        for future in fs:
            if future.done() and not future.cancelled():
                result.dashboard_latencies.append(future.result()[0] - start)
            else:
                future.cancel()
                if newer >= window:
                    result.dashboard_windowed += 1
                else:
                    result.dashboard_lost += 1


#: How many results a dashboard lists (``challenges.views.DASHBOARD_LIMIT``'s
#: ``results``); the bench imports no app code, so it is written here.
DASHBOARD_RESULTS = 8


# Connecting ------------------------------------------------------------------
async def open_all(
    conns: list[Conn],
    *,
    concurrency: int,
    errors: Counter | None = None,
    answers: Counter | None = None,
    backoff: Callable[[int], float] | None = None,
    since: float | None = None,
) -> tuple[list[float], int]:
    """Open every socket (``concurrency`` handshakes at a time) and wait for its
    first view. Returns per-socket seconds to the view, and failures; each
    failure's kind (e.g. ``HTTP 403``: Daphne's handshake timeout) is counted in
    ``errors``; each first answer (``view`` or ``pong``) in ``answers``.

    With ``backoff`` (seconds before attempt N, from 0: :func:`app_backoff`)
    each socket waits before its first attempt and retries a refused or
    dropped handshake as app.js does, until :data:`WAIT` seconds from
    ``since``; each retry is counted in ``errors`` as ``retried``. Times are
    then from ``since`` (default: each attempt's start)."""
    gate = asyncio.Semaphore(concurrency)
    answers = Counter() if answers is None else answers
    times: list[float] = []
    failed = 0
    errors = Counter() if errors is None else errors
    began = time.perf_counter() if since is None else since

    async def attempt(conn: Conn) -> Exception | None:
        async with gate:
            # A phone's view holds id="live"; a dashboard's, the challenge list;
            # a reconnect naming a current stamp gets "pong" (its screen stays),
            # or only the Time out banner when that is all it missed.
            view = conn.wait(FIRST_ANSWER)
            start = time.perf_counter() if since is None else since
            try:
                await conn.open()
                arrived, found = await within(view)
                times.append(arrived - start)
                conn.start_heartbeat()
                answers[_answer_kind(str(found))] += 1
                return None
            except (OSError, Lost, TimeoutError) as error:
                return error
            except WebSocketException as error:
                # Daphne answers 403 to a handshake the app did not accept within
                # its 5 s (--websocket_connect_timeout), or drops it.
                conn.server_closed += 1
                return error
            finally:
                view.cancel()  # a socket that never opened expects no view

    async def one(conn: Conn) -> None:
        nonlocal failed
        tries = 0
        while True:
            if backoff is not None:
                await asyncio.sleep(backoff(tries))
            error = await attempt(conn)
            if error is None:
                return
            retry = backoff is not None and not isinstance(error, Lost)
            if not retry or time.perf_counter() - began > WAIT:
                failed += 1
                errors[_kind(error)] += 1
                return
            tries += 1
            errors["retried"] += 1

    await asyncio.gather(*(one(c) for c in conns))
    return times, failed


#: A socket's first answer after it opens: a whole view (a phone's holds
#: id="live", a dashboard's the challenge list), "pong" (a reconnect naming a
#: current stamp), a frame that is only the Time out banner (a reconnect
#: whose screen missed only a Time out called or lifted) or one of the cards
#: that changed while it was away (a phone naming its cards, with the banner
#: after them if a Time out changed too).
FIRST_ANSWER = re.compile(
    r'(id="live"|id="challenge-list"|"type": "pong"|^<!--v:[0-9a-f]{16}--><div id="time-out"'
    r'|^<!--v:[0-9a-f]{16}--><(?:article id="card-|div hx-swap-oob="[a-z]+:#(?:open|done)-cards"))'
)


def _answer_kind(found: str) -> str:
    """``view``, ``pong``, ``banner`` or ``cards`` (the cards that changed
    while away, banner included): what :data:`FIRST_ANSWER` found."""
    if "pong" in found:
        return "pong"
    if not found.startswith("<!--v:"):
        return "view"
    return "banner" if found.endswith('id="time-out"') else "cards"


_BACKOFF = random.Random(13)
# app.js's reconnect delay (htmx.config.wsReconnectDelay): full jitter,
# random() × min(BACKOFF_CAP_MS, BASE × 2^retry), both read from app.js.
BACKOFF_CAP = client_constant("BACKOFF_CAP_MS") / 1000
BACKOFF_BASE = (
    float(re.search(r"BACKOFF_CAP_MS, (\d+) \* Math\.pow", APP_JS.read_text()).group(1)) / 1000
)


def app_backoff(retry: int) -> float:
    """Seconds app.js waits before reconnect attempt ``retry`` (0: the first)."""
    return _BACKOFF.random() * min(BACKOFF_CAP, BACKOFF_BASE * 2**retry)


def _kind(error: Exception) -> str:
    """A short name for why a socket did not open: ``HTTP 403``, ``Lost``, …"""
    status = getattr(getattr(error, "response", None), "status_code", None)
    if status is not None:
        return f"HTTP {status}"
    if isinstance(error, Lost):
        return "no view"
    return type(error).__name__


# Scenarios --------------------------------------------------------------------
def _playable(target: Target, pairs: range, result: Result) -> list[int]:
    """The pairs of ``pairs`` whose phones are both connected; the others are
    left out of the scenario and counted in ``result.unplayable``."""
    ok = [p for p in pairs if target.playable(p)]
    result.unplayable = len(pairs) - len(ok)
    return ok


async def _challenge(target: Target, p: int, result: Result) -> None:
    try:
        handle = await target.ready(p)
        result.add(await target.throw(p, handle))
    except Lost:
        result.lost += 1


async def paced(
    target: Target,
    *,
    rate: float,
    duration: float,
    result: Result,
    play: Callable[[int], Awaitable[None]] | None = None,
    idle: deque[int] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Start ``rate`` challenges a second for ``duration`` seconds (``inf``:
    until ``stop``) on idle pairs; each is opened, answered and thrown; the
    round trip is throws → both results. ``play(pair)`` plays one challenge
    instead (the evening's); ``idle``: the idle pairs (default: every
    playable pair), shared with ``play``. Once ``stop`` is set no challenge
    starts and those in flight are cancelled, as they are if this is."""
    idle = deque(_playable(target, range(target.pairs), result)) if idle is None else idle
    stop = asyncio.Event() if stop is None else stop
    tasks = []
    playing = None

    async def run(p: int) -> None:
        await (_challenge(target, p, result) if play is None else play(p))
        idle.append(p)

    start = time.perf_counter()
    starts = itertools.count() if math.isinf(duration) else range(max(1, int(rate * duration)))
    try:
        for i in starts:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), start + i / rate - time.perf_counter())
            if stop.is_set():
                break
            if not idle:
                result.skipped += 1
                continue
            tasks.append(asyncio.create_task(run(idle.popleft())))
        playing = asyncio.gather(*tasks)
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait([playing, stopped], return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if playing.done():
            playing.result()  # a task's error, as a bare gather would raise it
    finally:
        if playing is not None:
            playing.cancel()  # cancelled as a whole: no unretrieved CancelledError
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if playing is not None and playing.done() and not playing.cancelled():
            playing.exception()  # a task cancelled under it: retrieved, not logged at exit
    result.elapsed = time.perf_counter() - start


#: Actions a phone sends per challenge of the bench (open or bid, then a throw),
#: and a margin for its heartbeats: a pair starts its challenges no faster than
#: its phones' rate limit (settings.WS_RATE) lets them act.
SATURATION_ACTIONS = 2.5


async def saturation(target: Target, *, pairs: int, duration: float, result: Result) -> None:
    """``pairs`` pairs run challenges back to back for ``duration`` seconds,
    each pair at most as often as its phones may act
    (:data:`SATURATION_ACTIONS` / ``settings.WS_RATE`` seconds a challenge):
    faster, the server refuses their taps as too many (issue 14: with the
    worker's collections rarer, the quick bench's 10 pairs played 8
    challenges a second each, and each refusal counted as a lost result)."""
    stop = time.perf_counter() + duration
    start = time.perf_counter()
    gap = SATURATION_ACTIONS / settings.WS_RATE

    async def loop(p: int) -> None:
        while (began := time.perf_counter()) < stop:
            await _challenge(target, p, result)
            await asyncio.sleep(max(0.0, began + gap - time.perf_counter()))

    playing = _playable(target, range(target.pairs), result)[:pairs]
    result.unplayable = 0 if len(playing) == min(pairs, target.pairs) else result.unplayable
    await asyncio.gather(*(loop(p) for p in playing))
    result.elapsed = time.perf_counter() - start


async def burst(target: Target, *, result: Result, on_ready: Callable[[], None]) -> None:
    """Every pair readies a challenge (not timed), then every phone throws at
    the same moment; ``on_ready`` runs just before the throws (CPU mark). A
    result is awaited up to :data:`WAIT` seconds: late ones are measured, only
    those that never arrive are lost."""
    gate = asyncio.Semaphore(50)

    playing = set(_playable(target, range(target.pairs), result))

    async def ready(p: int) -> object:
        if p not in playing:
            return Lost
        async with gate:
            try:
                return await target.ready(p)
            except Lost:
                result.lost += 1
                return Lost

    handles = await asyncio.gather(*(ready(p) for p in range(target.pairs)))
    await asyncio.sleep(0.5)
    on_ready()

    async def throw(p: int, handle: object) -> None:
        try:
            result.add(await target.throw(p, handle))
        except Lost:
            result.lost += 1

    start = time.perf_counter()
    await asyncio.gather(*(throw(p, h) for p, h in enumerate(handles) if h is not Lost))
    result.elapsed = time.perf_counter() - start
    late = sum(t > LATE for t in result.latencies)
    result.note = f"{late} of {result.count} results after {LATE:.0f} s"


async def time_out(target: Target, *, result: Result) -> None:
    """A narrator calls Time out; the time until each phone shows it."""
    start, futures = await target.time_out()
    deadline = time.perf_counter() + WAIT
    for future in futures:  # one deadline for all: a lost phone must not delay the rest
        try:
            arrived, _ = await within(future, max(0.0, deadline - time.perf_counter()))
            result.add(arrived - start)
        except Lost:
            result.lost += 1
    result.elapsed = time.perf_counter() - start
    if missing := len(target.phones) - len(futures):
        result.note = f"{missing} phones left out (never connected)"
    try:
        await target.resume()
    except Lost:
        result.note = ", ".join(filter(None, [result.note, "Resume did not reach every phone"]))


def take_pongs(conns: list[Conn]) -> tuple[list[float], int, int]:
    """Drain what the heartbeats of ``conns`` measured since the last call:
    ``(seconds from each ping to its answer, pings sent, pings answered with
    a whole view)``."""
    latencies: list[float] = []
    pings = views = 0
    for conn in conns:
        latencies.extend(conn.pongs)
        pings += conn.pings
        views += conn.ping_views
        conn.pongs, conn.pings, conn.ping_views = [], 0, 0
    return latencies, pings, views


async def heartbeat(target: Target, *, beats: Heartbeats, duration: float, result: Result) -> None:
    """Every phone and dashboard only pings (``beats.interval``, as app.js;
    started here if the run has them off) for ``duration`` seconds; then the
    pings still unanswered get :data:`WAIT` seconds. ``result.latencies``:
    ping → pong (or the whole view a stale screen gets); ``elapsed``: the
    duration, so ``cpu_percent`` is the worker's CPU as a share of one core."""
    conns = [*target.phones, *target.dashboards]
    was_off = beats.interval <= 0
    if was_off:
        beats.interval = HEARTBEAT
        for conn in conns:
            if conn.ws is not None and conn.ws.state is State.OPEN:
                conn.start_heartbeat()
    take_pongs(conns)
    for conn in conns:  # a ping sent before the row is not timed in it
        conn.ping_at = 0.0
    # Counted: the pings whose ticks fall due in the row's window (each socket's
    # once per interval), not those a late loop ran just inside its edges.
    beats.since = time.perf_counter()
    beats.until = beats.since + duration
    # From ``until`` on no tick sends: only the answers of those sent are
    # awaited (a tick due just before it, run late by a busy loop, still sends
    # and counts; a pause here would have skipped it).
    await asyncio.sleep(duration)
    try:
        deadline = time.perf_counter() + WAIT
        while any(c.ping_at for c in conns) and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        result.lost = sum(bool(c.ping_at) for c in conns)
        result.latencies, pings, views = take_pongs(conns)
    finally:
        beats.since, beats.until = 0.0, float("inf")
        if was_off:
            beats.interval = 0
            for conn in conns:
                conn.stop_heartbeat()
    result.elapsed = duration
    result.pings = pings
    result.note = (
        f"{pings} pings from {len(conns)} sockets every {HEARTBEAT:g} s, "
        f"{views} answered with a whole view"
    )


async def reconnect(
    target: Target, *, result: Result, settle: Callable[[], Awaitable[str]] | None = None
) -> None:
    """Every phone drops at once, then (after ``settle``: the workers are done
    with the 1,500 disconnects) every phone reconnects at once; the time until
    each has its current view again (``elapsed``: until the last one has)."""
    await asyncio.gather(*(phone.close() for phone in target.phones))
    settled = await settle() if settle is not None else ""
    start = time.perf_counter()
    errors: Counter = Counter()
    answers: Counter = Counter()
    times, failed = await open_all(
        target.phones, concurrency=len(target.phones), errors=errors, answers=answers
    )
    for t in times:
        result.add(t)
    result.lost += failed
    result.elapsed = time.perf_counter() - start
    back = f"{len(times)} of {len(target.phones)} back in {result.elapsed:.1f} s"
    if answers["pong"]:
        back += f" ({answers['pong']} current: pong, {answers['view']} whole views)"
    if errors:
        back += " (failed: " + ", ".join(f"{n} {kind}" for kind, n in errors.most_common()) + ")"
    result.note = f"after the drop {settled}, {back}" if settled else back


async def reconnect_stale(
    target: Target,
    *,
    result: Result,
    settle: Callable[[], Awaitable[str]],
    jitter: bool = False,
    share: int = 4,
    on_done: Callable[[], None] | None = None,
) -> None:
    """Issue 14's storm with stale screens: every ``share``-th pair readies a
    challenge to its throws; every phone and every dashboard but the first
    drops; the first dashboard rules while they are away
    (:meth:`Target.while_away`: voids and Time out, so every screen is stale);
    once the workers are idle (``settle``: the row's CPU is counted from
    there), everyone reconnects: at once, or with ``jitter`` after app.js's
    backoff delays (and its retries of a refused handshake). Latencies:
    phones, from the storm's start to their view; ``dashboard_latencies``:
    the dashboards'; ``elapsed``: until the last one is current. Then
    ``on_done`` runs (the CPU mark) and the first dashboard resumes play
    (not timed)."""
    kept, away_dashboards = target.dashboards[0], target.dashboards[1:]
    gate = asyncio.Semaphore(50)

    async def ready(p: int) -> object:
        async with gate:
            try:
                return await target.ready(p)
            except Lost:
                return Lost

    pairs = _playable(target, range(0, target.pairs, share), result)
    readied = [h for h in await asyncio.gather(*(ready(p) for p in pairs)) if h is not Lost]
    await asyncio.gather(*(c.close() for c in [*target.phones, *away_dashboards]))
    changed = await target.while_away(readied) if kept.ws is not None else "nothing (no dashboard)"
    settled = await settle()
    start = time.perf_counter()
    errors: Counter = Counter()
    answers: Counter = Counter()
    backoff = app_backoff if jitter else None
    (phone_times, phones_failed), (dash_times, dashboards_failed) = await asyncio.gather(
        open_all(
            target.phones,
            concurrency=len(target.phones),
            errors=errors,
            answers=answers,
            backoff=backoff,
            since=start,
        ),
        open_all(
            away_dashboards,
            concurrency=max(1, len(away_dashboards)),
            errors=errors,
            answers=answers,
            backoff=backoff,
            since=start,
        ),
    )
    result.elapsed = time.perf_counter() - start
    if on_done is not None:
        on_done()
    result.latencies = phone_times
    result.dashboard_latencies = dash_times
    result.lost = phones_failed
    result.dashboard_lost = dashboards_failed
    back = len(phone_times) + len(dash_times)
    everyone = len(target.phones) + len(away_dashboards)
    result.note = (
        f"after the drop {len(readied)} of {len(pairs)} readied, {changed}, {settled}; "
        f"{'jittered as app.js, ' if jitter else 'all at once, '}"
        f"{back} of {everyone} back in {result.elapsed:.1f} s: "
        f"{answers['view']} whole views, {answers['pong']} pong"
        + (f", {answers['banner']} the Time out banner only" if answers["banner"] else "")
        + (f", {answers['cards']} only the cards that changed" if answers["cards"] else "")
    )
    if errors:
        result.note += " (" + ", ".join(f"{n} {kind}" for kind, n in errors.most_common()) + ")"
    try:
        await target.resume()
    except Lost:
        result.note += ", Resume did not reach every phone"


# The evening (issue 14): a realistic mix, played by reading each phone's card.
_BID_BUTTON = re.compile(r'<button name="bid" value="([^"]+)"')
_BID_BOX = re.compile(
    r'<input type="checkbox" name="bids" value="([^"]+)"(?: data-category="(\w+)")?'
)
_ADD_BUTTON = re.compile(r'<button name="bids" value="([^"]+)" aria-label="Add ')
_OVERBID_BUTTON = re.compile(r'<button name="traits" value="([^"]+)" aria-label="Overbid with ')
EVENING_MIX = {"relent": 0.12, "attack": 0.12, "negative": 0.15, "retest": 0.5}
MOB_SHARE = 0.05  # of the evening's starts: a mob scene (the 10th start, then every 20th)
MOB_ATTACK_SHARE = 0.5  # of the mob scenes: an attack (a win wounds)
TIE_SHARE = 1 / 3  # of the tests: both sides throw the same
MAX_REFUSALS = 6  # moves refused in one challenge before a narrator voids it (lost)
CALL_REASONS = (
    "We disagree about the tie.",
    "Did that Trait count?",
    "Please check the wound.",
    "",
)
# A mob scene on a phone: opened, its leader and whom to hurt (_mob_scenes.html).
_MOB_OPENED = re.compile(r'<article class="card mob" data-mob="(\d+)" data-stage="choosing"')
_LEADER_BUTTON = re.compile(r'<button name="leader" value="(\d+)"')
_HURT_BUTTON = re.compile(r'<button name="attacker" value="(\d*)"')
_MOB_BOX = re.compile(r'<input type="checkbox" name="bids" value="([^"]+)"')
_MOB_MUST_BID = re.compile(r"<p>Bid (\d+) ")


def _quoted(message: str) -> str:
    """A refusal's words for a row's note: no character names, 60 characters."""
    return re.sub(r"Bench \d+", "a side", message)[:60]


def _resolved(shown: dict[int, tuple[float, str]], pk: int) -> bool:
    """The challenge card ``pk`` of ``shown`` (a phone's ``cards``) shows its result."""
    return "stage-resolved" in shown.get(pk, (0.0, ""))[1][:80]


def mob_turn(start: int) -> bool:
    """Start ``start`` (0, 1, …) of an evening is a mob scene: one in
    ``1 / MOB_SHARE``, the first half way (5%: the 10th, 30th, 50th, …)."""
    return int((start + 1) * MOB_SHARE + 0.5) > int(start * MOB_SHARE + 0.5)


class Play:
    """What every evening row shares: its target, its own random draws, what
    it played (``counts``), the idle pairs (``idle``: set by :func:`evening`,
    a mob scene borrows a second pair from it), and :meth:`play_out`, which
    plays one thing (a challenge, a mob scene, a roll) to its result from
    what the phones show. Subclasses give :meth:`challenge`."""

    def __init__(self, target: Target, seed: int) -> None:
        self.target = target
        self.rng = random.Random(seed)
        self.counts: Counter = Counter()
        self.idle: deque[int] = deque()
        #: Of the results: a side calls a narrator to it (0 in the bench's rows).
        self.call_share = 0.0
        #: A narrator's dashboard is there to open mob scenes and call for
        #: rolls (False: their turns are played as challenges and contests).
        self.narrated = True

    async def challenge(self, p: int, result: Result) -> None:
        """Play one start of pair ``p`` to its result, adding its round trip
        to ``result`` and its dashboards' futures to ``target.dashboard_seen``."""
        raise NotImplementedError

    async def play_out(
        self,
        sides: list[Conn],
        *,
        look: Callable[[Conn], tuple[float, str]],
        move: Callable[[Conn, str], dict | None],
        done: Callable[[Conn], bool],
        stuck: Callable[[], Awaitable[object]],
        refused: Callable[[Conn, dict], None] | None = None,
    ) -> float:
        """Play until ``done(phone)`` for every phone of ``sides``. A phone's
        screen is ``look(phone)``: ``(arrival, html)``; on one that came after
        the ack of her last move (one rendered before it, still offering that
        move, may arrive late) and that she has not acted on, ``move(phone,
        html)`` gives her action's fields (None: nothing for her now). A move
        refused (raced by another's: her screen had not caught up, as a
        player's tap may) changed nothing: it is counted, ``refused(phone,
        fields)`` told, and she acts on her latest screen again. After
        :data:`MAX_REFUSALS` refusals, or :data:`WAIT` s with no move offered
        to anyone, a narrator ends it (``stuck()``) and it is Lost. Returns
        when the last move was sent (``time.perf_counter()`` seconds)."""
        acted: dict[Conn, str] = {}
        floor: dict[Conn, float] = {}
        last = time.perf_counter()
        refusals = 0
        while True:
            for phone in sides:  # cleared before reading: a later frame sets it again
                phone.card_changed.clear()
            moved = False
            for phone in sides:
                if done(phone):
                    continue
                at, html = look(phone)
                if not html or acted.get(phone) == html or at <= floor.get(phone, 0.0):
                    continue
                fields = move(phone, html)
                if fields is None:
                    continue
                acted[phone] = html
                last = time.perf_counter()
                reply = await phone.act(**fields)
                moved = True
                if reply["type"] == "ack":
                    floor[phone] = phone.last_answer_at
                    continue
                self.counts[f"moves refused: {_quoted(reply.get('message', ''))}"] += 1
                del acted[phone]
                if refused is not None:
                    refused(phone, fields)
                refusals += 1
                if refusals > MAX_REFUSALS:
                    await stuck()
                    raise Lost(f"{refusals} moves refused")
            if all(done(phone) for phone in sides):
                return last
            if not moved:
                waits = [asyncio.ensure_future(phone.card_changed.wait()) for phone in sides]
                finished, pending = await asyncio.wait(
                    waits, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED
                )
                for waiting in pending:
                    waiting.cancel()
                if not finished:  # no move offered to anyone: a narrator ends it
                    await stuck()
                    raise Lost("waited on no move")

    async def _asked(
        self, phone: Conn, asked: asyncio.Future, refused: str, **fields
    ) -> str | None:
        """``phone`` sends the action ``fields``; returns what ``asked`` (a
        :meth:`Conn.wait` registered before, on the phone that must answer)
        found, or None if the action was refused (counted: ``refused: why``)."""
        reply = await phone.act(**fields)
        if reply["type"] != "ack":
            asked.cancel()
            self.counts[f"{refused}: {_quoted(reply.get('message', ''))}"] += 1
            return None
        return (await within(asked))[1]

    async def _dispute(self, phone: Conn, pk: int) -> None:
        """At :attr:`call_share`, ``phone`` calls a narrator to challenge
        ``pk``, just resolved (a dispute about its result: the flag stays
        until a narrator rules or dismisses it); counted either way."""
        if not self.call_share or self.rng.random() >= self.call_share:
            return
        reply = await phone.act(
            action="challenge.call_narrator",
            challenge=pk,
            reason=self.rng.choice(CALL_REASONS),
        )
        if reply["type"] == "ack":
            self.counts["narrator called"] += 1
        else:
            self.counts[f"calls refused: {_quoted(reply.get('message', ''))}"] += 1

    def _record(self, result: Result, last: float, arrived: float, dashboards: list) -> None:
        """One result: its round trip (the ``last`` move sent → ``arrived`` on
        the phones, seconds) and its dashboards' futures (as paced's)."""
        result.add(arrived - last)
        self.target.dashboard_seen.append((last, dashboards))

    async def _ruling(self, **fields) -> None:
        """A narrator ends what offered no move for :data:`WAIT` s or refused
        too many (counted): ``fields`` of her action (a void)."""
        self.counts["voided: stuck"] += 1
        await self.target.dashboards[0].act(**fields)

    def _throw(self, phone: Conn, side: str, throws: dict, thrown: Counter) -> str:
        """Her throw in her next test (``thrown[phone]``: tests she threw in):
        both sides' throws are drawn once per test, the same (a tie) at
        :data:`TIE_SHARE`, else either side winning."""
        test = thrown[phone]
        thrown[phone] += 1
        key = ("test", test)
        if key not in throws:
            first = self.rng.choice(THROWS)
            if self.rng.random() < TIE_SHARE:
                other = first
            else:
                other = BEATS[first] if self.rng.random() < 0.5 else BEATS[BEATS[first]]
            throws[key] = f"{first}:{other}"
        return throws[key].split(":")[0 if side == "challenger" else 1]

    @staticmethod
    def _unthrow(thrown: Counter, action: str) -> Callable[[Conn, dict], None]:
        """A ``refused`` hook: a refused throw (``action``) was not thrown."""

        def refused(phone: Conn, fields: dict) -> None:
            if fields["action"] == action:
                thrown[phone] -= 1

        return refused


class Evening(Play):
    """The met_classic evening's plan and counts: each challenge is opened
    with a Trait the challenger still has (her start form), answered with one
    the defender still has (her card), and every later move is one her card
    offers (``rules.legal_moves``, rendered by ``_card.html``): a defender
    relents, a challenge is an attack, a side names a Negative Trait (right
    half the time: ``negatives`` are the bench sheets' own), a tie is
    declared, the loser overbids when offered, or accepts. Shares:
    :data:`EVENING_MIX`, :data:`TIE_SHARE`. One start in twenty
    (:data:`MOB_SHARE`, :func:`mob_turn`) is a mob scene instead
    (:meth:`mob_scene`). ``counts`` says what was played."""

    def __init__(
        self, target: Target, categories: tuple[str, ...], negatives: Callable[[int], dict]
    ) -> None:
        super().__init__(target, 17)
        self.categories = categories
        self.negatives = negatives  # character id -> {category: [Negative Trait names]}
        self.started = 0

    def _opening(self, phone: Conn) -> dict | None:
        """The ``challenge.open`` fields from her start form, or None (no Trait left)."""
        form = phone.start_forms.get("bids", "")
        singles = [v for v in _BID_BUTTON.findall(form) if v.partition(":")[0] in self.categories]
        if singles:
            return {"bid": self.rng.choice(singles)}
        boxes: dict[str, list[str]] = {}
        for name, category in _BID_BOX.findall(form):
            if category in self.categories:
                boxes.setdefault(category, []).append(name)
        pairs = [c for c, names in boxes.items() if len(names) >= 2]
        if not pairs:
            return None
        category = self.rng.choice(pairs)
        return {"bids": self.rng.sample(boxes[category], 2), "category": category}

    async def challenge(self, p: int, result: Result) -> None:
        """Play one challenge of pair ``p`` to its result (who challenges:
        either), or on a mob scene's turn a mob scene of pair ``p`` and
        another idle pair (none idle: a challenge, counted)."""
        start, self.started = self.started, self.started + 1
        if mob_turn(start) and self.narrated:
            if self.idle:
                q = self.idle.popleft()
                try:
                    await self.mob_scene([*self.target.pair(p), *self.target.pair(q)], result)
                finally:
                    self.idle.append(q)
                return
            self.counts["mob scenes not opened: no idle pair"] += 1
        a, b = self.target.pair(p)
        challenger, defender = (a, b) if self.rng.random() < 0.5 else (b, a)
        opening = self._opening(challenger)
        if opening is None:
            self.counts["not opened: no Trait left"] += 1
            return
        plan = {k for k, share in EVENING_MIX.items() if self.rng.random() < share}
        pk = await self._asked(
            challenger,
            defender.wait(Narrator.RESPONSE),
            "not opened",
            action="challenge.open",
            defender=defender.ident,
            is_attack="attack" in plan,
            **opening,
        )
        if pk is None:
            return
        pk = int(pk)
        self.counts["challenges"] += 1
        self.counts["attacks"] += "attack" in plan
        row = f'id="challenge-{pk}" class="row stage-resolved'
        on_dashboards = [d.wait(row) for d in self.target.dashboards]
        sides = {challenger: "challenger", defender: "defender"}
        opponent = {challenger: defender, defender: challenger}
        throws: dict = {}
        thrown: Counter = Counter()

        def move(phone: Conn, html: str) -> dict | None:
            fields = self._move(phone, sides[phone], html, plan, throws, thrown, opponent[phone])
            return None if fields is None else {**fields, "challenge": pk}

        last = await self.play_out(
            list(sides),
            look=lambda phone: phone.cards.get(pk, (0.0, "")),
            move=move,
            done=lambda phone: _resolved(phone.cards, pk),
            stuck=lambda: self._ruling(
                action="challenge.void", challenge=pk, reason="bench: refused move"
            ),
            refused=self._unthrow(thrown, "challenge.throw"),
        )
        self._record(result, last, max(phone.cards[pk][0] for phone in sides), on_dashboards)
        await self._dispute(defender, pk)
        outcome = challenger.cards[pk][1]
        self.counts["ties"] += "a tie" in outcome
        self.counts["draws"] += "draw" in outcome.lower()

    def _move(self, phone, side, html, plan, throws, thrown, opponent) -> dict | None:
        """The move this side makes on this card, or None (nothing for her now)."""
        if 'value="challenge.relent"' in html and "relent" in plan and side == "defender":
            self.counts["relented"] += 1
            return {"action": "challenge.relent"}
        if 'value="challenge.bid"' in html:
            buttons = _BID_BUTTON.findall(html)
            if buttons:
                return {"action": "challenge.bid", "bid": self.rng.choice(buttons)}
            boxes = [n for n, _ in _BID_BOX.findall(html)]
            if len(boxes) >= 2:
                return {"action": "challenge.bid", "bids": self.rng.sample(boxes, 2)}
            if 'value="challenge.relent"' in html:
                self.counts["relented: no Trait left"] += 1
                return {"action": "challenge.relent"}
            return None
        if 'value="challenge.add_bid"' in html:
            added = _ADD_BUTTON.findall(html)
            return {"action": "challenge.add_bid", "bids": [added[0]]} if added else None
        if 'value="challenge.declare"' in html:
            self.counts["declarations"] += 1
            return {"action": "challenge.declare"}
        if 'value="challenge.answer"' in html:
            return {"action": "challenge.answer"}
        if 'value="challenge.accept"' in html:
            overbid = _OVERBID_BUTTON.findall(html)
            if overbid and "retest" in plan and ("retest", side) not in throws:
                throws["retest", side] = "called"
                self.counts["overbid retests"] += 1
                return {
                    "action": "challenge.retest",
                    "kind": "overbid",
                    "traits": [self.rng.choice(overbid)],
                }
            return {"action": "challenge.accept"}
        if 'value="challenge.throw"' in html:
            if (
                "negative" in plan
                and side == "challenger"
                and 'value="challenge.negative"' in html
                and ("negative", side) not in throws
            ):
                throws["negative", side] = "called"
                self.counts["Negative Traits named"] += 1
                return {"action": "challenge.negative", "name": self._negative(opponent)}
            return {"action": "challenge.throw", "throw": self._throw(phone, side, throws, thrown)}
        return None

    def _negative(self, other: Conn) -> str:
        """A Negative Trait name for the other side: one she has, half the time."""
        held = [n for names in self.negatives(other.ident).values() for n in names]
        if held and self.rng.random() < 0.5:
            return self.rng.choice(held)
        return "Clumsy"

    async def mob_scene(self, people: list[Conn], result: Result) -> None:
        """One mob scene (seeds/000 "The Mob Scene") of ``people`` (two idle
        pairs), as the phones' mob cards offer it: a narrator opens it in a
        category of the evening (an attack at :data:`MOB_ATTACK_SHARE`); one
        of them, the defender, chooses nobody and the others choose her; an
        attacker picks the leader (any attacker); each attacker bids one
        Trait, she bids one per attacker (gives up if her card offers too
        few); the leader's test is played on their challenge cards as a
        challenge is; if she won an attack she hurts an attacker or nobody.
        The round trip: the move that settled it → the settled scene on every
        phone in it; dashboards: its settled row."""
        defender = self.rng.choice(people)
        category = self.rng.choice(self.categories)
        is_attack = self.rng.random() < MOB_ATTACK_SHARE
        before = {phone: set(phone.cards) for phone in people}
        mob = await self._asked(
            self.target.dashboards[0],
            defender.wait(_MOB_OPENED),
            "mob scenes not opened",
            action="mob.open",
            characters=[phone.ident for phone in people],
            category=category,
            is_attack=is_attack,
        )
        if mob is None:
            return
        mob = int(mob)
        self.counts["mob scenes"] += 1
        self.counts["mob scene attacks"] += is_attack
        row = f'class="row mob resolved" data-mob="{mob}" data-stage="settled"'
        on_dashboards = [d.wait(row) for d in self.target.dashboards]
        plan = {k for k, share in EVENING_MIX.items() if self.rng.random() < share}
        throws: dict = {}
        thrown: Counter = Counter()

        def test_card(phone: Conn) -> tuple[int, float, str] | None:
            """The test's card on her phone (the leader's or the defender's), open."""
            for pk in set(phone.cards) - before[phone]:
                at, html = phone.cards[pk]
                if "stage-resolved" not in html[:80]:
                    return pk, at, html
            return None

        def look(phone: Conn) -> tuple[float, str]:
            at, html = phone.mobs.get(mob, (0.0, ""))
            if (test := test_card(phone)) is not None:
                at, html = max(at, test[1]), html + test[2]
            return at, html

        def move(phone: Conn, _html: str) -> dict | None:
            card = phone.mobs.get(mob, (0.0, ""))[1]
            if 'value="mob.choose"' in card:
                chosen = phone is not defender and f'<option value="{defender.ident}">' in card
                return {
                    "action": "mob.choose",
                    "mob": mob,
                    "target": defender.ident if chosen else "",
                }
            if 'value="mob.leader"' in card:
                leader = int(self.rng.choice(_LEADER_BUTTON.findall(card)))
                return {"action": "mob.leader", "mob": mob, "leader": leader}
            if 'value="mob.bid"' in card:
                return self._mob_bid(mob, card, defending=phone is defender)
            if 'value="mob.hurt"' in card:
                self.counts["mob scenes the defender won in an attack"] += 1
                return {
                    "action": "mob.hurt",
                    "mob": mob,
                    "attacker": self.rng.choice(_HURT_BUTTON.findall(card)),
                }
            if (test := test_card(phone)) is not None:
                side = "defender" if phone is defender else "challenger"
                fields = self._move(phone, side, test[2], plan, throws, thrown, defender)
                return None if fields is None else {**fields, "challenge": test[0]}
            return None

        last = await self.play_out(
            people,
            look=look,
            move=move,
            done=lambda phone: 'data-stage="settled"' in phone.mobs.get(mob, (0.0, ""))[1][:120],
            stuck=lambda: self._ruling(action="mob.void", mob=mob, reason="bench: refused move"),
            refused=self._unthrow(thrown, "challenge.throw"),
        )
        self._record(result, last, max(phone.mobs[mob][0] for phone in people), on_dashboards)
        self.counts["mob scenes with wounds"] += "wounded:" in defender.mobs[mob][1]

    def _mob_bid(self, mob: int, card: str, *, defending: bool) -> dict | None:
        """Her ``mob.bid`` from her mob card: an attacker one Trait (and what
        she does: a health level), the defender as many as her card asks (one
        per attacker), or she gives up (too few offered)."""
        boxes = _MOB_BOX.findall(card)
        if defending:
            need = int(_MOB_MUST_BID.search(card).group(1)) if _MOB_MUST_BID.search(card) else 1
            if len(boxes) < need:
                self.counts["mob defenders gave up: too few Traits"] += 1
                return {"action": "mob.bid", "mob": mob, "give_up": True}
            return {"action": "mob.bid", "mob": mob, "bids": self.rng.sample(boxes, need)}
        if not boxes:
            self.counts["mob attackers with no Trait to bid"] += 1
            return None
        return {
            "action": "mob.bid",
            "mob": mob,
            "bids": [self.rng.choice(boxes)],
            "effect": "Claws",
            "damage": 1,
        }


# The other rulesets' evenings (issue 14): bns test pools, storytelling dice.
_ATTACK_BUTTON = re.compile(r'<button class="primary" name="attack" value="(\w+)"')
_DEFENCE_BUTTON = re.compile(r'<button class="primary" name="defence" value="(\w*)"')
_POOLED_ASKED = re.compile(r'<article id="card-(\d+)" class="card pooled stage-answer')
BNS_RETEST_SHARE = 0.5  # of the losers whose card offers a Willpower retest


class BnsEvening(Play):
    """The bns evening (seeds/002 "Tests and Challenges"): each start an
    opposed challenge of test pools, every move one the phones' cards offer
    (``rules.bns.legal_moves``, ``_bns_card.html``): the challenger taps an
    attack of her start form (its pool on the button), the defender a
    defence of her card, both throw (:data:`TIE_SHARE` tie: the pools
    decide), the loser of a test retests with 1 Willpower when her card
    offers it (:data:`BNS_RETEST_SHARE`), else accepts; a win deals damage.
    ``counts`` says what was played."""

    def __init__(self, target: Target) -> None:
        super().__init__(target, 19)

    async def challenge(self, p: int, result: Result) -> None:
        """Play one challenge of pair ``p`` to its result (who attacks: either)."""
        a, b = self.target.pair(p)
        challenger, defender = (a, b) if self.rng.random() < 0.5 else (b, a)
        attacks = _ATTACK_BUTTON.findall(challenger.start_forms.get("attacks", ""))
        if not attacks:
            self.counts["not opened: no attack offered"] += 1
            return
        attack = self.rng.choice(attacks)
        pk = await self._asked(
            challenger,
            defender.wait(_POOLED_ASKED),
            "not opened",
            action="bns.open",
            defender=defender.ident,
            attack=attack,
        )
        if pk is None:
            return
        pk = int(pk)
        self.counts["challenges"] += 1
        self.counts[f"{attack} attacks"] += 1
        row = f'id="challenge-{pk}" class="row pooled stage-resolved'
        on_dashboards = [d.wait(row) for d in self.target.dashboards]
        sides = {challenger: "challenger", defender: "defender"}
        throws: dict = {}
        thrown: Counter = Counter()

        def move(phone: Conn, html: str) -> dict | None:
            if 'value="bns.answer"' in html:
                defences = _DEFENCE_BUTTON.findall(html)
                if not defences:
                    return None
                return {
                    "action": "bns.answer",
                    "challenge": pk,
                    "defence": self.rng.choice(defences),
                }
            if 'value="bns.throw"' in html:
                throw = self._throw(phone, sides[phone], throws, thrown)
                return {"action": "bns.throw", "challenge": pk, "throw": throw}
            if 'value="bns.retest"' in html and self.rng.random() < BNS_RETEST_SHARE:
                self.counts["Willpower retests"] += 1
                return {"action": "bns.retest", "challenge": pk}
            if 'value="bns.accept"' in html:
                return {"action": "bns.accept", "challenge": pk}
            return None

        last = await self.play_out(
            list(sides),
            look=lambda phone: phone.cards.get(pk, (0.0, "")),
            move=move,
            done=lambda phone: _resolved(phone.cards, pk),
            stuck=lambda: self._ruling(action="bns.void", challenge=pk, reason="bench: stuck"),
            refused=self._unthrow(thrown, "bns.throw"),
        )
        self._record(result, last, max(phone.cards[pk][0] for phone in sides), on_dashboards)
        await self._dispute(defender, pk)
        outcome = challenger.cards[pk][1]
        self.counts["tied tests"] += outcome.count("a tie, ")
        self.counts["exceptional successes"] += "Exceptional success" in outcome
        self.counts["results with damage"] += "damage." in outcome and "not hurt" not in outcome


_CONTEST_ASKED = re.compile(r'<article class="card roll roll-contested" id="roll-(\d+)"')
_CALLED_ASKED = re.compile(r'<article class="card roll roll-called" id="roll-(\d+)"')
STORY_MIX = {"willpower": 0.15, "skill": 0.8}
CALLED_EVERY = 4  # of the storytelling starts: one in four is a roll a narrator calls for


def _options(html: str, name: str) -> list[str]:
    """The values of ``<select name="NAME">``'s options in ``html`` ([]: none)."""
    start = html.find(f'<select name="{name}"')
    if start < 0:
        return []
    return re.findall(r'<option value="([^"]*)"', html[start : html.find("</select>", start)])


class StoryEvening(Play):
    """The storytelling evening (seeds/003 "Actions", "Dice Pools"): each
    start a contested action, or (one in :data:`CALLED_EVERY`) a roll a
    narrator calls for, every move one the phones' cards offer
    (``_roll_start.html``, ``_roll_body.html``): the acting player picks an
    Attribute and, mostly (``skill``), a Skill of her sheet from her
    "Contest someone" form against the other, who resists with a pool of
    hers from her card; a called roll is rolled on her tap. A card offering
    Willpower (+3 dice) gets it at ``willpower``. ``skills(character id)``:
    the Skills on a bench sheet. ``counts`` says what was played."""

    def __init__(self, target: Target, skills: Callable[[int], list[str]]) -> None:
        super().__init__(target, 23)
        self.skills = skills
        self.started = 0

    def _pool(self, phone: Conn, form: str) -> dict:
        """An Attribute and a Skill (or none) ``form``'s selects offer."""
        offered = [s for s in _options(form, "skill") if s]
        mine = [s for s in self.skills(phone.ident) if s in offered]
        skill = self.rng.choice(mine) if mine and self.rng.random() < STORY_MIX["skill"] else ""
        return {"attribute": self.rng.choice(_options(form, "attribute")), "skill": skill}

    def _willpower(self, html: str) -> bool:
        if 'name="willpower"' in html and self.rng.random() < STORY_MIX["willpower"]:
            self.counts["Willpower spent"] += 1
            return True
        return False

    async def challenge(self, p: int, result: Result) -> None:
        """Play one contested action or called roll of pair ``p`` to its result."""
        a, b = self.target.pair(p)
        actor, opponent = (a, b) if self.rng.random() < 0.5 else (b, a)
        start, self.started = self.started, self.started + 1
        if start % CALLED_EVERY == 1 and self.narrated:  # the 2nd, 6th, 10th, …
            await self._called(actor, result, start // CALLED_EVERY)
            return
        form = actor.start_forms.get("contest", "")
        if f'<option value="{opponent.ident}">' not in form:
            self.counts["not opened: opponent not offered"] += 1
            return
        pk = await self._asked(
            actor,
            opponent.wait(_CONTEST_ASKED),
            "not opened",
            action="roll.contest",
            opponent=opponent.ident,
            label="Bench contest",
            **self._pool(actor, form),
        )
        if pk is None:
            return
        self.counts["contested rolls"] += 1

        def move(phone: Conn, html: str) -> dict | None:
            if 'value="roll.resist"' not in html:
                return None
            return {
                "action": "roll.resist",
                "roll": int(pk),
                "willpower": self._willpower(html),
                **self._pool(phone, html),
            }

        await self._roll([actor, opponent], int(pk), move, result)

    async def _called(self, phone: Conn, result: Result, call: int) -> None:
        """A narrator (``call``: the evening's call, 0, 1, …: the dashboards in
        turn) calls for a roll of a pool of her sheet; her phone rolls it on
        her tap."""
        dashboard = self.target.dashboards[call % len(self.target.dashboards)]
        pk = await self._asked(
            dashboard,
            phone.wait(_CALLED_ASKED),
            "not called",
            action="roll.call",
            character=phone.ident,
            willpower_allowed=True,
            **self._pool(phone, phone.start_forms.get("contest", "")),
        )
        if pk is None:
            return
        self.counts["rolls called"] += 1

        def move(phone: Conn, html: str) -> dict | None:
            if 'value="roll.make"' not in html:
                return None
            return {"action": "roll.make", "roll": int(pk), "willpower": self._willpower(html)}

        await self._roll([phone], int(pk), move, result)

    async def _roll(self, sides: list[Conn], pk: int, move, result: Result) -> None:
        """Play roll ``pk`` on ``sides``' cards to its result; the round trip:
        the tap that rolled it → the dice on every phone of ``sides``."""
        marker = f'resolved" id="roll-{pk}" data-roll'
        on_dashboards = [d.wait(marker) for d in self.target.dashboards]

        async def stuck() -> None:  # a roll has no narrator's void: it stays waiting
            self.counts["rolls stuck"] += 1

        last = await self.play_out(
            sides,
            look=lambda phone: phone.rolls.get(pk, (0.0, "")),
            move=move,
            done=lambda phone: 'resolved" id="roll-' in phone.rolls.get(pk, (0.0, ""))[1][:80],
            stuck=stuck,
        )
        self._record(result, last, max(phone.rolls[pk][0] for phone in sides), on_dashboards)
        card = sides[0].rolls[pk][1]
        self.counts["ties (status quo)"] += "A tie:" in card


async def evening(
    target: Target,
    *,
    plan: Play,
    rate: float,
    duration: float,
    result: Result,
    on_ready: Callable[[], None],
    stop: asyncio.Event | None = None,
) -> None:
    """``rate`` starts a second for ``duration`` seconds (``inf``: until
    ``stop``, as :func:`paced`) on idle pairs, each
    played to its result by ``plan`` (:class:`Evening`, :class:`BnsEvening`,
    :class:`StoryEvening`). The round trip: the move that settled it (a
    throw, a declaration, a relent, an accept, a mob scene's last move, the
    tap that rolled the dice) → its result on the phones; dashboards as in
    paced. ``result.note``: what was played (``plan.counts``). First every
    phone asks for its whole view (``sync``, as app.js on waking: the
    evening sheets were just added), not timed; ``on_ready`` runs after (the
    CPU mark)."""
    for phone in target.phones:
        phone.track_cards = True
    synced = [phone.wait('id="live"') for phone in target.connected()]
    for phone in target.connected():
        await phone.sync()
    await gather_within(*synced)
    on_ready()

    async def play(p: int) -> None:
        try:
            await plan.challenge(p, result)
        except Lost:
            result.lost += 1

    plan.idle = deque(_playable(target, range(target.pairs), result))
    try:
        await paced(
            target,
            rate=rate,
            duration=duration,
            result=result,
            play=play,
            idle=plan.idle,
            stop=stop,
        )
    finally:
        for phone in target.phones:
            phone.track_cards = False
            for shown in (phone.cards, phone.mobs, phone.rolls):
                shown.clear()
    result.note = ", ".join(f"{n} {what}" for what, n in plan.counts.most_common() if n)


#: The crowded dashboard row's connects measured for a first view's worker CPU.
FIRST_VIEWS = 10


def copies(conn: Conn, n: int) -> list[Conn]:
    """``n`` new sockets of ``conn``'s person to ``conn``'s address (the
    same cookie), not open, keeping their frames' sizes (``Conn.sizes``)."""
    out = []
    for _ in range(n):
        twin = Conn(conn.url, conn.origin, ident=conn.ident, beats=conn.beats)
        twin.headers = dict(conn.headers)
        twin.sizes = []
        out.append(twin)
    return out


async def crowded_dashboard(
    target: Target,
    *,
    cpu: Callable[[], float],
    beats: Heartbeats,
    rate: float,
    duration: float,
    result: Result,
    on_time_out: Callable[[], None],
) -> None:
    """Issue 30's crowd (``bench.fixtures.crowd``: 150 characters, 600
    challenges, 100 open), its phones and dashboards connected before the
    row. From its start every frame its dashboards get is sized; then:

    1. :data:`FIRST_VIEWS` more sockets of the first dashboard's narrator
       connect one after another, heartbeats paused: each one's first
       frame (its whole view) is sized, and the workers' CPU (``cpu()``,
       seconds) over the connects divided among them is
       ``result.first_view_cpu``; they close (not counted).
    2. Its phones play ``rate`` challenges a second for ``duration``
       seconds (:func:`paced`); every result must reach every dashboard
       (``result.dashboard_latencies``: seconds from the last throw).
    3. ``on_time_out()`` (the CPU mark), then Time out is pressed on the
       first dashboard (:func:`time_out`): ``result.latencies``, seconds from
       the press to each phone's banner; then Resume.

    ``result.first_view_bytes``: the largest first view;
    ``result.update_bytes``: the largest other frame a dashboard got (not a
    whole view: ``result.whole_views`` counts those sent again);
    ``result.dashboards_dropped``: dashboards closed by the server or not
    open at the end (the bench's sockets never reconnect by themselves, so
    0 is "connected the whole row"). ``result.note``: the challenges played
    and their phones' round trip."""
    dashboards = target.dashboards
    closed_before = [d.server_closed for d in dashboards]
    for dashboard in dashboards:
        dashboard.sizes = []
    probes = copies(dashboards[0], FIRST_VIEWS)
    beats.paused = True  # a first view's CPU, not the crowd's heartbeats
    try:
        before = cpu()
        _, failed = await open_all(probes, concurrency=1)
        result.first_view_cpu = (cpu() - before) / len(probes)
    finally:
        beats.paused = False
        await asyncio.gather(*(probe.close() for probe in probes))
    firsts = [probe.sizes[0][0] for probe in probes if probe.sizes]
    result.first_view_bytes = max(firsts, default=0)
    result.lost += failed
    played = Result(result.scenario, result.config, result.app)
    await paced(target, rate=rate, duration=duration, result=played)
    await collect_dashboards(target, result)
    result.lost += played.lost
    on_time_out()
    await time_out(target, result=result)
    frames = [frame for d in dashboards for frame in (d.sizes or [])]
    result.update_bytes = max((size for size, whole in frames if not whole), default=0)
    result.whole_views = sum(whole for _, whole in frames)
    result.dashboards_dropped = sum(
        d.server_closed > was or d.ws is None or d.ws.state is not State.OPEN
        for d, was in zip(dashboards, closed_before, strict=True)
    )
    for dashboard in dashboards:
        dashboard.sizes = None
    said = [
        f"first view {result.first_view_bytes:,} bytes and "
        f"{result.first_view_cpu * 1000:.0f} ms of worker CPU ({len(firsts)} connects)",
        f"{played.count} challenges played among the crowd (phones p99 {played.ms(99):.0f} ms)",
        f"largest update {result.update_bytes:,} bytes ({len(frames)} frames to "
        f"{len(dashboards)} dashboards, {result.whole_views} whole views)",
    ]
    result.note = ", ".join(filter(None, [result.note, *said]))
