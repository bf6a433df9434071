"""The phone's view-models: everything a player's screen shows (her sheet,
her challenges as cards, the opponents she may challenge) and one changed
card. Templates: ``challenges/play.html`` and ``play_live.html`` (with
``_phone_header.html``, ``_sheet.html``, ``_start.html``, ``_start_bids.html``,
``_opponent_chips.html``, ``_live.html``, ``_card.html``, ``_health.html``,
``_time_out.html``, ``_retest_button.html``, ``_waiting_bar.html``) and ``_card_frame.html``; her
sheet and bid buttons sent with a card (:func:`sheet_oob`)."""

from __future__ import annotations

import functools

from django.db import connection
from django.template.loader import render_to_string

from challenges.models import Challenge, her_challenges, her_challenges_params, her_challenges_sql
from challenges.rows import committed_rows
from challenges.rules import (
    Category,
    Combatant,
    HealthLevel,
    RulesError,
    Stage,
    bids_required,
    bns,
    get_ruleset,
)
from challenges.rules.judge import stamina_only
from challenges.services.clocks import clock_views
from challenges.views.bns import bns_attacks, bns_start_options
from challenges.views.combat import combat_views
from challenges.views.mob import phone_mobs
from challenges.views.seats import sql_column, sql_table
from challenges.views.shared import ChallengeView, challenge_view, shared_renders
from challenges.views.story_combat import ATTACK_KINDS, DAMAGE_TYPES, phone_fights
from challenges.views.waiting import Waiting, waiting_on_her
from characters.models import Character, GameSession, Presence
from characters.services import Sheet, TraitLine, character_sheet, plays_met_challenges

RECENT_RESOLVED = 5  # resolved challenges kept on a phone


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
        session.refresh_from_db(
            fields=["time_out", "time_out_since", "time_out_seconds", "ended_at"]
        )
        open_, done = _on_phone(character, session)
        challenges = [_with_sheet(challenge_view(c, character), sheet) for c in [*open_, *done]]
        if with_opponents:
            choice = opponent_choice(session, character)
    # Mob scenes are MET challenges: a bns or storytelling phone has none to show.
    met = plays_met_challenges(character, session)
    combats = phone_combats(character, session, sheet)  # issue 12: combat rounds
    options = start_options(sheet)
    if "bns_maneuvers" in options:
        options["bns_maneuvers"] = bns_maneuver_choices(options["bns_maneuvers"], combats)
    context = {
        "character": character,
        "session": session,
        "sheet": sheet,
        "clock": health_clock(character, session, sheet),
        "challenges": challenges,
        **choice,
        **options,
        "categories": list(Category),
        "bid_options": {c.category.value: _biddable(c.traits) for c in sheet.categories},
        "met_challenges": met,
        "mobs": phone_mobs(character, session, sheet) if met else [],  # issue 11: mob scenes
        "combats": combats,
        **_story_rolls(character, session, sheet),  # issue 13: storytelling rolls
        **phone_fights(character, session, sheet),  # issue 13: Storytelling fights
        "attack_kinds": ATTACK_KINDS,
        "damage_types": DAMAGE_TYPES,
    }
    context["waits"] = _waits(context)
    return context


def _waits(context: dict) -> list[Waiting]:
    """What waits on her among the things of a phone's ``context`` (:func:`play_context`)."""
    return waiting_on_her(
        challenges=context["challenges"],
        combats=context["combats"],
        fights=context["fights"],
        rolls=context["rolls"],
        mobs=context["mobs"],
    )


def phone_waits(character: Character, session: GameSession | None, sheet: Sheet) -> list[Waiting]:
    """What waits on her now (``challenges.views.waiting``), read afresh: for
    a phone resumed without a render, whose consumer does not know what its
    bar shows. Her open challenges (one query), and her combats, fights,
    rolls or mob scenes as her ruleset has them (a few queries each)."""
    if session is None:
        return []
    opened = [challenge_view(c, character) for c in _on_phone(character, session)[0]]
    met = plays_met_challenges(character, session)
    rolls = _story_rolls(character, session, sheet)["rolls"]
    return waiting_on_her(
        challenges=opened,
        combats=phone_combats(character, session, sheet),
        fights=phone_fights(character, session, sheet)["fights"],
        rolls=rolls,
        mobs=phone_mobs(character, session, sheet) if met else [],
    )


def _story_rolls(character: Character, session: GameSession | None, sheet: Sheet) -> dict:
    """Issue 13: her rolls tonight (``rolls``; ``roll_window``: the rows
    they were drawn from, ``rolls.phone_window``), who she may contest
    (``roll_opponents``: present characters but her) and the pool choices,
    for a sheet of dots only (none else, no query)."""
    if sheet.story is None:
        return {"rolls": [], "roll_window": None}
    from challenges.views.dashboard import ON_ROSTER
    from challenges.views.rolls import phone_rolls, phone_window, roll_choices

    others = []
    if session is not None:
        others = list(
            Character.objects.filter(presences__session=session, presences__status__in=ON_ROSTER)
            .exclude(pk=character.pk)
            .order_by("name")
            .values_list("pk", "name")
        )
    window = phone_window(character, session) if session is not None else []
    return {
        "rolls": phone_rolls(character, session, window),
        "roll_window": window,
        "roll_opponents": others,
        **roll_choices(),
    }


def phone_combats(character: Character, session: GameSession | None, sheet: Sheet) -> list:
    """Issue 12: her ``bns`` combats (:func:`~challenges.views.combat.combat_views`),
    read only when her sheet rates Attributes (a chronicle with combat rounds):
    no query for a MET phone, one for a ``bns`` phone."""
    if session is None or sheet.attributes is None:
        return []
    combats = combat_views(session, character.pk)
    for combat in combats:
        if combat.escape_from:  # grappled: her pools to escape (seeds/002 Grapple)
            combat.escape_attacks = bns_attacks(sheet.attributes, character, bns.ESCAPE_ATTACKS)
    return combats


def focus_spent(combats: list) -> bool:
    """Issue 12: her Physical focus's free maneuver is spent in one of her
    live ``combats`` (``CombatView.focus_used``; seeds/002 "Physical
    Focuses in Combat": once per combat)."""
    return any(c.focus_used for c in combats)


def bns_maneuver_choices(offered: list[tuple[str, str]], combats: list) -> list[tuple[str, str]]:
    """The "Challenge someone" form's maneuvers (``bns_start_options``'s
    ``bns_maneuvers``, (value, label)) as her ``combats`` leave them: those
    paid with her focus ("disarm:focus") go once it is spent (:func:`focus_spent`),
    so she is never offered a move the server refuses. No query."""
    if not focus_spent(combats):
        return offered
    return [(value, label) for value, label in offered if not value.endswith(":focus")]


def health_clock(character: Character, session: GameSession | None, sheet: Sheet) -> dict | None:
    """Her health clock for the phone (``services.clocks.clock_view``), or None
    when she is Healthy: no clock runs then (every clock needs a wound), so a
    healthy phone's view costs no query for it."""
    if sheet.health == HealthLevel.HEALTHY:
        return None
    return clock_views(session, {character.pk: sheet})[character.pk]


def start_options(sheet: Sheet) -> dict:
    """What the "Challenge someone" form offers beyond opponents and Traits,
    under her chronicle's rule options: ``bids_needed`` (2 when she must bid
    two Traits: ``met_classic`` Bruised or Wounded, seeds/000 "Health"),
    ``health_label`` ("Bruised"), ``surprise_allowed`` (``ukm``: the
    challenger may declare Surprise, seeds/004), ``power_asked`` (``ukm``: the
    power she uses, which a Willpower retest makes its defender immune to),
    ``weapons`` (hers, when the
    sheet lists any). No session: one bid, no Surprise. At most one query
    (her chronicle's ruleset); none for a seat read by ``player_seat``, whose
    session carries ``chronicle_ruleset``."""
    out = {
        "bids_needed": 1,
        "health_label": sheet.health.label,
        "surprise_allowed": False,
        "power_asked": False,
        "weapons": list(getattr(sheet, "weapons", None) or []),
    }
    if getattr(sheet, "story", None) is not None:
        # Issue 13: a dice-pool sheet (storytelling) bids nothing; its rolls come later.
        return out
    if getattr(sheet, "attributes", None) is not None:
        # Issue 12: a test-pool sheet's attacks and maneuvers (no Trait bids).
        out.update(bns_start_options(sheet.attributes, sheet.character))
        return out
    if sheet.session is None:
        return out
    # A seat read by player_seat carries its chronicle's ruleset: no query.
    name = getattr(sheet.session, "chronicle_ruleset", None) or sheet.session.chronicle.ruleset
    try:
        ruleset = get_ruleset(name)
    except RulesError:
        return out
    me = Combatant(sheet.character.pk, sheet.character.name, traits=(), health=sheet.health)
    out["bids_needed"] = bids_required(me, ruleset)
    out["surprise_allowed"] = ruleset.options.surprise
    out["power_asked"] = ruleset.options.willpower_retest
    return out


def sheet_oob(sheet: Sheet) -> str:
    """Her sheet and the "Challenge someone" bid buttons (``_sheet.html``,
    ``_start_bids.html``), out of band: sent with a card whose move changed
    her Traits at risk or held. The bid buttons show only which Traits she
    may bid (with their free copies when she must bid two), which a bid or a
    result seldom changes: they are rendered once per :func:`start_bids_key`
    in this process (``shared_renders``), a sheet of 16 Traits ~0.4 ms each
    time saved. At most one query (:func:`start_options`)."""
    options = start_options(sheet)
    context = {"sheet": sheet, "oob": True, **options}
    bids = shared_renders.get(
        start_bids_key(sheet, options),
        lambda: render_to_string("challenges/_start_bids.html", context),
    )
    # The newline ends the frame as the template this replaced did.
    return render_to_string("challenges/_sheet.html", context) + bids + "\n"


def start_bids_key(sheet: Sheet, options: dict) -> tuple:
    """Everything ``_start_bids.html`` (out of band) shows of ``sheet`` and
    its :func:`start_options`: the same key, the same bytes. A value that
    template reads must be in here."""
    two = options["bids_needed"] == 2
    return (
        "start_bids",
        sheet.trait_sheet,
        options["bids_needed"],
        (options["health_label"] or sheet.health.label) if two else "",
        tuple(
            (
                cat.label,
                cat.category.value,
                bool(cat.held),
                tuple((t.name, t.free if two else t.free > 0) for t in cat.traits),
            )
            for cat in sheet.categories
        ),
    )


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
    """Give a phone's challenge her Trait count and the Traits she may bid,
    add (owed for a Negative Trait) or risk in an overbid now. A challenge of
    test pools (issue 12) bids nothing: returned as it is."""
    if view.pooled:
        return view
    if view.state.category is not None:
        view.held = sheet.held(view.state.category)
        if view.needs_trait_choices:
            lines = [t for t in sheet.traits if t.category == view.state.category]
            if view.side is not None and stamina_only(view.state, view.side):
                # A surprised defender bids Stamina-based Physical Traits only (seeds/004).
                me = view.state.combatant(view.side)
                lines = [
                    t
                    for t in lines
                    if me is not None and any(h.stamina for h in me.holdings(t.name, t.category))
                ]
            view.bid_choices = _biddable(lines)
    return view


def _on_phone(character: Character, session: GameSession):
    """The two querysets of what ``character``'s phone lists in ``session``: her
    open challenges (oldest first), then her latest :data:`RECENT_RESOLVED`
    results (newest first). :func:`_cards_sql` writes them out for a
    reconnect: keep the two in step."""
    # Her challenges by their ids, a side at a time (her_challenges_sql, issue 14).
    mine = Challenge.objects.filter(pk__in=her_challenges(session.pk, character.pk))
    return (
        mine.exclude(stage=Stage.RESOLVED).order_by("created_at"),
        mine.filter(stage=Stage.RESOLVED).order_by("-resolved_at")[:RECENT_RESOLVED],
    )


@functools.cache
def _cards_sql() -> tuple[str, str]:
    """The two queries of :func:`_on_phone` as :func:`phone_cards_shown` runs
    them (ids and versions), written out as the ORM writes them, names from
    the model: py-spy found the ORM building them ~16% of a reconnect resumed
    to the Time out banner, more than running them (issue 14's reconnect
    storm). A change to :func:`_on_phone` must be made here too (a test
    compares the two)."""
    meta, col = Challenge._meta, sql_column
    mine = (
        f"SELECT {col(meta, 'id')}, {col(meta, 'version')} FROM {sql_table(meta)} "
        f"WHERE {col(meta, 'id')} IN ({her_challenges_sql()}) AND "
    )
    return (
        f"{mine}NOT ({col(meta, 'stage')} = %s) ORDER BY {col(meta, 'created_at')} ASC",
        f"{mine}{col(meta, 'stage')} = %s "
        f"ORDER BY {col(meta, 'resolved_at')} DESC LIMIT {RECENT_RESOLVED}",
    )


def phone_cards_shown(
    character: Character, session: GameSession
) -> tuple[dict[int, int], list[int]]:
    """What :func:`play_context` puts on ``character``'s phone, as ids only:
    ``({challenge id: version}, [ids of the results shown, newest first])``:
    the rows of :func:`_on_phone`. Two small queries, nothing rendered."""
    open_sql, done_sql = _cards_sql()
    params = [*her_challenges_params(session.pk, character.pk), Stage.RESOLVED.value]
    with connection.cursor() as cursor:
        cursor.execute(open_sql, params)
        shown = {pk: version for pk, version in cursor.fetchall()}
        cursor.execute(done_sql, params)
        results = cursor.fetchall()
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
