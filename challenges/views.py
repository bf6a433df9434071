"""Pages and the view-models shared by HTTP views and websocket consumers.

Each viewer gets her own rendering: ``ChallengeView`` shows a throw to the other
side (or a narrator) only once both throws of that test are in.
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Case, DateTimeField, F, Q, QuerySet, Value, When
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from challenges.models import Challenge, Event, TraitLoss
from challenges.realtime import CHARACTER_UPDATED, broadcast_on_commit, narrators_group
from challenges.rows import committed_rows
from challenges.rules import Category, ChallengeState, Kind, Outcome, Side, Stage, TestRecord
from characters.models import Character, Chronicle, GameSession, Presence
from characters.services import Sheet, TraitLine, character_sheet, character_sheets

RECENT_RESOLVED = 5  # resolved challenges kept on a phone
#: Presences a dashboard lists: absent characters leave the roster.
ON_ROSTER = (Presence.Status.PRESENT, Presence.Status.BREAK)
DASHBOARD_LIMIT = 300  # challenges listed on a dashboard
RESULT_COLLAPSE_SECONDS = 180  # a dashboard's result shows as one line after this


HIDDEN = "hidden"  # a throw that is in but not yet revealed, where a viewer sees that much


def shown_throws(record: TestRecord) -> tuple[str | None, str | None]:
    """``(challenger throw, defender throw)`` of a test as anyone outside it
    sees them (a narrator's dashboard, the admin): both once the test is
    revealed (``TestRecord.revealed``: both throws in), before that neither,
    the narrator's own preset throw included."""
    if not record.revealed:
        return None, None
    assert record.challenger_throw is not None and record.defender_throw is not None
    return record.challenger_throw.value, record.defender_throw.value


def state_shown(state: dict) -> dict:
    """A challenge's stored ``state`` dict with the throws of every unrevealed
    test replaced by :data:`HIDDEN` (None where not thrown): what the admin
    shows. A state that does not parse is shown with every throw hidden."""
    tests = []
    for test in state.get("tests") or []:
        try:
            record = TestRecord.from_dict(test)
        except (KeyError, TypeError, ValueError):
            record = TestRecord()
        shown = dict(zip(("challenger_throw", "defender_throw"), shown_throws(record), strict=True))
        for key, throw in shown.items():
            shown[key] = throw or (HIDDEN if test.get(key) else None)
        tests.append({**test, **shown})
    return {**state, "tests": tests}


@dataclass(frozen=True)
class TestView:
    """One test as one viewer may see it: the other side's throw only once revealed."""

    number: int
    mine: str | None
    theirs: str | None
    revealed: bool
    challenger_throw: str | None
    defender_throw: str | None
    thrown: tuple[bool, bool]
    record: TestRecord


@dataclass
class ChallengeView:
    """A challenge as seen by ``side`` (None: a narrator's dashboard)."""

    challenge: Challenge
    state: ChallengeState
    side: Side | None
    #: Traits the viewer may bid now (phone only), and her Trait count in the
    #: challenge's category (the default declaration in a tie).
    bid_choices: list[TraitLine] = field(default_factory=list)
    held: int = 0
    #: A voided challenge's reason, as the narrator gave it (dashboard only).
    void_reason: str = ""

    @property
    def pk(self) -> int:
        return self.challenge.pk

    @property
    def stage(self) -> str:
        return self.state.stage.value

    @property
    def is_resolved(self) -> bool:
        return self.state.stage == Stage.RESOLVED

    @property
    def category_label(self) -> str:
        return self.state.category.value.title() if self.state.category else ""

    @property
    def kind_label(self) -> str:
        return {
            Kind.OPPOSED: f"{self.category_label} challenge",
            Kind.STATIC: f"Static {self.category_label} challenge",
            Kind.SIMPLE: "Simple test",
        }[self.state.kind]

    @property
    def challenger_name(self) -> str:
        return self.state.challenger.name

    @property
    def defender_name(self) -> str:
        if self.state.defender is not None:
            return self.state.defender.name
        return "the narrator"

    @property
    def opponent_name(self) -> str:
        return self.defender_name if self.side == Side.CHALLENGER else self.challenger_name

    def _is(self, side: Side) -> bool:
        return self.side == side

    @property
    def my_bids(self) -> tuple[str, ...]:
        if self.side == Side.CHALLENGER:
            return self.state.challenger_bids
        if self.side == Side.DEFENDER:
            return self.state.defender_bids
        return ()

    @property
    def my_bid_copies(self) -> list[tuple[int | None, str]]:
        """The viewer's copies at risk in this challenge, ``(Trait id or None,
        name as bid)`` each: none once it is resolved."""
        if self.is_resolved:
            return []
        ids: tuple[int | None, ...] = ()
        if self.side == Side.CHALLENGER:
            ids = self.state.challenger_bid_ids
        elif self.side == Side.DEFENDER:
            ids = self.state.defender_bid_ids
        names = self.my_bids
        return [(ids[n] if n < len(ids) else None, name) for n, name in enumerate(names)]

    @property
    def their_bids(self) -> tuple[str, ...]:
        if self.side == Side.CHALLENGER:
            return self.state.defender_bids
        return self.state.challenger_bids

    @property
    def tests(self) -> list[TestView]:
        views = []
        for number, record in enumerate(self.state.tests, start=1):
            revealed = record.revealed
            ch = record.challenger_throw.value if record.challenger_throw else None
            de = record.defender_throw.value if record.defender_throw else None
            # The narrator's own throw in a static challenge is hidden from her
            # dashboard too until the player throws: she may have not chosen it.
            mine = (
                ch if self.side == Side.CHALLENGER else de if self.side == Side.DEFENDER else None
            )
            theirs = (de if self.side == Side.CHALLENGER else ch) if revealed else None
            narrator_side_has_thrown = de is not None and self.state.kind == Kind.OPPOSED
            shown_ch, shown_de = shown_throws(record)
            views.append(
                TestView(
                    number=number,
                    mine=mine,
                    theirs=theirs,
                    revealed=revealed,
                    challenger_throw=shown_ch,
                    defender_throw=shown_de,
                    thrown=(ch is not None, narrator_side_has_thrown or revealed),
                    record=record,
                )
            )
        return views

    @property
    def current_test(self) -> TestView | None:
        tests = self.tests
        return tests[-1] if tests else None

    # What the viewer may do now ------------------------------------------
    @property
    def can_bid(self) -> bool:
        if self.state.stage == Stage.RESPONSE:
            return self._is(Side.DEFENDER)
        return self.state.stage == Stage.BID and self._is(Side.CHALLENGER)

    @property
    def can_throw(self) -> bool:
        if self.state.stage != Stage.THROWS or self.side is None:
            return False
        test = self.current_test
        return test is None or test.mine is None

    @property
    def can_declare(self) -> bool:
        return (self.state.stage == Stage.DECLARE_CHALLENGER and self._is(Side.CHALLENGER)) or (
            self.state.stage == Stage.DECLARE_DEFENDER and self._is(Side.DEFENDER)
        )

    @property
    def declared_by_challenger(self) -> int | None:
        test = self.state.current_test
        return test.challenger_declared if test else None

    @property
    def waiting_on(self) -> str:
        """Whose move it is, in words: "Grady", "Helen and Grady", "" when over."""
        return self._waiting_on(str)

    @property
    def waiting_on_html(self) -> SafeString:
        """:attr:`waiting_on` with each name inside ``<bdi>`` (safe HTML)."""
        return mark_safe(self._waiting_on(bdi))  # every name went through bdi()

    def _waiting_on(self, name: Callable[[str], str]) -> str:
        stage = self.state.stage
        if stage == Stage.RESOLVED:
            return ""
        if stage in (Stage.BID, Stage.DECLARE_CHALLENGER):
            return name(self.challenger_name)
        if stage in (Stage.RESPONSE, Stage.DECLARE_DEFENDER):
            return name(self.defender_name)
        test = self.state.current_test
        names = []
        if test is None or test.challenger_throw is None:
            names.append(name(self.challenger_name))
        if self.state.kind == Kind.OPPOSED and (test is None or test.defender_throw is None):
            names.append(name(self.defender_name))
        return " and ".join(names)

    @property
    def waiting_for(self) -> str:
        """What the challenge waits for, in the game's words."""
        return {
            Stage.BID: "a bid",
            Stage.RESPONSE: "a bid or relent",
            Stage.THROWS: "a throw",
            Stage.DECLARE_CHALLENGER: "a Trait count",
            Stage.DECLARE_DEFENDER: "a Trait count",
            Stage.RESOLVED: "",
        }[self.state.stage]

    @property
    def waiting_on_me(self) -> bool:
        return self.can_bid or self.can_throw or self.can_declare

    @property
    def stage_since(self) -> float:
        """Epoch seconds of the last stage change (the dashboard's clock starts here)."""
        return self.state.stage_since

    @property
    def stage_since_iso(self) -> str:
        return datetime.fromtimestamp(self.state.stage_since, tz=UTC).isoformat()

    @property
    def collapsed(self) -> bool:
        """A result older than :data:`RESULT_COLLAPSE_SECONDS` (a dashboard
        shows it as its outcome line only); False while unresolved."""
        return self.is_resolved and time.time() - self.stage_since > RESULT_COLLAPSE_SECONDS

    # Outcome --------------------------------------------------------------
    @property
    def outcome(self) -> str:
        return self.state.outcome.value if self.state.outcome else ""

    @property
    def i_won(self) -> bool | None:
        outcome = self.state.outcome
        if outcome in (None, Outcome.DRAW, Outcome.VOID) or self.side is None:
            return None
        return (outcome == Outcome.CHALLENGER_WINS) == (self.side == Side.CHALLENGER)

    @property
    def outcome_text(self) -> str:
        """The result in words for this viewer, with what was lost."""
        return self._outcome(str)

    @property
    def outcome_html(self) -> SafeString:
        """:attr:`outcome_text` with each name and Trait inside ``<bdi>`` (safe
        HTML): a name with a right-to-left override cannot garble the sentence."""
        return mark_safe(self._outcome(bdi))  # every name went through bdi()

    def _outcome(self, name: Callable[[str], str]) -> str:
        state = self.state
        if state.outcome is None:
            return ""
        if state.outcome == Outcome.VOID:
            return "Voided by a narrator: nothing is lost."
        if state.kind in (Kind.STATIC, Kind.SIMPLE):
            head = "Success!" if state.outcome == Outcome.CHALLENGER_WINS else "Failure."
        elif state.outcome == Outcome.DRAW:
            head = "Draw."
        elif self.side is None:
            winner = (
                self.challenger_name
                if state.outcome == Outcome.CHALLENGER_WINS
                else self.defender_name
            )
            head = f"{name(winner)} wins."
        else:
            head = "You win!" if self.i_won else "You lose."
        names = {state.challenger.character_id: state.challenger.name}
        if state.defender is not None:
            names[state.defender.character_id] = state.defender.name
        mine = self.viewer_id
        own = _own_losses(
            [name(loss.trait) for loss in state.losses if loss.character_id == mine],
            mine in state.wounds,
        )
        if own:
            # Her own losses, second person, right after the head: "You lose: your
            # Quick is lost and you lose a health level."
            stem = head.rstrip(".!") + (" (relented)" if state.relented else "")
            head = f"{stem}: {own}."
        elif state.relented:
            head += " (relented)"
        parts = []
        for character_id, who in names.items():
            lost = [name(loss.trait) for loss in state.losses if loss.character_id == character_id]
            wounded = character_id in state.wounds
            if character_id == mine or (not lost and not wounded):
                continue
            what = []
            if lost:
                what.append(", ".join(lost))
            if wounded:
                what.append("a health level")
            parts.append(f"{name(who)} loses {' and '.join(what)}.")
        return " ".join([head, *parts])

    @property
    def viewer_id(self) -> int | None:
        """The id of the character whose phone this is (None on a dashboard)."""
        if self.side == Side.CHALLENGER:
            return self.state.challenger.character_id
        if self.side == Side.DEFENDER and self.state.defender is not None:
            return self.state.defender.character_id
        return None


def bdi(text: str) -> str:
    """``text`` escaped inside ``<bdi>``: a user-supplied name or Trait isolated
    from the sentence around it (a right-to-left override stays inside)."""
    return format_html("<bdi>{}</bdi>", text)


def _own_losses(traits: list[str], wounded: bool) -> str:
    """What a player lost, in the second person: "your Quick is lost", "your
    Quick and Tough are lost and you lose a health level", "" for nothing."""
    what = []
    if traits:
        names = traits[0] if len(traits) == 1 else f"{', '.join(traits[:-1])} and {traits[-1]}"
        what.append(f"your {names} {'is' if len(traits) == 1 else 'are'} lost")
    if wounded:
        what.append("you lose a health level")
    return " and ".join(what)


def challenge_view(challenge: Challenge, character: Character | None) -> ChallengeView:
    """Wrap ``challenge`` for ``character``'s phone (None: a narrator's dashboard)."""
    side = None
    if character is not None:
        if character.pk == challenge.challenger_id:
            side = Side.CHALLENGER
        elif character.pk == challenge.defender_id:
            side = Side.DEFENDER
    return ChallengeView(challenge, ChallengeState.from_dict(challenge.state), side)


# Seats: who may connect where ---------------------------------------------
@functools.cache
def _seat_sql() -> tuple[str, str]:
    """The two queries of :func:`player_seat`, written out: building them with the
    ORM (an ``Exists`` annotation) cost ~1 ms of CPU per reconnect, ten times
    running them. Column names come from the models."""
    character, session, presence = Character._meta, GameSession._meta, Presence._meta

    def col(meta, name: str) -> str:
        return connection.ops.quote_name(meta.get_field(name).column)

    def table(meta) -> str:
        return connection.ops.quote_name(meta.db_table)

    mine = (
        f"SELECT * FROM {table(character)} "
        f"WHERE {col(character, 'id')} = %s AND {col(character, 'player')} = %s"
    )
    # Chronicle.open_session(), and whether she is present there.
    open_session = (
        f"SELECT s.*, EXISTS (SELECT 1 FROM {table(presence)} p "
        f"WHERE p.{col(presence, 'session')} = s.{col(session, 'id')} "
        f"AND p.{col(presence, 'character')} = %s "
        f"AND p.{col(presence, 'status')} <> '{Presence.Status.ABSENT.value}') AS seated "
        f"FROM {table(session)} s "
        f"WHERE s.{col(session, 'chronicle')} = %s AND s.{col(session, 'ended_at')} IS NULL "
        f"ORDER BY s.{col(session, 'started_at')} DESC LIMIT 1"
    )
    return mine, open_session


def player_seat(user, character_id: int) -> tuple[Character, GameSession | None] | None:
    """``user``'s character and its chronicle's open session; marks her present
    (again, if a narrator had marked her absent). None if the character is not
    hers. Two queries when she is already present (a phone reconnecting), a
    few more on her arrival."""
    mine, open_session = _seat_sql()
    character = next(iter(Character.objects.raw(mine, [int(character_id), user.pk])), None)
    if character is None:
        return None
    session = next(
        iter(GameSession.objects.raw(open_session, [character.pk, character.chronicle_id])), None
    )
    if session is not None and not session.seated:
        presence, arrived = Presence.objects.get_or_create(
            session=session, character=character, defaults={"health": character.health}
        )
        # Marked absent by a narrator, she opens her phone: she is back.
        if not arrived and presence.status == Presence.Status.ABSENT:
            Presence.objects.filter(pk=presence.pk).update(status=Presence.Status.PRESENT)
            arrived = True
        if arrived:
            broadcast_on_commit(
                [narrators_group(session.pk)],
                CHARACTER_UPDATED,
                character_id=character.pk,
                session_id=session.pk,
            )
    return character, session


def narrated_session(user, session_id: int) -> GameSession | None:
    """The session if ``user`` narrates its chronicle, else None."""
    session = GameSession.objects.select_related("chronicle").filter(pk=session_id).first()
    if session is None or not session.chronicle.is_narrator(user):
        return None
    return session


def character_in_session(session: GameSession, character_id: int) -> Character:
    """A character of ``session``'s chronicle; ActionRefused if there is none."""
    from challenges.services import ActionRefused

    character = Character.objects.filter(pk=character_id, chronicle=session.chronicle_id).first()
    if character is None:
        raise ActionRefused("There is no such character in this chronicle.")
    return character


# Contexts ------------------------------------------------------------------
def play_context(
    character: Character, session: GameSession | None, *, with_opponents: bool = True
) -> dict:
    """Everything a phone shows: sheet, challenges (open ones, then the latest
    results), the characters she may challenge (see :func:`opponent_choice`;
    left out with ``with_opponents=False``: a websocket view never re-renders
    the "Challenge someone" form, so a half-filled one survives), and the
    time-out state."""
    sheet = character_sheet(character, session)
    challenges: list[ChallengeView] = []
    choice: dict = {"opponents": [], "opponent_search": False}
    if session is not None:
        session.refresh_from_db(fields=["time_out", "time_out_since", "ended_at"])
        open_, done = _on_phone(character, session)
        challenges = [_with_sheet(challenge_view(c, character), sheet) for c in [*open_, *done]]
        if with_opponents:
            choice = opponent_choice(session, character)
    return {
        "character": character,
        "session": session,
        "sheet": sheet,
        "challenges": challenges,
        **choice,
        "categories": list(Category),
        "bid_options": {c.category.value: _biddable(c.traits) for c in sheet.categories},
    }


OPPONENT_CHIPS_AT_MOST = 24  # more present than this: a search box instead of chips
OPPONENT_RESULTS = 20  # matches one search shows at most
OPPONENT_QUERY_MAX = 60  # characters of a search kept


def present_opponents(
    session: GameSession, character: Character, query: str = "", limit: int = OPPONENT_RESULTS
) -> list[Character]:
    """Characters present at ``session`` (not on a break, not absent) but
    ``character``, by name: those whose
    name contains ``query`` (any case; all when empty), at most ``limit``.
    One query, whatever the number present."""
    present = (
        Character.objects.filter(
            presences__session=session,
            presences__status=Presence.Status.PRESENT,
            chronicle=session.chronicle_id,
        )
        .exclude(pk=character.pk)
        .order_by("name", "pk")
        .only("name")
    )
    if query:
        present = present.filter(name__icontains=query)
    return list(present[:limit])


def opponent_choice(session: GameSession, character: Character) -> dict:
    """How the "Challenge someone" form offers opponents: ``{"opponents": [...],
    "opponent_search": False}`` (one chip each) while at most
    :data:`OPPONENT_CHIPS_AT_MOST` others are present, else
    ``{"opponents": [], "opponent_search": True}`` (a search box: a 360 px phone
    cannot scroll 1,500 chips, nor a worker render them on every view).
    One query of at most ``OPPONENT_CHIPS_AT_MOST + 1`` rows."""
    found = present_opponents(session, character, limit=OPPONENT_CHIPS_AT_MOST + 1)
    if len(found) > OPPONENT_CHIPS_AT_MOST:
        return {"opponents": [], "opponent_search": True}
    return {"opponents": found, "opponent_search": False}


def _with_sheet(view: ChallengeView, sheet: Sheet) -> ChallengeView:
    """Give a phone's challenge her Trait count and what she may bid now."""
    if view.state.category is not None:
        view.held = sheet.held(view.state.category)
        if view.can_bid:
            view.bid_choices = _biddable(
                [t for t in sheet.traits if t.category == view.state.category]
            )
    return view


def _on_phone(character: Character, session: GameSession):
    """The two querysets of what ``character``'s phone lists in ``session``: her
    open challenges (oldest first), then her latest :data:`RECENT_RESOLVED`
    results (newest first)."""
    mine = Challenge.objects.filter(session=session).filter(
        Q(challenger_id=character.pk) | Q(defender_id=character.pk)
    )
    return (
        mine.exclude(stage=Stage.RESOLVED).order_by("created_at"),
        mine.filter(stage=Stage.RESOLVED).order_by("-resolved_at")[:RECENT_RESOLVED],
    )


def phone_cards_shown(
    character: Character, session: GameSession
) -> tuple[dict[int, int], list[int]]:
    """What :func:`play_context` puts on ``character``'s phone, as ids only:
    ``({challenge id: version}, [ids of the results shown, newest first])``.
    Two small queries, nothing rendered."""
    open_, done = _on_phone(character, session)
    shown = dict(open_.values_list("pk", "version"))
    results = list(done.values_list("pk", "version"))
    shown.update(results)
    return shown, [pk for pk, _ in results]


def phone_challenge(
    character: Character,
    session: GameSession,
    challenge_id: int,
    sheet: Sheet,
    version: int | None = None,
) -> ChallengeView | None:
    """``character``'s challenge ``challenge_id`` of ``session`` (open or
    resolved) as her phone shows it, her Trait count and bid choices taken from
    ``sheet`` (her sheet tonight); None if it is not hers or not this
    session's. At most one query: none when this process has already read
    ``version`` or a later one (see :class:`CommittedRows`)."""
    challenge = committed_rows.get(challenge_id, version)
    if (
        challenge is None
        or challenge.session_id != session.pk
        or character.pk not in (challenge.challenger_id, challenge.defender_id)
    ):
        return None
    return _with_sheet(challenge_view(challenge, character), sheet)


def _biddable(lines: list[TraitLine]) -> list[TraitLine]:
    """The Traits she may bid now: copies held and not at risk in another
    challenge (``TraitLine.free``)."""
    return [line for line in lines if line.free > 0]


@dataclass(frozen=True)
class RosterRow:
    """One present character on the dashboard; ``player_name`` is "" when her
    player has none or it repeats the character's name (any case or spacing)."""

    character: Character
    sheet: Sheet
    player_name: str


def _player_name(character: Character) -> str:
    if character.player is None:
        return ""
    name = character.player.get_full_name() or character.player.get_username()
    return "" if _plain_name(name) == _plain_name(character.name) else name


def _plain_name(name: str) -> str:
    """``name`` compared loosely: any case, no spaces ("Guest 7" is "guest7")."""
    return "".join(name.split()).casefold()


def _roster(session: GameSession, characters: list[Character]) -> list[RosterRow]:
    """Roster rows of ``characters``; their sheets in five queries in all."""
    sheets = character_sheets(characters, session)
    return [
        RosterRow(character=c, sheet=sheets[c.pk], player_name=_player_name(c)) for c in characters
    ]


def dashboard_place(row: ChallengeView) -> tuple[int, float, int]:
    """Where ``row`` goes on a dashboard: rows sort by this key, ascending.
    Open challenges first, the longest waiting (oldest ``stage_since``, epoch
    seconds) on top; then results, the newest first. Ties: the newer id first."""
    if row.is_resolved:
        return (1, -row.stage_since, -row.pk)
    return (0, row.stage_since, -row.pk)


def dashboard_move(
    places: dict[int, tuple], challenge_id: int, place: tuple, limit: int | None = None
) -> tuple[list[int], str]:
    """Put ``challenge_id`` at ``place`` (:func:`dashboard_place`) among the
    rows a dashboard shows, ``places`` (``{id: place}``, updated), at most
    ``limit`` (default :data:`DASHBOARD_LIMIT`: the last results go first).
    Returns ``(ids, swap)``: the rows to take off the screen first (the row
    itself if it was on it), then the htmx out-of-band swap that inserts it,
    before the first row of its section that sorts after it
    (``"beforebegin:#challenge-ID"``) or at the end of its section
    (``"beforeend:#open-challenges"``, ``"beforeend:#recent-results"``);
    ``""`` when it does not fit."""
    limit = DASHBOARD_LIMIT if limit is None else limit
    remove = [challenge_id] if places.pop(challenge_id, None) is not None else []
    places[challenge_id] = place
    while len(places) > limit:
        gone = max(places, key=places.__getitem__)
        del places[gone]
        if gone != challenge_id:
            remove.append(gone)
    if challenge_id not in places:
        return remove, ""
    after = [(p, pk) for pk, p in places.items() if p[0] == place[0] and p > place]
    if after:
        return remove, f"beforebegin:#challenge-{min(after)[1]}"
    return remove, "beforeend:#recent-results" if place[0] else "beforeend:#open-challenges"


def dashboard_challenges(session: GameSession) -> QuerySet[Challenge]:
    """The challenges a dashboard lists: every open one (the longest waiting
    first), then the latest results, :data:`DASHBOARD_LIMIT` in all. The same
    selection as ``heartbeat.dashboard_parts``."""
    resolved = Q(stage=Stage.RESOLVED)
    return (
        Challenge.objects.filter(session=session)
        .annotate(
            done=Case(When(resolved, then=Value(1)), default=Value(0)),
            waiting_since=Case(
                When(resolved, then=Value(None)),
                default=F("stage_since"),
                output_field=DateTimeField(),
            ),
        )
        .order_by("done", "waiting_since", "-stage_since", "-id")[:DASHBOARD_LIMIT]
    )


def _void_reasons(session: GameSession, views: list[ChallengeView]) -> None:
    """Fill in ``void_reason`` of the voided ``views`` from the session's
    "voided" Events: one query, none when nothing is voided."""
    voided = {v.pk: v for v in views if v.state.outcome == Outcome.VOID}
    if not voided:
        return
    events = Event.objects.filter(session=session, kind="voided", challenge_id__in=list(voided))
    for challenge_id, data in events.values_list("challenge_id", "data"):
        voided[challenge_id].void_reason = str((data or {}).get("reason", ""))


def dashboard_context(session: GameSession) -> dict:
    """The narrator's dashboard: the challenges of :func:`dashboard_challenges`
    as ``open_rows`` (longest waiting first) and ``result_rows`` (newest first),
    ``rows`` both in that order; the roster of present characters with Traits
    left and health. A fixed number of queries, whatever the numbers."""
    session.refresh_from_db(fields=["time_out", "time_out_since", "ended_at"])
    challenges = list(dashboard_challenges(session).select_related("challenger", "defender"))
    rows = sorted((challenge_view(c, None) for c in challenges), key=dashboard_place)
    _void_reasons(session, rows)
    present = Character.objects.filter(
        presences__session=session, presences__status__in=ON_ROSTER
    ).select_related("player")
    return {
        "session": session,
        "challenges": challenges,
        "rows": rows,
        "open_rows": [r for r in rows if not r.is_resolved],
        "result_rows": [r for r in rows if r.is_resolved],
        "fold_after": RESULT_COLLAPSE_SECONDS,
        "roster": _roster(session, list(present.order_by("name"))),
        "categories": list(Category),
    }


def dashboard_row_context(
    session: GameSession, challenge_id: int, version: int | None = None
) -> dict | None:
    """One dashboard row, or None if it is not this session's. At most one
    query (none when this process has read ``version`` or a later one), one
    more for a voided challenge's reason."""
    challenge = committed_rows.get(challenge_id, version)
    if challenge is None or challenge.session_id != session.pk:
        return None
    row = challenge_view(challenge, None)
    _void_reasons(session, [row])
    return {"row": row, "session": session}


def roster_row_context(session: GameSession, character_id: int) -> dict | None:
    """One roster row, or None if the character is not present."""
    character = (
        Character.objects.filter(
            presences__session=session, presences__status__in=ON_ROSTER, pk=character_id
        )
        .select_related("player")
        .first()
    )
    if character is None:
        return None
    return {"entry": _roster(session, [character])[0], "session": session}


@dataclass(frozen=True)
class LostCopy:
    """One copy of a Trait lost tonight and the challenge that cost it."""

    trait: str
    challenge_id: int
    opponent: str


def character_panel_context(session: GameSession, character_id: int) -> dict | None:
    """A character's sheet tonight for a narrator's dashboard, or None if she is
    not of ``session``'s chronicle: ``{"character", "player_name", "sheet"
    (Traits left and lost, health), "lost" (a :class:`LostCopy` per copy, in
    the order lost), "rows" (her challenges tonight as the dashboard shows
    them, the newest first), "present"}``. Nine queries."""
    character = (
        Character.objects.filter(pk=character_id, chronicle=session.chronicle_id)
        .select_related("player")
        .first()
    )
    if character is None:
        return None
    sheet = character_sheets([character], session)[character.pk]
    lost = []
    for trait, challenge_id, challenger_id, challenger, defender in (
        TraitLoss.objects.filter(session=session, character=character)
        .order_by("id")
        .values_list(
            "trait__name",
            "challenge_id",
            "challenge__challenger_id",
            "challenge__challenger__name",
            "challenge__defender__name",
        )
    ):
        opponent = defender if challenger_id == character.pk else challenger
        lost.append(LostCopy(trait, challenge_id, opponent or "the narrator"))
    mine = (
        Challenge.objects.filter(session=session)
        .filter(Q(challenger_id=character.pk) | Q(defender_id=character.pk))
        .order_by("-created_at", "-id")
    )
    rows = [challenge_view(c, None) for c in mine]
    return {
        "character": character,
        "player_name": _player_name(character),
        "sheet": sheet,
        "lost": lost,
        "rows": rows,
        "present": Presence.objects.filter(
            session=session, character=character, status__in=ON_ROSTER
        ).exists(),
    }


class SharedRenders:
    """Renderings that every connection of this process would make identically,
    kept by a key built from a broadcast's ids and version (a bounded LRU).

    Twelve dashboards receiving one ``challenge.updated`` then cost one query
    and one rendering, not twelve. A key of None means "render, do not keep"
    (an event without a version). A version's rendering never goes stale: it is
    made after that version was committed, so it shows it or a later one.
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.items: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, key: tuple | None, render: Callable[[], Any]) -> Any:
        """``render()``'s result, kept under ``key`` (rendered anew if None)."""
        if key is None:
            return render()
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = self.items[key] = render()
        if len(self.items) > self.size:
            self.items.popitem(last=False)
        return value


shared_renders = SharedRenders()


# Pages ---------------------------------------------------------------------
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Where a login lands: straight to the only character, or to the narrator's
    entry (``narrate_index``) for a narrator of one chronicle who plays no
    character; else a list."""
    characters = list(
        Character.objects.filter(player=request.user).select_related("chronicle").order_by("name")
    )
    chronicles = [
        c for c in Chronicle.objects.prefetch_related("narrators") if c.is_narrator(request.user)
    ]
    if len(characters) == 1 and not chronicles:
        return redirect("play", character_id=characters[0].pk)
    if len(chronicles) == 1 and not characters:
        return redirect("narrate_index")
    sessions = [(c, c.open_session()) for c in chronicles]
    return render(request, "challenges/home.html", {"characters": characters, "sessions": sessions})


@login_required
def play(request: HttpRequest, character_id: int) -> HttpResponse:
    """A player's phone screen for one of her characters."""
    seat = player_seat(request.user, character_id)
    if seat is None:
        raise Http404("No such character of yours.")
    character, session = seat
    return render(request, "challenges/play.html", play_context(character, session))


@login_required
def narrate_index(request: HttpRequest) -> HttpResponse:
    """The narrator's entry: her chronicle's open session, else its latest (ended,
    with "Start session N" on it), or a list if she narrates several chronicles
    with a session. A chronicle with no session at all gets a page with "Start
    session 1"; that button POSTs ``chronicle`` here, which starts it
    (``services.session_start``) and goes to its dashboard."""
    chronicles = [
        c for c in Chronicle.objects.prefetch_related("narrators") if c.is_narrator(request.user)
    ]
    if request.method == "POST":
        return _start_first_session(request, chronicles)
    if not chronicles:
        raise PermissionDenied("You narrate no chronicle.")
    sessions = [(c, c.open_session() or c.latest_session()) for c in chronicles]
    with_session = [(c, s) for c, s in sessions if s is not None]
    if len(with_session) == 1:
        return redirect("narrate", session_id=with_session[0][1].pk)
    if not with_session and len(chronicles) == 1:
        return render(request, "challenges/narrate_start.html", {"chronicle": chronicles[0]})
    return render(request, "challenges/home.html", {"characters": [], "sessions": sessions})


def _start_first_session(request: HttpRequest, chronicles: list[Chronicle]) -> HttpResponse:
    from challenges.services import ActionRefused, session_start

    chronicle = next((c for c in chronicles if str(c.pk) == request.POST.get("chronicle")), None)
    if chronicle is None:
        raise PermissionDenied("You do not narrate this chronicle.")
    try:
        session = session_start(chronicle=chronicle, user=request.user, number=1)
    except ActionRefused:  # started meanwhile (another tablet): go to it
        session = chronicle.open_session() or chronicle.latest_session()
    return redirect("narrate", session_id=session.pk)


def dashboard_url(session_id: int) -> str:
    """The address of a session's dashboard."""
    return reverse("narrate", args=[session_id])


@login_required
def narrate(request: HttpRequest, session_id: int) -> HttpResponse:
    """The narrator's live dashboard of one session."""
    session = get_object_or_404(GameSession.objects.select_related("chronicle"), pk=session_id)
    if not session.chronicle.is_narrator(request.user):
        raise PermissionDenied("You do not narrate this chronicle.")
    return render(request, "challenges/narrate.html", dashboard_context(session))


@login_required
def narrate_character(request: HttpRequest, session_id: int, character_id: int) -> HttpResponse:
    """One character's sheet tonight on a narrator's dashboard, with "Static
    challenge" and "Simple test" for her: the panel alone for htmx (a tap on
    the roster), else the whole dashboard with the panel open. 403 unless the
    user narrates the chronicle, 404 if there is no such session or character."""
    session = get_object_or_404(GameSession.objects.select_related("chronicle"), pk=session_id)
    if not session.chronicle.is_narrator(request.user):
        raise PermissionDenied("You do not narrate this chronicle.")
    panel = character_panel_context(session, character_id)
    if panel is None:
        raise Http404("No such character in this chronicle.")
    if request.headers.get("HX-Request"):
        context = {"panel": panel, "session": session, "categories": list(Category)}
        return render(request, "challenges/_character_panel.html", context)
    return render(
        request, "challenges/narrate.html", {**dashboard_context(session), "panel": panel}
    )


@login_required
def opponents(request: HttpRequest, character_id: int) -> HttpResponse:
    """The radio chips of present characters whose name contains ``?q=`` (the
    "Challenge someone" search box's results, at most :data:`OPPONENT_RESULTS`).
    404 unless the character is the user's; nothing is marked present here."""
    character = get_object_or_404(
        Character.objects.select_related("chronicle"), pk=character_id, player=request.user
    )
    session = character.chronicle.open_session()
    query = request.GET.get("q", "").strip()[:OPPONENT_QUERY_MAX]
    found: list[Character] = []
    if session is not None:
        found = present_opponents(session, character, query, limit=OPPONENT_RESULTS + 1)
    return render(
        request,
        "challenges/_opponent_chips.html",
        {
            "opponents": found[:OPPONENT_RESULTS],
            "more": len(found) > OPPONENT_RESULTS,
            "query": query,
            "character": character,
        },
    )
