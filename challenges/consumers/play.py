"""A player's phone (:class:`PlayConsumer`): her view and her cards, one
changed card at a time; each action one call of :mod:`challenges.services`.
Renders ``challenges/play_live.html``, ``_card_frame.html`` (with
``views.sheet_oob``), ``_time_out.html`` and, with each frame that changes
what waits on her, ``_waiting_bar.html`` (``views.waiting.WaitingBar``)."""

from __future__ import annotations

import functools
import logging
from dataclasses import replace
from types import SimpleNamespace
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.template.loader import render_to_string

from challenges import heartbeat, services, views
from challenges.consumers.base import (
    CLOSE_NOT_ALLOWED,
    BadMessage,
    BaseConsumer,
    RollActions,
    _field,
    _flag,
    _names,
    pool_spec,
)
from challenges.realtime import character_group, chronicle_group, session_group
from challenges.views.phone import (
    _with_sheet,
    bns_maneuver_choices,
    focus_spent,
    health_clock,
    phone_waits,
    start_options,
)
from challenges.views.waiting import (
    WaitingBar,
    challenge_waiting,
    combat_waiting,
    fight_waiting,
    mob_waiting,
    roll_waiting,
)
from characters.services import character_sheet, chronicle_rules

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=2)
def _time_out_html(time_out: bool) -> str:
    """The phone's time-out banner (out of band) for ``time_out``."""
    return render_to_string(
        "challenges/_time_out.html", {"session": SimpleNamespace(time_out=time_out), "oob": True}
    )


def _time_out_only(parts: heartbeat.Parts, shown: str) -> bool:
    """True if ``shown`` (a stamp) is the stamp of ``parts`` (her view now)
    but for the session's Time out, called or lifted since: the one change a
    whole hall's phones miss together (issue 14: in a reconnect storm after
    the wifi dropped, the banner instead of 1,500 whole views)."""
    session = parts.get("session")
    if session is None:
        return False
    time_out, ended = session
    return heartbeat.digest({**parts, "session": (1 - time_out, ended)}) == shown


#: At most this many cards named by a reconnect (``open`` and ``done`` together):
#: a phone shows its open challenges and :data:`views.RECENT_RESOLVED` results.
CLAIMED_CARDS_MAX = 64


def _claimed_cards(scope: dict) -> tuple[dict[int, int], list[int]] | None:
    """The cards a reconnecting phone says its screen shows, from the socket
    URL's query (``static/narrator/app.js``): ``open`` and ``done``, each a
    comma-separated list of ``ID.VERSION`` in screen order (``done``: newest
    first, as ``#done-cards``). Returns ``({challenge id: version}, [result
    ids, newest first])``, the shape of :func:`views.phone_cards_shown`, or
    None if absent or malformed (a repeated id, more than
    :data:`CLAIMED_CARDS_MAX`, anything but digits): then only the stamp
    counts. A claim is never trusted alone: :meth:`PlayConsumer._replay`
    checks it against the stamp."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if "open" not in query and "done" not in query:
        return None
    shown: dict[int, int] = {}
    done: list[int] = []
    for name in ("open", "done"):
        values = query.get(name, [""])
        if len(values) != 1:
            return None
        for entry in filter(None, values[0].split(",")):
            pk, dot, version = entry.partition(".")
            if not (dot and pk.isdecimal() and version.isdecimal()) or len(entry) > 24:
                return None
            if int(pk) in shown or len(shown) >= CLAIMED_CARDS_MAX:
                return None
            shown[int(pk)] = int(version)
            if name == "done":
                done.append(int(pk))
    return shown, done


def _echoed_stamp(scope: dict) -> str | None:
    """The ``v`` of the socket URL's query (the stamp a reconnecting screen
    shows), if it looks like a stamp."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    value = query.get("v", [""])[0]
    return value if heartbeat.looks_like_stamp(value) else None


class PlayConsumer(RollActions, BaseConsumer):
    """A player's phone for one of her characters in its chronicle's open session."""

    actions = {
        "challenge.open": "open_challenge",
        "challenge.bid": "bid",
        "challenge.relent": "relent",
        "challenge.throw": "throw",
        "challenge.declare": "declare",
        "challenge.negative": "negative",
        "challenge.add_bid": "add_bid",
        "challenge.blood": "blood",
        "challenge.preempt": "preempt",
        "challenge.retest": "retest",
        "challenge.answer": "answer",
        "challenge.accept": "accept_result",
        "challenge.call_narrator": "call_narrator",  # s11 rulings
        # issue 12: an opposed challenge of test pools (bns)
        "bns.open": "bns_open",
        "bns.answer": "bns_answer",
        "bns.throw": "bns_throw",
        "bns.retest": "bns_retest",
        "bns.accept": "bns_accept",
        "mob.choose": "mob_choose",
        "mob.leader": "mob_leader",
        "mob.bid": "mob_bid",
        "mob.hurt": "mob_hurt",
        # issue 12: bns combat rounds
        "combat.act": "combat_act",
        "combat.advance": "combat_advance",
        "combat.hold": "combat_hold",
        "combat.assist": "combat_assist",
        # issue 13: storytelling rolls
        "roll.make": "roll_make",
        "roll.contest": "roll_contest",
        "roll.resist": "roll_resist",
        "roll.extended_roll": "roll_extended_roll",
        # issue 13: Storytelling fights
        "fight.attack": "fight_attack",
        "fight.act": "fight_act",
        "fight.dodge": "fight_dodge",
        "fight.yield": "fight_yield",
        "fight.guard": "fight_guard",
    }
    #: Her sheet rates Attributes (a chronicle with combat rounds, issue 12):
    #: learnt on the first render; the stamp then has a ``combat`` part.
    combat_rounds = False
    #: The "Challenge someone" form on her screen leaves out her focus's free
    #: maneuver, spent in her live combat (issue 12; ``views.phone.focus_spent``).
    focus_spent = False
    #: Her sheet rolls dice pools (storytelling, issue 13): learnt on the first
    #: render; the stamp then has ``roll`` and ``fight`` parts.
    dice_pools = False
    #: Issue 14: the rows her roll list is drawn from (``views.Kept``; None:
    #: not known, e.g. resumed without a render) and its cards' ids in order.
    roll_window: list | None = None
    rolls_listed: list[int] = []
    #: What waits on her, as her screen's bar shows it (None: not known, e.g.
    #: resumed without a render; read afresh by the next change, :meth:`_bar`).
    bar: WaitingBar | None = None

    async def connect(self) -> None:
        found = await self.sign_in(
            views.player_seat, self.scope["url_route"]["kwargs"]["character_id"]
        )
        if found is None:
            return
        self.character, self.session = found
        groups = [character_group(self.character.pk), chronicle_group(self.character.chronicle_id)]
        if self.session is not None:
            groups.append(session_group(self.session.pk))
        await self.join(*groups)
        # A reconnect names the stamp its screen shows: if it is current, the
        # phone keeps its screen and gets "pong" (a reconnect storm after a
        # wifi drop then renders nothing), or only the Time out banner.
        echoed = _echoed_stamp(self.scope)
        claimed = _claimed_cards(self.scope)
        if echoed and (frame := await self._resume(echoed, claimed)) is not None:
            if frame:
                await self.send_stamped(frame)
            else:
                await self.send_json({"type": "pong"})
            return
        await self.send_view()

    def seat_held(self, user) -> bool:
        """She still plays this character, or narrates it as an NPC."""
        return views.seat_held(user, self.character.pk)

    @database_sync_to_async
    def _resume(
        self, echoed: str, claimed: tuple[dict[int, int], list[int]] | None = None
    ) -> str | None:
        """What a reconnecting screen showing stamp ``echoed`` needs: "" if it
        is the stamp of her current view (``pong``), the Time out banner if
        it is but for a Time out called or lifted meanwhile
        (:func:`_time_out_only`), the cards that changed while it was away
        if it names the cards it shows (``claimed``, :func:`_claimed_cards`;
        :meth:`_replay`), None if only her whole view can say (then nothing
        here changed). When not None, learn what that screen shows (her
        cards' ids and versions) without rendering. The cards are read
        before the stamp: a move committed in between changes the stamp, so
        the phone gets its whole view instead."""
        if self.session is None:
            return None
        # What a render learns from her sheet, known from her chronicle: a
        # bns or storytelling stamp has its ruleset's parts (without them such
        # a phone never resumed: its whole view on every reconnect).
        # The seat's session carries the ruleset's name: no chronicle query.
        rules = chronicle_rules([self.character], self.session)
        self.combat_rounds = rules is not None and rules.test_pools
        self.dice_pools = rules is not None and rules.dice_pools
        shown, done = views.phone_cards_shown(self.character, self.session)
        parts = self._parts()
        if heartbeat.digest(parts) == echoed:
            frame = ""
        elif _time_out_only(parts, echoed):
            frame = _time_out_html(bool(parts["session"][0]))
            self.session.time_out = bool(parts["session"][0])
        elif claimed is not None:
            return self._replay(echoed, claimed, parts, shown, done)
        else:
            return None
        self.stamp_parts, self.shown, self.done, self.sheet = parts, shown, done, None
        self.bar = None
        return frame

    def _replay(
        self,
        echoed: str,
        claimed: tuple[dict[int, int], list[int]],
        parts: heartbeat.Parts,
        shown: dict[int, int],
        done: list[int],
    ) -> str | None:
        """The frame that brings a reconnecting screen up to date card by
        card, as if it had stayed connected (issue 14: in a reconnect storm
        the phones whose challenges a narrator voided meanwhile each cost
        their whole view). ``claimed``: the cards the screen says it shows
        (:func:`_claimed_cards`); ``parts``, ``shown``, ``done``: her view
        now (read by :meth:`_resume`). None (her whole view goes) unless

        - her challenges are those of the screen's stamp ``echoed``, some of
          the claimed at a later version, and the stamp of her view with the
          claimed versions (and the Time out as it was, if it changed) is
          ``echoed``: nothing but those cards and the banner changed, and
        - the changed cards, each drawn as a live move would draw it
          (:meth:`_change_frame`: her sheet goes with the first), leave the
          screen with exactly her view's cards, order and stamp.

        A claim that does not add up costs the whole view, never a stale
        screen. At most one query per changed card (none for a row this
        worker already read), one for her sheet."""
        claim, claimed_done = claimed
        if any(pk not in claim or claim[pk] > version for pk, version in shown.items()):
            return None  # a card she has not (a new challenge), or ahead of the truth
        changed = [pk for pk, version in shown.items() if claim[pk] != version]
        screen, session = parts.get("screen"), parts.get("session")
        if not changed or screen is None or session is None:
            return None
        count, total, top, *rest = screen
        behind = sum(shown[pk] - claim[pk] for pk in changed)
        was = {**parts, "screen": (count, total - behind, top, *rest)}
        if heartbeat.digest(was) != echoed:
            was["session"] = (1 - session[0], session[1])
            if heartbeat.digest(was) != echoed:
                return None
        self.stamp_parts, self.shown, self.sheet, self.bar = was, dict(claim), None, None
        self.done = list(claimed_done)
        # Open ones first, then the results oldest first: each goes on top.
        order = [pk for pk in changed if pk not in done]
        order += [pk for pk in reversed(done) if pk in changed]
        frames = []
        for pk in order:
            frame = self._change_frame(pk, shown[pk])
            if frame is None:
                return None
            frames.append(frame)
        if (
            heartbeat.digest({**self.stamp_parts, "session": session}) != heartbeat.digest(parts)
            or self.shown != shown
            or self.done != done
        ):
            return None
        if was["session"] != session:
            self.session.time_out = bool(session[0])
            frames.append(_time_out_html(self.session.time_out))
        self.stamp_parts = parts
        return "".join(frames)

    def _parts(self) -> heartbeat.Parts:
        parts = heartbeat.play_parts(
            self.character.pk, self.session and self.session.pk, self.character.chronicle_id
        )
        if self.combat_rounds and self.session is not None and parts:
            parts["combat"] = heartbeat.combat_part(self.session.pk, self.character.pk)
        if self.dice_pools and self.session is not None and parts:
            parts["roll"] = heartbeat.rolls_part(self.session.pk, self.character.pk)
            parts["fight"] = heartbeat.fight_part(self.session.pk, self.character.pk)
        return parts

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

    async def current_in_snapshot(self) -> bool:
        if self.session is None:
            return False
        kinds = ("combat",) * bool(self.combat_rounds) + ("roll", "fight") * bool(self.dice_pools)
        parts = await heartbeat.phones.parts(
            self.session.pk, self.character.pk, self.stamped_at, kinds
        )
        return parts is not None and parts == self.stamp_parts

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
        self.met_challenges = context["met_challenges"]  # no mob scenes to redraw without
        self.combat_rounds = self.sheet.attributes is not None
        if self.combat_rounds and self.session is not None:
            self.stamp_parts["combat"] = heartbeat.combats_shown_part(context["combats"])
        spent = focus_spent(context["combats"])
        # The form is drawn again only with a new seat: its maneuver chips
        # follow her focus when it changed since this phone last knew.
        context["maneuvers_oob"] = not moved and spent != self.focus_spent
        self.focus_spent = spent
        if self.sheet.story is not None and not self.dice_pools:
            self.dice_pools = True  # from now on in every stamp
            if self.session is not None:
                self.stamp_parts["roll"] = heartbeat.rolls_part(self.session.pk, self.character.pk)
        if self.dice_pools and self.session is not None:
            self.stamp_parts["fight"] = heartbeat.mob_part(context["fights"])
        self.shown = {view.pk: view.challenge.version for view in context["challenges"]}
        self.done = [view.pk for view in context["challenges"] if view.is_resolved]
        self._keep_rolls(context["roll_window"], context["rolls"])
        self.bar = WaitingBar(context["waits"])
        return render_to_string("challenges/play_live.html", context)

    def _bar(self, sheet=None) -> WaitingBar:
        """Her bar, read afresh (with ``sheet``, else hers tonight) when not
        known: the next frame then sends it whatever it shows."""
        if self.bar is None:
            sheet = sheet or self.sheet or character_sheet(self.character, self.session)
            self.bar = WaitingBar(phone_waits(self.character, self.session, sheet), shown=False)
        return self.bar

    def _change_frame(self, challenge_id: int, version: int | None) -> str | None:
        """The frame for one changed challenge of hers: "" when the phone already
        shows that version, None when it needs its whole view (a result cost
        her Traits or health while other open cards or mob scenes on her
        screen offer her Traits, or the change cannot be placed), else one
        card frame (``_card_frame.html``): replaced in place, appended to the
        open ones, or moved on top of the results (the oldest
        result beyond :data:`views.RECENT_RESOLVED` taken off), with her sheet
        and "Challenge someone" bid buttons out of band
        (``views.sheet_oob``) when her Traits at risk or held changed, and
        who she is (``_who.html``: health, clock) when it cost her a health
        level. At most one query (the row, none when this worker committed
        it), one more for a wound (her clock); her
        sheet is the one on her screen told of this change (``Sheet.with_risk``,
        ``Sheet.with_losses``), read only after a resume without a render."""
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
        lost: list[tuple[int | None, str, object]] = []
        wounds = 0
        if card.pooled:
            # Issue 12: test pools risk no Trait; a result that hurt her or
            # cost her Willpower comes with its own character.updated (her sheet).
            risk_changed = False
        else:
            if card.is_resolved:
                lost = [
                    (loss.trait_id, loss.trait, loss.category)
                    for loss in state.losses
                    if loss.character_id == self.character.pk
                ]
                wounds = state.wounds.count(self.character.pk)
            if (lost or wounds) and not self._only_card(challenge_id):
                return None  # other cards or mob scenes offer her Traits: redraw all
            # Her Traits at risk changed (a bid of hers went in, or a challenge she
            # bid in is over), or the result cost her Traits or health: her sheet
            # and bid buttons go with the card.
            risk_changed = (
                resumed
                or bool(lost or wounds)
                or (bool(card.my_bids) and not card.is_resolved)
                != (challenge_id in sheet.risked_in)
            )
        matched = 0
        if risk_changed and not resumed:
            # Only this challenge's bids of hers, its losses and wounds changed:
            # no need to read her sheet (a sheet read on resume has them all).
            sheet = sheet.with_risk(challenge_id, state.category, card.my_bid_copies)
            if lost:
                sheet, matched = sheet.with_losses(lost)
            for _ in range(wounds):  # as services._writes._wound: one level each
                sheet = replace(sheet, health=sheet.health.worse())
            _with_sheet(card, sheet)
        elif lost:
            matched = len(lost)  # read after the result: its rows are on the sheet
        self.sheet = sheet
        # Keep the stamp equal to what the screen will show: its "screen" part
        # counts her challenges (count, sum of versions, highest id), then the
        # Traits she lost tonight (one TraitLoss row per loss on her sheet). If
        # it was already behind, it stays unequal to the truth: one extra resync.
        count, total, top, *rest = screen
        if old is None:
            count, total, top = count + 1, total + version, max(top, challenge_id)
        else:
            total += version - old
        if matched:
            rest[0] += matched
        if wounds:
            rest[1] = int(sheet.health)
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
        bar = self._bar(sheet)
        for gone in remove:
            bar.put(f"card-{gone}", None)
        bar.put(f"card-{challenge_id}", challenge_waiting(card))
        frame += bar.frame()
        if risk_changed:
            frame += views.sheet_oob(sheet)
        if wounds:  # her health and its clock (one query: the clock)
            frame += render_to_string(
                "challenges/_who.html",
                {
                    "character": self.character,
                    "session": self.session,
                    "sheet": sheet,
                    "clock": health_clock(self.character, self.session, sheet),
                    "oob": True,
                },
            )
        return frame

    _render_change = database_sync_to_async(_change_frame)

    def _only_card(self, challenge_id: int) -> bool:
        """Her screen shows no open card but ``challenge_id``'s and no mob
        scene: nothing else on it offers her Traits (bid choices, counts),
        so a result that cost her some redraws only its card and her sheet."""
        others = set(self.shown) - set(self.done) - {challenge_id}
        return not others and not self.stamp_parts.get("mob", (0,))[0]

    async def repair(self, current: heartbeat.Parts) -> bool:
        """A phone the recheck still found behind the database (``current``:
        her parts just read) whose screen differs only by a Time out called
        or lifted (its broadcast lost) gets the banner, then ``pong``, not its
        whole view (issue 14); False otherwise (the whole view goes)."""
        if not _time_out_only(current, self.stamp):
            return False
        self.session.time_out = bool(current["session"][0])
        self.stamp_parts = current
        await self.send_stamped(_time_out_html(self.session.time_out))
        await self.send_json({"type": "pong"})
        return True

    async def send_view(self, heartbeat_answer: bool = False) -> None:
        html = await self._render_view()
        if getattr(self, "regroup", None):
            old, new = self.regroup
            self.regroup = None
            await self._move_groups(old, new)
        await self.send_stamped(html, heartbeat_answer)

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
            await self.close(code=CLOSE_NOT_ALLOWED)
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
        # The phone's Trait buttons carry "category:Trait" (in "bid", or each of
        # "bids" when her wounds ask two); a category field wins.
        bids = [b for b in _names(message, "bids", "bid") if b]
        if not bids:
            raise BadMessage("Choose a Trait to bid.")
        category = _field(message, "category", str, required=False, limit=20)
        if category is None:
            categories = set()
            names = []
            for bid in bids:
                part, colon, name = bid.partition(":")
                if not colon or not name:
                    raise BadMessage("Choose a Trait to bid.")
                categories.add(part)
                names.append(name)
            if len(categories) != 1:
                raise BadMessage("Bid Traits of one category.")
            category, bids = categories.pop(), names
        services.challenge_open(
            session=session,
            challenger=self.character,
            defender=defender,
            category=category,
            bids=bids,
            is_attack=_flag(message, "is_attack"),
            stakes=_field(message, "stakes", str, required=False) or "",
            surprise=_flag(message, "surprise"),
            weapon=_field(message, "weapon", str, required=False, limit=100) or "",
            power=_field(message, "power", str, required=False, limit=100) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def bid(self, message: dict, msg_id: str) -> None:
        bids = _names(message, "bids", "bid")
        if not bids:
            raise BadMessage("Choose a Trait to bid.")
        services.challenge_bid(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            bids=bids,
            stakes=_field(message, "stakes", str, required=False) or "",
            weapon=_field(message, "weapon", str, required=False, limit=100) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def relent(self, message: dict, msg_id: str) -> None:
        services.challenge_relent(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
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

    @database_sync_to_async
    def negative(self, message: dict, msg_id: str) -> None:
        services.challenge_negative(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            name=_field(message, "name", str, limit=100),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def add_bid(self, message: dict, msg_id: str) -> None:
        services.challenge_add_bids(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            bids=_names(message, "bids", "bid"),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def blood(self, message: dict, msg_id: str) -> None:
        services.challenge_blood(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            amount=_field(message, "amount", int),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def preempt(self, message: dict, msg_id: str) -> None:
        services.challenge_preempt(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            gift=_field(message, "gift", str, limit=100),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def retest(self, message: dict, msg_id: str) -> None:
        services.challenge_retest(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            kind=_field(message, "kind", str, limit=20),
            traits=_names(message, "traits", "trait", most=1),
            count=_field(message, "count", int, required=False),
            name=_field(message, "name", str, required=False, limit=100) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def answer(self, message: dict, msg_id: str) -> None:
        services.challenge_answer(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            count=_field(message, "count", int, required=False),
            name=_field(message, "name", str, required=False, limit=100) or "",
            cancel=_flag(message, "cancel"),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def accept_result(self, message: dict, msg_id: str) -> None:
        services.challenge_accept(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # Mob scenes (issue 11, section 2) -----------------------------------------
    @database_sync_to_async
    def _render_mobs(self) -> str:
        """Her mob scenes, out of band (``_mob_scenes.html``). Her sheet is
        read only when a scene asks for her bid (its bid choices): issue 14,
        each move of a scene redraws every participant's section."""
        mobs = views.mob_views(self.session, self.character.pk)
        if any(mob.can_bid for mob in mobs):
            self.sheet = character_sheet(self.character, self.session)
            views.add_bid_choices(mobs, self.sheet)
        self.stamp_parts = {**self.stamp_parts, "mob": heartbeat.mob_part(mobs)}
        bar = self._bar()
        bar.replace("mob", map(mob_waiting, mobs))
        return render_to_string("challenges/_mob_scenes.html", {"mobs": mobs, "oob": True}) + (
            bar.frame()
        )

    async def mob_updated(self, event: dict) -> None:
        if self.session is None or event.get("session_id") != self.session.pk:
            return
        if not getattr(self, "met_challenges", True):  # a phone with no Mob scenes section
            return
        await self.send_stamped(await self._render_mobs())

    @database_sync_to_async
    def mob_choose(self, message: dict, msg_id: str) -> None:
        services.mob_choose(
            mob_id=_field(message, "mob", int),
            character=self.character,
            target=_field(message, "target", int, required=False),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def mob_leader(self, message: dict, msg_id: str) -> None:
        services.mob_pick_leader(
            mob_id=_field(message, "mob", int),
            character=self.character,
            leader=_field(message, "leader", int),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def mob_bid(self, message: dict, msg_id: str) -> None:
        bids = [] if _flag(message, "give_up") else _names(message, "bids", "bid")
        if not bids and not _flag(message, "give_up"):
            raise BadMessage("Choose a Trait to bid.")
        services.mob_bid(
            mob_id=_field(message, "mob", int),
            character=self.character,
            bids=bids,
            effect=_field(message, "effect", str, required=False, limit=100) or "",
            damage=_field(message, "damage", int, required=False) or 1,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def mob_hurt(self, message: dict, msg_id: str) -> None:
        services.mob_hurt(
            mob_id=_field(message, "mob", int),
            character=self.character,
            attacker=_field(message, "attacker", int, required=False),
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # bns combat rounds (issue 12) ---------------------------------------------
    @database_sync_to_async
    def _render_combats(self) -> str:
        """Her combats, out of band (``_combat_phone.html``); and the "Challenge
        someone" form's maneuver chips (``_bns_maneuvers.html``) only when this
        change spent her focus's free maneuver or freed it (the combat ended):
        a half-filled form survives every other combat move. No query more."""
        combats = views.phone_combats(self.character, self.session, self.sheet)
        self.stamp_parts = {**self.stamp_parts, "combat": heartbeat.combats_shown_part(combats)}
        html = render_to_string("challenges/_combat_phone.html", {"combats": combats, "oob": True})
        bar = self._bar()
        bar.replace("combat", map(combat_waiting, combats))
        html += bar.frame()
        spent = focus_spent(combats)
        if spent != self.focus_spent:
            self.focus_spent = spent
            offered = start_options(self.sheet).get("bns_maneuvers", [])
            html += render_to_string(
                "challenges/_bns_maneuvers.html",
                {"bns_maneuvers": bns_maneuver_choices(offered, combats), "oob": True},
            )
        return html

    async def combat_updated(self, event: dict) -> None:
        if self.session is None or event.get("session_id") != self.session.pk:
            return
        if self.sheet is None:  # resumed without a render: read her sheet once
            await self.send_view()
            return
        await self.send_stamped(await self._render_combats())

    def _combat_id(self, message: dict) -> int:
        return _field(message, "combat", int)

    @database_sync_to_async
    def combat_act(self, message: dict, msg_id: str) -> None:
        services.combat_act(
            combat_id=self._combat_id(message),
            character=self.character,
            kind=_field(message, "kind", str, limit=10),
            what=_field(message, "what", str, required=False, limit=10) or "move",
            steps=_field(message, "steps", int, required=False) or 0,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_advance(self, message: dict, msg_id: str) -> None:
        services.combat_advance(
            combat_id=self._combat_id(message),
            character=self.character,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_hold(self, message: dict, msg_id: str) -> None:
        services.combat_hold(
            combat_id=self._combat_id(message),
            character=self.character,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def combat_assist(self, message: dict, msg_id: str) -> None:
        services.combat_assist(
            combat_id=self._combat_id(message),
            character=self.character,
            attacker=_field(message, "attacker", int, required=False),
            attack=_field(message, "attack", int, required=False),
            steps=_field(message, "steps", int, required=False) or 0,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # Storytelling fights (issue 13) ------------------------------------------
    @database_sync_to_async
    def _render_fights(self) -> str:
        """Her fights, out of band (``_fight_phone.html``)."""
        context = {
            **views.phone_fights(self.character, self.session, self.sheet),
            "attack_kinds": views.ATTACK_KINDS,
            "damage_types": views.DAMAGE_TYPES,
            "oob": True,
        }
        self.stamp_parts = {**self.stamp_parts, "fight": heartbeat.mob_part(context["fights"])}
        bar = self._bar()
        bar.replace("fight", map(fight_waiting, context["fights"]))
        return render_to_string("challenges/_fight_phone.html", context) + bar.frame()

    async def fight_updated(self, event: dict) -> None:
        if self.session is None or event.get("session_id") != self.session.pk:
            return
        if self.sheet is None:  # resumed without a render: read her sheet once
            await self.send_view()
            return
        await self.send_stamped(await self._render_fights())

    def _fight(self, message: dict, msg_id: str) -> dict:
        return {
            "fight_id": _field(message, "fight", int),
            "character": self.character,
            "user": self.scope["user"],
            "msg_id": msg_id,
        }

    @database_sync_to_async
    def fight_attack(self, message: dict, msg_id: str) -> None:
        services.fight_attack(
            target_id=_field(message, "target", int),
            kind=_field(message, "kind", str, limit=10),
            weapon=_field(message, "weapon", int, required=False) or 0,
            damage_type=message.get("damage_type") or "bashing",
            point_blank=bool(message.get("point_blank")),
            improvised=bool(message.get("improvised")),
            willpower=bool(message.get("willpower")),
            **self._fight(message, msg_id),
        )

    @database_sync_to_async
    def fight_act(self, message: dict, msg_id: str) -> None:
        services.fight_act(
            action=_field(message, "what", str, limit=12), **self._fight(message, msg_id)
        )

    @database_sync_to_async
    def fight_dodge(self, message: dict, msg_id: str) -> None:
        services.fight_dodge(**self._fight(message, msg_id))

    @database_sync_to_async
    def fight_yield(self, message: dict, msg_id: str) -> None:
        services.fight_yield(
            until=_field(message, "until", str, limit=12), **self._fight(message, msg_id)
        )

    @database_sync_to_async
    def fight_guard(self, message: dict, msg_id: str) -> None:
        services.fight_guard(on=bool(message.get("on")), **self._fight(message, msg_id))

    # s11 rulings ----------------------------------------------------------
    @database_sync_to_async
    def call_narrator(self, message: dict, msg_id: str) -> None:
        services.challenge_call_narrator(
            challenge_id=_field(message, "challenge", int),
            character=self.character,
            reason=_field(message, "reason", str, required=False) or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # issue 12: an opposed challenge of test pools (bns) ----------------------
    @database_sync_to_async
    def bns_open(self, message: dict, msg_id: str) -> None:
        session = self._require_session()
        services.bns_open(
            session=session,
            attacker=self.character,
            defender=views.character_in_session(session, message["defender"]),
            attack=message["attack"],
            maneuvers=message["maneuvers"],
            power=message["power"] or "",
            power_skill=message["power_skill"] or "",
            surprise=message["surprise"],
            first_round=message["first_round"],
            staking=message["staking"],
            escape=message["escape"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def bns_answer(self, message: dict, msg_id: str) -> None:
        services.bns_answer(
            challenge_id=message["challenge"],
            character=self.character,
            defence=message["defence"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def bns_throw(self, message: dict, msg_id: str) -> None:
        services.bns_throw(
            challenge_id=message["challenge"],
            character=self.character,
            throw=message["throw"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def bns_retest(self, message: dict, msg_id: str) -> None:
        services.bns_retest(
            challenge_id=message["challenge"],
            character=self.character,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def bns_accept(self, message: dict, msg_id: str) -> None:
        services.bns_accept(
            challenge_id=message["challenge"],
            character=self.character,
            user=self.scope["user"],
            msg_id=msg_id,
        )

    # issue 13: storytelling rolls ----------------------------------------------
    def _keep_rolls(self, window, cards) -> None:
        """Remember what her roll list shows: the rows it was drawn from
        (``views.Kept`` of ``window``, ``views.phone_window``; None: not
        known, the next change redraws the list) and the cards' ids in order."""
        self.roll_window = None if window is None else [views.Kept.of(r) for r in window]
        self.rolls_listed = [card.pk for card in cards]

    @database_sync_to_async
    def _render_rolls(self) -> str:
        """Her rolls, out of band (``_roll_phone.html``), stamped from the database first."""
        self.stamp_parts = {
            **self.stamp_parts,
            "roll": heartbeat.rolls_part(self.session.pk, self.character.pk),
        }
        window = views.phone_window(self.character, self.session)
        rolls = views.phone_rolls(self.character, self.session, window)
        self._keep_rolls(window, rolls)
        context = {"rolls": rolls, "oob": True, **views.roll_choices()}
        bar = self._bar()
        bar.replace("roll", map(roll_waiting, rolls))
        return render_to_string("challenges/_roll_phone.html", context) + bar.frame()

    @database_sync_to_async
    def _render_roll(self, roll_id: int) -> str | None:
        """Issue 14: the frame for one changed roll of hers: "" when her
        screen already shows that version, None when only her whole list
        can say it (not known what it shows, a roll older than the rolls
        it is drawn from, or one it should list but does not), else
        ``views.place_rolls``' frame: the roll's card
        (``_roll_phone_card.html``) in its place, the cards it pushes off
        taken away. Her stamp's ``roll`` part (all her rolls: count, sum of
        versions, highest id) follows the change. One query (the row), four
        more while it waits for a tap (the sheets its card draws)."""
        window, part = self.roll_window, self.stamp_parts.get("roll")
        if window is None or part is None or self.session is None:
            return None
        row = views.session_roll(self.session, roll_id)
        if row is None or self.character.pk not in (row.character_id, row.opponent_id):
            return None
        kept = views.Kept.of(row)
        count, total, top = part
        old = next((k for k in window if k.pk == row.pk), None)
        if old is not None:
            if old.version >= row.version:
                return ""
            total += row.version - old.version
            window = [kept if k.pk == row.pk else k for k in window]
        elif len(window) < views.PHONE_WINDOW or kept.key > window[-1].key:
            # Newer than the oldest of her window, which holds every roll of hers
            # since: a roll her screen never had.
            count, total, top = count + 1, total + row.version, max(top, row.pk)
            window = sorted([*window, kept], reverse=True)[: views.PHONE_WINDOW]
        else:
            return None  # older than her window: its version before is not known
        listed = [k.pk for k in views.phone_shown(window)]
        cards = {}
        card = None
        if row.pk in listed:
            (card,) = views.roll_cards([row], self.session, me=self.character.pk, narrator=False)
            cards[row.pk] = render_to_string(
                "challenges/_roll_phone_card.html", {"card": card, **views.roll_choices()}
            )
        placed = views.place_rolls(self.rolls_listed, listed, cards, "rolls", empty=False)
        if placed is None:
            return None
        frame, self.rolls_listed = placed
        self.roll_window = window
        self.stamp_parts = {**self.stamp_parts, "roll": (count, total, top)}
        bar = self._bar()
        bar.put(f"roll-{row.pk}", card and roll_waiting(card))
        bar.keep("roll", {f"roll-{pk}" for pk in self.rolls_listed})
        return frame + bar.frame()

    async def roll_updated(self, event: dict) -> None:
        """Only her phones hear it (``services.rolls._save``: the roller's and
        the opponent's groups): that roll's card, or her whole list."""
        if self.session is None or event.get("session_id") != self.session.pk:
            return
        html = await self._render_roll(event["roll_id"])
        if html is None:
            html = await self._render_rolls()
        if html:
            await self.send_stamped(html)

    @database_sync_to_async
    def roll_make(self, message: dict, msg_id: str) -> None:
        services.roll_make(
            roll_id=message["roll"],
            character=self.character,
            willpower=message["willpower"],
            user=self.scope["user"],
            msg_id=msg_id,
        )

    @database_sync_to_async
    def roll_contest(self, message: dict, msg_id: str) -> None:
        session = self._require_session()
        if message["character"] not in (None, self.character.pk):
            raise services.ActionRefused("You can only act for your own character.")
        services.roll_contest(
            session=session,
            character=self.character,
            opponent=views.character_in_session(session, message["opponent"]),
            spec=pool_spec(message),
            willpower=message["willpower"],
            label=message["label"] or "",
            user=self.scope["user"],
            msg_id=msg_id,
        )

    def roll_actor(self, roll_id: int, side: str):
        """A phone taps for her own character only (the service checks the roll is hers)."""
        return self.character
