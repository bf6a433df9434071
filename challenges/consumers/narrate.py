"""A narrator's dashboard (:class:`NarrateConsumer`): its challenge and
roster rows, fed once per tick by its session's
:class:`~challenges.consumers.feed.DashboardFeed` (issue 14), and the
narrator's actions, each one call of :mod:`challenges.services`. Renders
``challenges/narrate_live.html``, ``_narrator_controls_oob.html`` and
``_character_choices_oob.html`` (the rows: ``feed.render_changes``)."""

from __future__ import annotations

import asyncio
import json

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from challenges import heartbeat, services, views
from challenges.consumers import feed as feeds
from challenges.consumers.base import BadMessage, BaseConsumer, RollActions, _field, pool_spec
from challenges.realtime import chronicle_group, session_group


def _goto(session_id: int) -> dict[str, str]:
    """The control frame that sends a dashboard to session ``session_id``'s."""
    return {"type": "goto", "url": views.dashboard_url(session_id)}


#: The largest update frame a dashboard's feed sends, in bytes, its stamp's
#: header (``<!--v:…-->``) included: a tick's rows go in as many frames as
#: they need (``NarrateConsumer._send_parts``).
UPDATE_FRAME_BYTES = 8 * 1024 - 64

#: What a dashboard shows out of date that its feed can send (``_stale_rows``):
#: ``({challenge id: version}, {character id: roster entry}, mob part or None)``.
Stale = tuple[dict[int, int], dict[int, tuple], tuple | None]


class NarrateConsumer(RollActions, BaseConsumer):
    """A narrator's dashboard of one session of a chronicle she narrates."""

    actions = {
        "session.time_out": "time_out",
        "session.resume": "resume",
        "static.open": "open_static",
        "simple.open": "open_simple",
        "challenge.void": "void",
        "challenge.force_retest": "force_retest",
        "session.start": "start_session",
        "session.end": "end_session",
        "presence.set": "set_presence",
        "clock.aid": "clock_aid",
        "clock.heal": "clock_heal",
        "clock.rest": "clock_rest",
        "clock.aggravated": "clock_aggravated",
        "clock.injury": "clock_injury",
        "npc.set": "set_npc",
        # s11 rulings
        "challenge.settle": "settle",
        "challenge.trait": "trait_ruling",
        "challenge.dismiss_call": "dismiss_call",
        # issue 12: a narrator's rulings on a challenge of test pools (bns)
        "bns.void": "bns_void",
        "bns.settle": "bns_settle",
        "mob.open": "mob_open",
        "mob.close": "mob_close",
        "mob.void": "mob_void",
        # issue 12: bns combat rounds
        "combat.start": "combat_start",
        "combat.advance": "combat_advance",
        "combat.reorder": "combat_reorder",
        "combat.rage": "combat_rage",
        "combat.add": "combat_add",
        "combat.remove": "combat_remove",
        "combat.end": "combat_end",
        # issue 13: storytelling rolls
        "roll.call": "roll_call",
        "roll.open": "roll_open",
        "roll.contest": "roll_contest",
        "roll.resist": "roll_resist",
        "roll.extended": "roll_extended",
        "roll.extended_roll": "roll_extended_roll",
        # issue 13: Storytelling fights and the health track
        "fight.start": "fight_start",
        "fight.end_turn": "fight_end_turn",
        "fight.add": "fight_add",
        "fight.remove": "fight_remove",
        "fight.end": "fight_end",
        "track.mark": "track_mark",
        "track.heal": "track_heal",
    }
    #: The session's ruleset runs combats in rounds (issue 12): the stamp has a ``combat`` part.
    combat_rounds = False
    #: The chronicle rolls dice pools (storytelling, issue 13): the stamp has a ``roll`` part.
    dice_pools = False
    #: A dashboard gets a frame per feed tick (``DASHBOARD_TICK_SECONDS``) and
    #: may read them seconds behind under load: a ping naming a stamp sent
    #: up to this many frames ago still gets ``pong``. A phone's 16 would
    #: cost a dashboard 1.6 s behind its whole view, which drops the rows
    #: fed before it was read and lists only ``DASHBOARD_LIMIT`` rows
    #: (issue 14). ~100 bytes a stamp, a dozen dashboards a worker.
    sent_stamps_kept = 1024

    async def connect(self) -> None:
        session = await self.sign_in(
            views.narrated_session, self.scope["url_route"]["kwargs"]["session_id"]
        )
        if session is None:
            return
        self.session = session
        self.combat_rounds = views.combat_rounds(session)
        # issue 13: a chronicle rolling dice pools: the stamp has ``roll`` and ``fight`` parts
        self.dice_pools = session.chronicle.has_dice_pools
        # Shown open: if it ends while this dashboard shows it and another
        # session opens, a missed session.changed is repaired on the next ping.
        self.shown_open = session.ended_at is None
        self.known = heartbeat.Tally(1)  # challenge id -> (version shown,)
        # The rows the last repair sent (``repair``), at the versions read; none
        # since the last whole view.
        #: What the last repair sent: challenge versions, roster entries, the mob part.
        self.repaired: Stale = ({}, {}, None)
        self.places = views.Placement()  # challenge id -> views.dashboard_place()
        # character id -> (health, lost, on a break)
        self.known_roster = heartbeat.Tally(3)
        # Whole views and fed rows go out one at a time, in the order read.
        self.frames = asyncio.Lock()
        self.view_read = 0  # feed.next_read() of the whole view shown
        # The stamp's challenges (roster) part comes from the tally once a feed
        # placed a challenge (roster) row; until then from the database, as the view's.
        self.fed: set[str] = set()
        # Issue 14: the rolls its roll list shows, in order, and their versions
        # (the stamp's roll part), and feeds.next_read() of the list shown.
        self.rolls_listed: list[int] = []
        self.rolls_known = heartbeat.Tally(1)
        self.rolls_read = 0
        # Not narrators_group: the session's feed listens to it once for every
        # dashboard of this worker (feed.DashboardFeed) and passes on the rest.
        await self.join(session_group(session.pk), chronicle_group(session.chronicle_id))
        self.rows_feed = feeds.feed_of(session)
        await self.rows_feed.join(self)
        await self.send_view()

    def seat_held(self, user) -> bool:
        """She still narrates this session's chronicle (or is a superuser)."""
        return views.narrated_session(user, self.session.pk) is not None

    async def disconnect(self, code: int) -> None:
        if (rows_feed := getattr(self, "rows_feed", None)) is not None:
            await rows_feed.leave(self)
        await super().disconnect(code)

    async def rejoin(self) -> None:
        """``BaseConsumer.rejoin``, and the feed's group (``DashboardFeed.rejoin``)."""
        await super().rejoin()
        if (rows_feed := getattr(self, "rows_feed", None)) is not None:
            await rows_feed.rejoin()

    @property
    def stamp(self) -> str:
        """The stamp of what this dashboard shows now (:meth:`shown_parts`)."""
        return heartbeat.digest(self.shown_parts())

    def shown_parts(self) -> heartbeat.Parts:
        """The parts of what this dashboard shows now: its challenges and
        roster parts from what it placed (``heartbeat.Tally``), once fed."""
        parts = self.stamp_parts
        if self.fed:
            parts = {**parts}
            if "challenges" in self.fed:
                parts["challenges"] = heartbeat.challenges_tally_part(self.known)
            if "roster" in self.fed:
                parts["roster"] = heartbeat.roster_tally_part(self.known_roster)
        if self.dice_pools:  # the rolls it lists, the same part as rolls_part's
            parts = {**parts, "roll": heartbeat.challenges_tally_part(self.rolls_known)}
        return parts

    async def answer_heartbeat(self, message: dict, recheck: int = 0) -> None:
        """``BaseConsumer.answer_heartbeat``, but a ping echoing the last stamp
        sent while this session's feed holds rows not yet sent first waits
        for them (a tick at most): they go out on this socket ahead of the
        answer, so the screen will show them when it reads it, and the echo
        stands for the stamp sent with them. Otherwise, under steady play,
        nearly every ping would find the database a tick ahead and cost a
        whole view."""
        if (
            message.get("action") == "ping"
            and self.shown_after_frames(message.get("v", stamp := self.stamp)) == stamp
            and (rows_feed := getattr(self, "rows_feed", None)) is not None
            and rows_feed.busy()
        ):
            await rows_feed.flushed()
            message = {**message, "v": self.stamp}
        await super().answer_heartbeat(message, recheck)

    async def repair(self, current: heartbeat.Parts) -> bool:
        """A dashboard the recheck still found behind the database gets the
        rows it shows out of date, not its whole view (issue 14: at 1,500
        characters a whole view costs ~0.5 s, and under load nearly every
        ping of a dashboard found it a tick behind). The challenges it lists
        and the characters on its roster are read row by row
        (``heartbeat.dashboard_rows``); each row it shows at another version,
        or lacks, goes to the feed as if its event had come (the mob scenes'
        section too, when its part differs), and the feed's next tick sends
        them, read after this read; then ``pong``. The whole view goes
        instead (False) when the difference is elsewhere (Time out, combats,
        rolls: their frames are whole already),
        when someone came to or left the roster, when no row differs (the sums do:
        something this cannot see), and when a row the last repair sent is
        still found at the same version (the repair did not take).
        ``current`` is not used: the parts are read again in the same trip
        as the rows, so that both describe one moment."""
        rows_feed = getattr(self, "rows_feed", None)
        if rows_feed is None:
            return False
        # What the screen shows, copied here: the feed changes it on this loop.
        shown = (self.shown_parts(), dict(self.known.rows), dict(self.known_roster.rows))
        stale = await database_sync_to_async(self._stale_rows)(*shown)
        last_challenges, last_characters, last_mob = self.repaired
        if (
            stale is None
            or any(last_challenges.get(pk) == v for pk, v in stale[0].items())
            or any(last_characters.get(pk) == e for pk, e in stale[1].items())
            or (stale[2] is not None and stale[2] == last_mob)
        ):
            return False
        self.repaired = challenges, characters, mob = stale
        for pk, version in challenges.items():
            # The version just read: a row this worker kept at it (or later)
            # costs no read (issue 14: 'None', read anew, was ~12% of a
            # worker when dashboards lagged a tick under load).
            rows_feed.challenge_changed(pk, version)
        for pk in characters:
            rows_feed.character_changed(pk)
        if mob is not None:
            rows_feed.mob_changed()
        await rows_feed.flushed()
        await self.send_json({"type": "pong"})
        return True

    def _stale_rows(
        self, shown: heartbeat.Parts, known: dict[int, tuple], known_roster: dict[int, tuple]
    ) -> Stale | None:
        """The challenges (``{id: version}``) and characters (``{id: roster
        entry}``) whose rows a dashboard showing ``shown`` parts, ``known``
        challenge versions and ``known_roster`` entries has out of date, as
        read now, and the ``mob`` part read now if the mob scenes' section
        is out of date (else None); None when a repair through the feed
        cannot bring it up to date (see :meth:`repair`). Runs on the
        database thread."""
        now = self._parts()
        fed = {"challenges", "roster", "mob"}
        if any(now.get(k) != shown.get(k) for k in {*now, *shown} - fed):
            return None
        mob = now.get("mob") if now.get("mob") != shown.get("mob") else None
        listed, roster = heartbeat.dashboard_rows(self.session.pk, views.DASHBOARD_LIMIT)
        if roster.keys() != known_roster.keys():
            return None  # someone came or left: the static/simple choices change too
        challenges = {pk: v for pk, v in listed.items() if known.get(pk) != (v,)}
        characters = {pk: e for pk, e in roster.items() if known_roster.get(pk) != e}
        return (challenges, characters, mob) if challenges or characters or mob else None

    def _parts(self) -> heartbeat.Parts:
        parts = heartbeat.dashboard_parts(self.session.pk, views.DASHBOARD_LIMIT)
        if self.combat_rounds and parts:
            parts["combat"] = heartbeat.combat_part(self.session.pk)
        if self.dice_pools and parts:
            parts["roll"] = heartbeat.rolls_part(self.session.pk, shown=views.ROLLS_SHOWN)
            parts["fight"] = heartbeat.fight_part(self.session.pk)
        return parts

    async def current_parts(self) -> heartbeat.Parts:
        return await database_sync_to_async(self._parts)()

    #: The session's fields a whole view reads again (``views.dashboard_context``).
    SESSION_FIELDS = ("time_out", "time_out_since", "time_out_seconds", "ended_at")

    def _read_view(self, choices: bool) -> feeds.WholeView:
        """The whole dashboard read now (on the database thread), for every
        dashboard of this session on this worker that asked for it before
        (``feed.DashboardFeed.whole_view``): nothing of this dashboard's own
        is changed or used but its session and ruleset flags, which all share.
        ``choices``: the static challenge's and simple test's character
        choices too (who is here changed)."""
        read = feeds.next_read()
        parts = self._parts()  # before rendering, as on a phone
        session = self.session
        context = views.dashboard_context(session)
        following = None
        if session.ended_at is not None:
            opened = session.chronicle.open_session()
            following = opened.pk if opened is not None else None
        return feeds.WholeView(
            read=read,
            parts=parts,
            html=render_to_string("challenges/narrate_live.html", context),
            choices=(
                render_to_string("challenges/_character_choices_oob.html", context)
                if choices
                else None
            ),
            versions={c.pk: (c.version,) for c in context["challenges"]},
            places={row.pk: views.dashboard_place(row) for row in context["rows"]},
            roster={e.character.pk: feeds.roster_entry(e) for e in context["roster"]},
            rolls=[(card.pk, card.version) for card in context["rolls"]],
            session={name: getattr(session, name) for name in self.SESSION_FIELDS},
            following=following,
        )

    async def _render_view(self, with_choices: bool = False) -> str:
        """The whole dashboard, from a read shared with this worker's other
        dashboards of the session asking at the same time (issue 14); its
        tallies and places made from it. A ``goto`` control frame (JSON)
        instead when the session it showed open ended and another is open."""
        view = await self.rows_feed.whole_view(self._read_view, with_choices)
        for name, value in view.session.items():
            setattr(self.session, name, value)
        if self.shown_open and self.session.ended_at is not None:
            self.shown_open = False
            if view.following is not None:
                return json.dumps(_goto(view.following))
        self.view_read = view.read
        self.repaired = ({}, {}, None)
        self.stamp_parts = dict(view.parts)
        self.fed = set()
        self.known = heartbeat.Tally(1, view.versions)
        self.places = views.Placement(view.places)
        self.known_roster = heartbeat.Tally(3, view.roster)
        self._keep_rolls(view.rolls)
        if with_choices and view.choices is not None:
            return view.html + view.choices
        return view.html

    async def send_view(self, with_choices: bool = False, heartbeat_answer: bool = False) -> None:
        async with self.frames:
            html = await self._render_view(with_choices)
            if html.startswith("{"):  # a control frame: this dashboard moves on
                await self.send(text_data=html)
                return
            await self.send_stamped(html, heartbeat_answer)

    async def feed(self, changes: feeds.Changes) -> None:
        """Place a flush's rows (``feed.Changes``) and send them as one frame;
        nothing if the whole view shown was read after them. Waits in a task
        of its own while a whole view is on its way (the feed does not)."""
        if self.frames.locked():
            asyncio.get_running_loop().create_task(self._feed(changes))
        else:
            await self._feed(changes)

    async def _feed(self, changes: feeds.Changes) -> None:
        async with self.frames:
            if self.view_read > changes.seq:
                return  # the view shown was read later: it shows all of this
            parts = self._place(changes)
            # Issue 14: the rolls' cards rendered once for every dashboard,
            # unless the list shown was read later; else the whole list.
            if changes.rolls is not None and self.dice_pools and changes.seq > self.rolls_read:
                rolls = self._place_rolls(changes.rolls)
                parts.append(rolls if rolls is not None else await self._render_rolls())
            if changes.mobs is not None:
                mobs, part = changes.mobs
                self.stamp_parts = {**self.stamp_parts, "mob": part}
                parts.append(mobs)
            await self._send_parts([p for p in parts if p])

    async def _send_parts(self, parts: list[str]) -> None:
        """Send a flush's parts (rows, roster rows, rolls, mob scenes) in
        frames of at most ``UPDATE_FRAME_BYTES`` (a part larger than that
        goes alone), only the last one stamped: a busy tick (a burst of
        moves, a worker behind) gathered a dozen rows into one 25 KB frame.
        The frames before the last change the screen on their way to the
        stamp the last one names, which is sent right behind them."""
        frames: list[str] = []
        size = 0
        for part in parts:
            length = len(part.encode("utf-8", "surrogatepass"))
            if frames and size + length > UPDATE_FRAME_BYTES:
                await self.send(text_data="".join(frames))
                frames, size = [], 0
            frames.append(part)
            size += length
        if frames:
            await self.send_stamped("".join(frames))

    def _place_rolls(self, rolls: feeds.RollChanges) -> str | None:
        """The frame that brings its roll list to ``rolls.listed``
        (``views.place_rolls``: changed cards replaced or put in their place,
        the oldest beyond ``views.ROLLS_SHOWN`` taken away), its tally
        updated; None when only the whole list can (then unchanged)."""
        listed = [pk for pk, _ in rolls.listed]
        placed = views.place_rolls(
            self.rolls_listed, listed, rolls.cards, "roll-dashboard", empty=True
        )
        if placed is None:
            return None
        frame, self.rolls_listed = placed
        versions = dict(rolls.listed)
        for pk in list(self.rolls_known.rows):
            if pk not in versions:
                self.rolls_known.pop(pk)
        for pk in rolls.cards:
            if pk in versions:
                self.rolls_known[pk] = (versions[pk],)
        return frame

    def _keep_rolls(self, listed: list[tuple[int, int]]) -> None:
        """Remember the roll cards its list shows: ``(id, version)`` in order."""
        self.rolls_listed = [pk for pk, _ in listed]
        self.rolls_known = heartbeat.Tally(1, {pk: (version,) for pk, version in listed})

    def _place(self, changes: feeds.Changes) -> list[str]:
        """The frame parts of ``changes`` for this dashboard, its tallies updated:
        each challenge row put where it belongs (``views.Placement``: a
        move resets its "waiting since", a result goes to the top of the
        results, the last result beyond ``views.DASHBOARD_LIMIT`` goes),
        unless the screen shows a later version; each roster row replaced, or
        inserted if not shown (not rendered so: noted again for the next tick)."""
        parts = []
        # The lowest places first: of a tick's results each is sent at its
        # turn, the newest last, even those the window then lets go; taken
        # in commit order, a result committed a moment after a newer one
        # never reached a dashboard when eight newer came in the same tick.
        for challenge_id, row_html, version, place in sorted(
            changes.rows, key=lambda row: row[3], reverse=True
        ):
            if self.known.get(challenge_id, (0,))[0] > version:
                continue  # the screen already shows a later version
            remove, where = self.places.move(challenge_id, place)
            for gone in remove:
                self.known.pop(gone)
            if where:
                self.known[challenge_id] = (version,)
            parts.append(feeds.row_frame(row_html, where, remove))
            self.fed.add("challenges")
        for character_id, entry, html in changes.roster:
            insert = character_id not in self.known_roster
            if insert not in html:
                self.rows_feed.character_changed(character_id)
                continue
            self.known_roster[character_id] = entry
            parts.append(html[insert])
            self.fed.add("roster")
        return parts

    @database_sync_to_async
    def _render_controls(self) -> str:
        self.session.refresh_from_db()
        self.stamp_parts = {**self.stamp_parts, "session": heartbeat.session_part(self.session)}
        return render_to_string(
            "challenges/_narrator_controls_oob.html", {"session": self.session, "oob": True}
        )

    # challenge.updated, mob.updated, roll.updated and the other
    # character.updated reach no dashboard: its feed notes them
    # (``DashboardFeed.hear``) and passes on only what follows.

    async def character_updated(self, event: dict) -> None:
        """A narrator marked someone present, on a break or absent (the feed
        passes on only these): the roster and the static/simple choices
        change together (rare: the whole view)."""
        await self.send_view(with_choices=True)

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
            narrator_initiated=message.get("narrator_initiated") is True,
            difficult=message.get("difficult") is True,
            at_stake=_field(message, "at_stake", str, required=False, limit=100) or "",
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
    def set_npc(self, message: dict, msg_id: str) -> None:
        # Issue 11 section 4: an NPC's auto-answer and relent settings.
        services.npc_set(
            session=self.session,
            character=views.character_in_session(self.session, _field(message, "character", int)),
            auto_answer=message.get("auto_answer") is True,
            relents=_field(message, "relents", str, required=False, limit=10) or "never",
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

    @database_sync_to_async
    def force_retest(self, message: dict, msg_id: str) -> None:
        # A ruling: like a void, it needs a reason for the history.
        reason = (_field(message, "reason", str, required=False) or "").strip()
        if not reason:
            raise BadMessage("Give a reason to force a retest: it is kept in the history.")
        services.challenge_force_retest(
            challenge_id=_field(message, "challenge", int),
            reason=reason,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # s11 clocks: health clocks -------------------------------------------------
    @database_sync_to_async
    def _render_alert(self, event_id: int) -> str:
        alert = services.clocks.alert_of(self.session.pk, event_id)
        if alert is None:
            return ""
        return render_to_string("challenges/_clock_alert_oob.html", {"alert": alert})

    async def clock_alert(self, event: dict) -> None:
        """A health clock ran out or a character died: a banner on top (the
        dashboard's script rings it); the roster row follows with
        ``character.updated``."""
        if html := await self._render_alert(int(event["event_id"])):
            await self.send_stamped(html)

    def _clock_character(self, message: dict):
        return views.character_in_session(self.session, _field(message, "character", int))

    @database_sync_to_async
    def clock_aid(self, message: dict, msg_id: str) -> None:
        services.clocks.clock_aid(
            session=self.session,
            character=self._clock_character(message),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def clock_heal(self, message: dict, msg_id: str) -> None:
        services.clocks.clock_heal(
            session=self.session,
            character=self._clock_character(message),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def clock_rest(self, message: dict, msg_id: str) -> None:
        services.clocks.clock_rest(
            session=self.session,
            character=self._clock_character(message),
            resting=message.get("resting") is True,
            form=_field(message, "form", str, limit=10),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def clock_aggravated(self, message: dict, msg_id: str) -> None:
        services.clocks.clock_aggravated(
            session=self.session,
            character=self._clock_character(message),
            count=int(message["count"]),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def clock_injury(self, message: dict, msg_id: str) -> None:
        services.clocks.clock_injury(
            session=self.session,
            character=self._clock_character(message),
            injury=_field(message, "injury", str, limit=120),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # s11 rulings ----------------------------------------------------------
    @database_sync_to_async
    def settle(self, message: dict, msg_id: str) -> None:
        services.challenge_settle(
            challenge_id=_field(message, "challenge", int),
            winner=_field(message, "winner", str, limit=10),
            reason=_field(message, "reason", str),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def trait_ruling(self, message: dict, msg_id: str) -> None:
        services.challenge_trait_ruling(
            challenge_id=_field(message, "challenge", int),
            character_id=_field(message, "character", int),
            trait_id=_field(message, "trait", int),
            give_back=_field(message, "change", str, limit=10) == "give_back",
            reason=_field(message, "reason", str),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def dismiss_call(self, message: dict, msg_id: str) -> None:
        services.challenge_dismiss_call(
            challenge_id=_field(message, "challenge", int),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # Mob scenes (issue 11, section 2) -----------------------------------------
    @database_sync_to_async
    def mob_open(self, message: dict, msg_id: str) -> None:
        ids = message.get("characters") or []
        services.mob_open(
            session=self.session,
            characters=[views.character_in_session(self.session, pk) for pk in ids],
            category=_field(message, "category", str, limit=20),
            is_attack=message.get("is_attack") is True,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def mob_close(self, message: dict, msg_id: str) -> None:
        services.mob_close_choosing(
            mob_id=_field(message, "mob", int), user=self.scope["user"], msg_id=msg_id
        )

    @database_sync_to_async
    def mob_void(self, message: dict, msg_id: str) -> None:
        reason = (_field(message, "reason", str, required=False) or "").strip()
        if not reason:
            raise BadMessage("Give a reason to end a mob scene: it is kept in the history.")
        services.mob_void(
            mob_id=_field(message, "mob", int),
            reason=reason,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # issue 12: a narrator's rulings on a challenge of test pools (bns) -------
    @database_sync_to_async
    def bns_void(self, message: dict, msg_id: str) -> None:
        services.bns_void(
            challenge_id=message["challenge"],
            reason=message["reason"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def bns_settle(self, message: dict, msg_id: str) -> None:
        services.bns_settle(
            challenge_id=message["challenge"],
            winner=message["winner"],
            reason=message["reason"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # bns combat rounds (issue 12) ---------------------------------------------
    @database_sync_to_async
    def _render_combats(self) -> str:
        context = views.dashboard_combats(self.session)
        self.stamp_parts = {
            **self.stamp_parts,
            "combat": heartbeat.combats_shown_part(context["combats"]),
        }
        return render_to_string("challenges/_combat_dashboard.html", {**context, "oob": True})

    async def combat_updated(self, event: dict) -> None:
        if self.combat_rounds:
            await self.send_stamped(await self._render_combats())

    def _combat_id(self, message: dict) -> int:
        return _field(message, "combat", int)

    @database_sync_to_async
    def combat_start(self, message: dict, msg_id: str) -> None:
        ids = message.get("characters") or []
        services.combat_start(
            session=self.session,
            characters=[views.character_in_session(self.session, pk) for pk in ids],
            surprise=_field(message, "surprise", int, required=False),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_advance(self, message: dict, msg_id: str) -> None:
        services.combat_advance(
            combat_id=self._combat_id(message), user=self.scope["user"], msg_id=msg_id
        )

    @database_sync_to_async
    def combat_reorder(self, message: dict, msg_id: str) -> None:
        services.combat_reorder(
            combat_id=self._combat_id(message),
            order=message.get("order") or [],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_rage(self, message: dict, msg_id: str) -> None:
        services.combat_set_rage(
            combat_id=self._combat_id(message),
            character_id=_field(message, "character", int),
            rounds=_field(message, "rounds", int),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_add(self, message: dict, msg_id: str) -> None:
        services.combat_add(
            combat_id=self._combat_id(message),
            character=views.character_in_session(self.session, _field(message, "character", int)),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_remove(self, message: dict, msg_id: str) -> None:
        services.combat_remove(
            combat_id=self._combat_id(message),
            character_id=_field(message, "character", int),
            reason=_field(message, "reason", str, required=False) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_end(self, message: dict, msg_id: str) -> None:
        services.combat_end(
            combat_id=self._combat_id(message),
            reason=_field(message, "reason", str, required=False) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # issue 13: storytelling rolls ----------------------------------------------
    @database_sync_to_async
    def _render_rolls(self) -> str:
        """The session's rolls, out of band (``_roll_dashboard.html``): the
        whole list, when its changed cards cannot say it (one query, four
        more for the sheets of rolls waiting)."""
        self.rolls_read = feeds.next_read()
        cards = views.roll_cards(
            views.dashboard_roll_rows(self.session), self.session, me=None, narrator=True
        )
        self._keep_rolls([(card.pk, card.version) for card in cards])
        context = {"rolls": cards, "oob": True, **views.roll_choices()}
        return render_to_string("challenges/_roll_dashboard.html", context)

    def _character(self, character_id: int):
        return views.character_in_session(self.session, character_id)

    @database_sync_to_async
    def roll_call(self, message: dict, msg_id: str) -> None:
        services.roll_call(
            session=self.session,
            character=self._character(message["character"]),
            spec=pool_spec(message),
            willpower=message["willpower"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def roll_open(self, message: dict, msg_id: str) -> None:
        services.roll_open(
            session=self.session,
            dice=message["dice"],
            label=message["label"] or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def roll_contest(self, message: dict, msg_id: str) -> None:
        if message["character"] is None:
            raise BadMessage("Choose who acts.")
        services.roll_contest(
            session=self.session,
            character=self._character(message["character"]),
            opponent=self._character(message["opponent"]),
            spec=pool_spec(message),
            willpower=message["willpower"],
            label=message["label"] or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    def roll_actor(self, roll_id: int, field: str):
        """The character of roll ``roll_id`` (``field``: "character" or
        "opponent") a narrator taps for; the service checks she is an NPC."""
        from challenges.models import DiceRoll

        row = (
            DiceRoll.objects.filter(pk=roll_id, session=self.session).select_related(field).first()
        )
        character = getattr(row, field, None) if row is not None else None
        if character is None:
            raise services.ActionRefused("There is no such roll.")
        return character

    @database_sync_to_async
    def roll_extended(self, message: dict, msg_id: str) -> None:
        services.roll_extended(
            session=self.session,
            character=self._character(message["character"]),
            spec=pool_spec(message),
            target=message["target"],
            interval_minutes=message["interval"],
            most_rolls=message["most_rolls"],
            budget_minutes=message["budget"],
            label=message["label"] or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # Storytelling fights and the health track (issue 13) ----------------------
    @database_sync_to_async
    def _render_fights(self) -> str:
        context = views.dashboard_fights(self.session)
        self.stamp_parts = {**self.stamp_parts, "fight": heartbeat.mob_part(context["fights"])}
        return render_to_string("challenges/_fight_dashboard.html", {**context, "oob": True})

    async def fight_updated(self, event: dict) -> None:
        if self.dice_pools:
            await self.send_stamped(await self._render_fights())

    def _fight_id(self, message: dict) -> int:
        return _field(message, "fight", int)

    @database_sync_to_async
    def fight_start(self, message: dict, msg_id: str) -> None:
        ids = message.get("characters") or []
        services.fight_start(
            session=self.session,
            characters=[views.character_in_session(self.session, pk) for pk in ids],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def fight_end_turn(self, message: dict, msg_id: str) -> None:
        services.fight_end_turn(
            fight_id=self._fight_id(message), user=self.scope["user"], msg_id=msg_id
        )

    @database_sync_to_async
    def fight_add(self, message: dict, msg_id: str) -> None:
        services.fight_add(
            fight_id=self._fight_id(message),
            character=views.character_in_session(self.session, _field(message, "character", int)),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def fight_remove(self, message: dict, msg_id: str) -> None:
        services.fight_remove(
            fight_id=self._fight_id(message),
            character_id=_field(message, "character", int),
            reason=message.get("reason") or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def fight_end(self, message: dict, msg_id: str) -> None:
        services.fight_end(
            fight_id=self._fight_id(message),
            reason=message.get("reason") or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    def _track_args(self, message: dict, msg_id: str) -> dict:
        return {
            "session": self.session,
            "character": views.character_in_session(
                self.session, _field(message, "character", int)
            ),
            "points": _field(message, "points", int),
            "reason": message.get("reason") or "",
            "user": self.scope["user"],
            "msg_id": msg_id,
        }

    @database_sync_to_async
    def track_mark(self, message: dict, msg_id: str) -> None:
        services.track_mark(
            damage_type=message.get("damage_type") or "bashing",
            **self._track_args(message, msg_id),
        )

    @database_sync_to_async
    def track_heal(self, message: dict, msg_id: str) -> None:
        services.track_heal(**self._track_args(message, msg_id))
