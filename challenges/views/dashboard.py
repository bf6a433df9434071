"""The narrator's dashboard's view-models: its challenges as rows and where
each goes, the roster of present characters, and one character's panel.
Templates: ``challenges/narrate.html`` and ``narrate_live.html`` (with
``_challenge_list.html``, ``_dashboard_row.html``, ``_roster_row.html``,
``_narrator_controls.html``, ``_session_controls.html``, ``_time_out.html``),
``_dashboard_row_oob.html``, ``_roster_row_oob.html`` and
``_character_panel.html`` (with ``_panel_test_form.html`` and
``_presence_controls.html``)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from challenges.models import (
    Challenge,
    Event,
    TraitLoss,
    her_challenges,
)
from challenges.rows import committed_rows
from challenges.rules import Category, HealthLevel, Outcome, RulesError, get_ruleset
from challenges.services.clocks import (
    battle_scar_permanent,
    clock_view,
    clock_views,
    injury_choices,
)
from challenges.views.combat import TIES_WORDS, combat_rounds, combat_views, panel_combats
from challenges.views.mob import mob_views
from challenges.views.shared import RESULT_COLLAPSE_SECONDS, ChallengeView, challenge_view
from challenges.views.story_combat import DAMAGE_TYPES, dice_pools, fight_views
from characters.models import Character, GameSession, Presence
from characters.services import RosterSheet, Sheet, character_sheets, roster_sheets

#: Presences a dashboard lists: absent characters leave the roster.
ON_ROSTER = (Presence.Status.PRESENT, Presence.Status.BREAK)


class Window(NamedTuple):
    """How many challenges of each section a dashboard lists live: those a
    narrator is called to (the oldest call first), the open ones (the
    longest waiting first), the results (the newest first)."""

    called: int
    open: int
    results: int

    def cap(self, section: int) -> int:
        """The rows section ``section`` (``dashboard_place()[0]``: -1, 0, 1) holds at most."""
        return (self.called, self.open, self.results)[section + 1]


#: What a dashboard lists live, section by section; a tablet shows fewer at
#: once. Every other challenge is on the evening's history page (filtered by
#: character and state). A crowd's first view must fit one frame any server
#: sends (64 KiB): 150 roster rows take half of it. At 300 rows in all, a
#: crowd's first view was 368 KB (150 characters, 600 challenges).
DASHBOARD_LIMIT = Window(called=10, open=15, results=8)


@dataclass(frozen=True)
class RosterRow:
    """One present character on the dashboard; ``player_name`` is "" when her
    player has none or it repeats the character's name (any case or spacing)."""

    character: Character
    sheet: Sheet | RosterSheet
    player_name: str
    # s11 clocks: services.clocks.clock_view (None: no presence)
    clock: dict | None = None


def _player_name(character: Character) -> str:
    if character.player is None:
        return ""
    name = character.player.get_full_name() or character.player.get_username()
    return "" if _plain_name(name) == _plain_name(character.name) else name


def _plain_name(name: str) -> str:
    """``name`` compared loosely: any case, no spaces ("Guest 7" is "guest7")."""
    return "".join(name.split()).casefold()


def _roster(session: GameSession, characters: list[Character]) -> list[RosterRow]:
    """Roster rows of ``characters``; their sheets in three queries in all
    (``characters.services.roster_sheets``; five for test or dice pools),
    the health clocks of the wounded among them in one more."""
    sheets = roster_sheets(characters, session)
    # Only a wounded character can have a running clock: a roster of healthy
    # characters (most of an evening) costs no query and no clock for it.
    clocks = clock_views(
        session, {pk: s for pk, s in sheets.items() if s.health != HealthLevel.HEALTHY}
    )
    return [
        RosterRow(
            character=c, sheet=sheets[c.pk], player_name=_player_name(c), clock=clocks.get(c.pk)
        )
        for c in characters
    ]


def dashboard_place(row: ChallengeView) -> tuple[int, float, int]:
    """Where ``row`` goes on a dashboard: rows sort by this key, ascending.
    Challenges a side called a narrator to first, the oldest call on top
    (open or resolved); then open challenges, the longest waiting (oldest
    ``stage_since``, epoch seconds) on top; then results, the newest first.
    Ties: the newer id first."""
    if row.called:
        return (-1, row.called_at, -row.pk)
    if row.is_resolved:
        return (1, -row.stage_since, -row.pk)
    return (0, row.stage_since, -row.pk)


class Placement:
    """The rows a dashboard shows and where (``{id: dashboard_place()}``, as
    :attr:`places`), kept in order too (:attr:`order`), so that :meth:`move`
    costs O(log n) plus a list insertion instead of two passes over every row
    (300 rows on a dashboard, 12 dashboards, a few moves per challenge:
    issue 14)."""

    def __init__(self, places: dict[int, tuple] | None = None) -> None:
        self.places: dict[int, tuple] = dict(places or {})
        self.order: list[tuple[tuple, int]] = sorted((p, pk) for pk, p in self.places.items())

    def move(
        self, challenge_id: int, place: tuple, limit: int | Window | None = None
    ) -> tuple[list[int], str]:
        """Put ``challenge_id`` at ``place`` (:func:`dashboard_place`) among
        these rows (updated), at most ``limit`` (default
        :data:`DASHBOARD_LIMIT`): a :class:`Window`, rows of each section (the
        last of the row's section goes), or a number of rows in all (the last
        rows go). Returns ``(ids, swap)``: the rows to take off the screen
        first (the row itself if it was on it), then the htmx out-of-band swap
        that inserts it, before the first row of its section that sorts after
        it (``"beforebegin:#challenge-ID"``) or at the end of its section
        (``"beforeend:#called-challenges"``, ``"beforeend:#open-challenges"``,
        ``"beforeend:#recent-results"``); ``""`` when it does not fit."""
        limit = DASHBOARD_LIMIT if limit is None else limit
        remove = []
        old = self.places.pop(challenge_id, None)
        if old is not None:
            del self.order[bisect.bisect_left(self.order, (old, challenge_id))]
            remove.append(challenge_id)
        self.places[challenge_id] = place
        bisect.insort(self.order, (place, challenge_id))
        for gone in self._beyond(limit, place[0]):
            del self.places[gone]
            if gone != challenge_id:
                remove.append(gone)
        if challenge_id not in self.places:
            return remove, ""
        following = bisect.bisect_right(self.order, (place, challenge_id))
        if following < len(self.order) and self.order[following][0][0] == place[0]:
            return remove, f"beforebegin:#challenge-{self.order[following][1]}"
        return remove, f"beforeend:#{_SECTIONS[place[0]]}"

    def _beyond(self, limit: int | Window, section: int) -> list[int]:
        """Take off :attr:`order` the rows past ``limit`` (in all, or in
        ``section`` for a :class:`Window`) and return their ids."""
        gone = []
        if isinstance(limit, Window):
            end = bisect.bisect_left(self.order, ((section + 1,),))
            start = bisect.bisect_left(self.order, ((section,),))
            while end - start > limit.cap(section):
                end -= 1
                gone.append(self.order.pop(end)[1])
            return gone
        while len(self.order) > limit:
            gone.append(self.order.pop()[1])
        return gone


#: The dashboard's sections by the first item of :func:`dashboard_place`.
_SECTIONS = {-1: "called-challenges", 0: "open-challenges", 1: "recent-results"}


def dashboard_challenges(session: GameSession) -> QuerySet[Challenge]:
    """The challenges a dashboard lists: a window of each section
    (:data:`DASHBOARD_LIMIT`), the same selection as
    ``heartbeat.dashboard_parts`` (a subquery)."""
    from challenges import heartbeat

    listed = RawSQL(*heartbeat.listed_challenges(session.pk, DASHBOARD_LIMIT))
    return Challenge.objects.filter(pk__in=listed)


def _void_reasons(session: GameSession, views: list[ChallengeView]) -> None:
    """Fill in ``void_reason`` of the voided ``views`` from the session's
    "voided" Events: one query, none when nothing is voided."""
    voided = {v.pk: v for v in views if not v.pooled and v.state.outcome == Outcome.VOID}
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
    session.refresh_from_db(fields=["time_out", "time_out_since", "time_out_seconds", "ended_at"])
    challenges = list(dashboard_challenges(session).select_related("challenger", "defender"))
    rows = sorted((challenge_view(c, None) for c in challenges), key=dashboard_place)
    _void_reasons(session, rows)
    present = Character.objects.filter(
        presences__session=session, presences__status__in=ON_ROSTER
    ).select_related("player")
    roster = _roster(session, list(present.order_by("name")))
    return {
        "session": session,
        "challenges": challenges,
        "rows": rows,
        "called_rows": [r for r in rows if r.called],
        "open_rows": [r for r in rows if not r.is_resolved and not r.called],
        "result_rows": [r for r in rows if r.is_resolved and not r.called],
        "fold_after": RESULT_COLLAPSE_SECONDS,
        "window": DASHBOARD_LIMIT,
        "roster": roster,
        "categories": list(Category),
        "difficult_tests": difficult_tests(session),
        "met_challenges": met_challenges(session),
        "mobs": mob_views(session, None),  # issue 11: mob scenes
        **dashboard_combats(session, [(e.character.pk, e.character.name) for e in roster]),
        **_dashboard_rolls(session),  # issue 13: storytelling rolls
        **dashboard_fights(session, [(e.character.pk, e.character.name) for e in roster]),
    }


def _dashboard_rolls(session: GameSession) -> dict:
    """Issue 13: ``dice_pools`` (the chronicle rolls dice pools) and then
    :func:`~challenges.views.rolls.dashboard_rolls`; no query without."""
    if not session.chronicle.has_dice_pools:
        return {"dice_pools": False, "rolls": []}
    from challenges.views.rolls import dashboard_rolls

    return {"dice_pools": True, **dashboard_rolls(session)}


def _present(session: GameSession) -> list[tuple[int, str]]:
    """(id, name) of the characters on the roster, by name (one query)."""
    return list(
        Character.objects.filter(presences__session=session, presences__status__in=ON_ROSTER)
        .order_by("name")
        .values_list("pk", "name")
    )


def dashboard_combats(session: GameSession, present=None) -> dict:
    """Issue 12 (bns combat rounds): ``combat_rounds`` (the session's ruleset
    runs combats in rounds), and then ``combats``
    (:func:`~challenges.views.combat.combat_views` for a narrator; ``present``,
    ``(id, name)`` of the characters on the roster, gives the add options:
    None reads them, one more query) and ``ties_words``. One query with
    combat rounds, none without."""
    if not combat_rounds(session):
        return {"combat_rounds": False, "combats": []}
    if present is None:
        present = _present(session)
    return {
        "combat_rounds": True,
        "combats": combat_views(session, None, present=present),
        "ties_words": TIES_WORDS,
    }


def dashboard_fights(session: GameSession, present=None) -> dict:
    """Issue 13 (Storytelling fights): ``dice_pools`` (the chronicle rolls
    dice pools), and then ``fights``
    (:func:`~challenges.views.story_combat.fight_views` for a narrator;
    ``present`` as :func:`dashboard_combats`'s) and the choices of the
    narrator's forms. No query without dice pools."""
    if not dice_pools(session):
        return {"dice_pools": False, "fights": []}
    if present is None:
        present = _present(session)
    return {
        "dice_pools": True,
        "fights": fight_views(session, None, present=present),
        "fight_present": present,
        "damage_types": DAMAGE_TYPES,
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
    return roster_rows_context(session, [character_id]).get(character_id)


def roster_rows_context(session: GameSession, character_ids) -> dict[int, dict]:
    """The roster rows of ``character_ids`` (an iterable of ids) as
    ``{id: {"entry": RosterRow, "session": session}}``, for those on the
    roster only. A fixed number of queries however many (issue 14: a
    dashboard feed's tick reads all its changed characters at once): one for
    the characters, those of their sheets, one for the clocks of the wounded."""
    ids = list(character_ids)
    if not ids:
        return {}
    characters = Character.objects.filter(
        presences__session=session, presences__status__in=ON_ROSTER, pk__in=ids
    ).select_related("player")
    return {
        entry.character.pk: {"entry": entry, "session": session}
        for entry in _roster(session, list(characters))
    }


@dataclass(frozen=True)
class LostCopy:
    """One copy of a Trait lost tonight and the challenge that cost it."""

    trait: str
    challenge_id: int | None  # None: no challenge (a health clock)
    opponent: str


def difficult_tests(session: GameSession) -> bool:
    """The session's ruleset has difficult tests and simple tests won by their
    initiator (``ukm``, seeds/004 "Simple Test", "Difficult Test"): the simple
    test forms then ask who initiates and whether it is difficult."""
    try:
        return get_ruleset(session.chronicle.ruleset).options.difficult_tests
    except RulesError:
        return False


def met_challenges(session: GameSession) -> bool:
    """The session's ruleset plays MET challenges (``Ruleset.met_challenges``):
    the dashboard then offers mob scenes, static challenges, simple tests and
    prepared statics; a ``bns`` session (test pools, seeds/002) does not."""
    try:
        return get_ruleset(session.chronicle.ruleset).met_challenges
    except RulesError:
        return True


def character_panel_context(session: GameSession, character_id: int) -> dict | None:
    """A character's sheet tonight for a narrator's dashboard, or None if she is
    not of ``session``'s chronicle: ``{"character", "player_name", "sheet"
    (Traits left and lost, health), "lost" (a :class:`LostCopy` per copy, in
    the order lost), "rows" (her challenges tonight as the dashboard shows
    them, the newest first), "combats" (the live combats she is in,
    :func:`~challenges.views.combat.panel_combats`), "present",
    "track_characters" and "damage_types" (issue 13: the health-track ruling
    form, ``_track_ruling_form.html``, offered for her alone)}``. Nine
    queries (ten for a chronicle with combat rounds)."""
    character = (
        Character.objects.filter(pk=character_id, chronicle=session.chronicle_id)
        .select_related("player")
        .first()
    )
    if character is None:
        return None
    sheet = character_sheets([character], session)[character.pk]
    # One query for her presence: whether she is here, and her health clock.
    presence = Presence.objects.filter(session=session, character=character).first()
    if presence is not None:
        presence.character = character
    physical = sheet.held(Category.PHYSICAL)
    clock = clock_view(presence, session, physical) if presence is not None else None
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
    mine = Challenge.objects.filter(pk__in=her_challenges(session.pk, character.pk)).order_by(
        "-created_at", "-id"
    )
    rows = [challenge_view(c, None) for c in mine]
    return {
        "character": character,
        "player_name": _player_name(character),
        "sheet": sheet,
        "clock": clock,
        "injuries": injury_choices() if battle_scar_permanent(character) else [],
        "lost": lost,
        "rows": rows,
        "present": presence is not None and presence.status in ON_ROSTER,
        "difficult_tests": difficult_tests(session),
        "mobs": mob_views(session, None),  # issue 11: mob scenes
        "combats": panel_combats(session, character.pk),  # issue 12: bns combat rounds
        # Issue 13: her health track ruled from the panel (_track_ruling_form.html).
        "track_characters": [(character.pk, character.name)],
        "damage_types": DAMAGE_TYPES,
    }
