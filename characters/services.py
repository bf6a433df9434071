"""Reads and writes around characters and sessions.

``character_sheet`` is the one place that works out what a character still
holds tonight; the challenge services build the rules engine's ``Combatant``
from it, and the phone renders it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.db.models import Count, Sum
from django.utils import timezone

from challenges.realtime import RIGHTS_CHANGED, broadcast_on_commit, user_group
from challenges.rules import RULESETS, Category, HealthLevel, Ruleset
from characters.attribute_sheets import AttributeSheet, attribute_sheet_of
from characters.models import (
    Ability,
    Character,
    Chronicle,
    Discipline,
    GameSession,
    Presence,
    Trait,
    Weapon,
)
from characters.story_sheets import StorySheetView, story_sheets


@dataclass(frozen=True)
class TraitLine:
    """One Trait of a sheet tonight: ``count`` on the sheet, ``lost`` this
    session, ``at_risk`` copies bid in her open challenges, the ids of those
    challenges in ``risked_in`` (one per copy, oldest first)."""

    id: int
    name: str
    category: Category
    count: int
    lost: int
    negative: bool
    at_risk: int = 0
    risked_in: tuple[int, ...] = ()

    @property
    def held(self) -> int:
        """Copies still held tonight (Trait count)."""
        return self.count - self.lost

    @property
    def free(self) -> int:
        """Copies she may bid now: held and not at risk elsewhere."""
        return max(0, self.held - self.at_risk)

    @property
    def risked_in_text(self) -> str:
        """ "#12", "#12, #14": the open challenges her copies are bid in."""
        return ", ".join(f"#{pk}" for pk in dict.fromkeys(self.risked_in))


@dataclass(frozen=True)
class CategoryLines:
    """The Traits of one category, with the totals a player declares in ties."""

    category: Category
    traits: list[TraitLine]

    @property
    def held(self) -> int:
        return sum(t.held for t in self.traits)

    @property
    def lost(self) -> int:
        return sum(t.lost for t in self.traits)

    @property
    def label(self) -> str:
        return self.category.value.title()


@dataclass(frozen=True)
class PoolLine:
    """One pool of a sheet tonight: ``name`` (a ``challenges.rules.Pool``
    value: "willpower", "rage", "gnosis", "blood"), her sheet's ``rating`` and
    what is ``left`` of it after this session's spending."""

    name: str
    rating: int
    left: int

    @property
    def label(self) -> str:
        """ "Willpower", "Rage", "Gnosis" or "Blood"."""
        return self.name.title()

    @property
    def text(self) -> str:
        """ "Willpower 3 of 5"."""
        return f"{self.label} {self.left} of {self.rating}"


@dataclass(frozen=True)
class Sheet:
    """A character's sheet as it stands in one session (or between sessions)."""

    character: Character
    session: GameSession | None
    health: HealthLevel
    categories: list[CategoryLines]
    negatives: list[TraitLine]
    abilities: list[Ability] = field(default_factory=list)
    #: Her ``Presence.Status`` value tonight ("present" when not seated).
    status: str = Presence.Status.PRESENT.value
    #: Her pools with a rating above 0, in Character.POOLS order.
    pools: list[PoolLine] = field(default_factory=list)
    disciplines: list[Discipline] = field(default_factory=list)
    weapons: list[Weapon] = field(default_factory=list)
    #: Blood Traits still active tonight (ukm) and until when (None: none).
    blood_traits: int = 0
    blood_traits_until: datetime | None = None
    #: Issue 12: her Attributes, Skills, Willpower, damage and form when her
    #: chronicle's ruleset has test pools (``bns``); None on a Trait sheet.
    attributes: AttributeSheet | None = None
    #: Issue 13: her dots, Merits, Willpower, Health boxes and track when her
    #: chronicle's ruleset rolls dice pools (``storytelling``); else None.
    story: StorySheetView | None = None

    @property
    def trait_sheet(self) -> bool:
        """A sheet of adjective Traits (MET): neither test pools nor dice
        pools, so the Trait bids, MET challenge forms and health levels apply."""
        return self.attributes is None and self.story is None

    @property
    def on_break(self) -> bool:
        """On a break (out of character): nobody can challenge her (seeds/000 "Time")."""
        return self.status == Presence.Status.BREAK

    def held(self, category: Category) -> int:
        """Trait count of ``category`` held tonight (what a tie compares)."""
        return next(c.held for c in self.categories if c.category == category)

    @property
    def risked_in(self) -> frozenset[int]:
        """Ids of her open challenges with a Trait of hers bid."""
        return frozenset(pk for t in self.traits for pk in t.risked_in)

    @property
    def traits(self) -> list[TraitLine]:
        """Every non-negative Trait line, all categories."""
        return [t for c in self.categories for t in c.traits]

    def with_risk(
        self, challenge_id: int, category: Category | None, bids: Sequence[tuple[int | None, str]]
    ) -> Sheet:
        """This sheet with her copies at risk in challenge ``challenge_id`` set
        to ``bids`` (``(Trait id or None, name as bid)``, one per copy bid, of
        ``category``; empty once the challenge is over), the others as they
        are: what :func:`character_sheet` would read after a move of that
        challenge that cost her nothing, without a query. A bid without an id
        (a state saved before ids) is matched by name, as the engine matches."""
        by_id: Counter[int] = Counter()
        by_name: Counter[str] = Counter()
        for trait_id, name in bids:
            if trait_id is not None:
                by_id[trait_id] += 1
            else:
                by_name[" ".join(name.split()).casefold()] += 1

        def line(t: TraitLine) -> TraitLine:
            kept = tuple(pk for pk in t.risked_in if pk != challenge_id)
            added = 0
            if t.category == category:
                added = by_id[t.id] + by_name[" ".join(t.name.split()).casefold()]
            if added == 0 and len(kept) == len(t.risked_in):
                return t
            risked = tuple(sorted(kept + (challenge_id,) * added))
            return replace(t, at_risk=len(risked), risked_in=risked)

        return replace(
            self,
            categories=[replace(c, traits=[line(t) for t in c.traits]) for c in self.categories],
        )

    def with_losses(self, losses: Sequence[tuple[int | None, str, Category]]) -> tuple[Sheet, int]:
        """This sheet with one more copy lost of each of ``losses`` (``(Trait
        id or None, name as bid, category)``, one per copy: a result's
        ``Loss`` entries of hers), and how many of them it holds: what
        :func:`character_sheet` reads once that result's TraitLoss rows are
        committed, without a query. Matched as the result's rows are written
        (``challenges.services._writes._save_losses``): by id, else by exact
        name and category, among her non-negative Traits; a loss of a Trait
        not on this sheet changes nothing and is not counted."""
        by_key: Counter[object] = Counter()
        for trait_id, name, category in losses:
            by_key[trait_id if trait_id is not None else (name, category)] += 1
        matched = 0

        def line(t: TraitLine) -> TraitLine:
            nonlocal matched
            more = by_key.pop(t.id, 0) + by_key.pop((t.name, t.category), 0)
            if not more:
                return t
            matched += more
            return replace(t, lost=min(t.lost + more, t.count))

        categories = [replace(c, traits=[line(t) for t in c.traits]) for c in self.categories]
        return replace(self, categories=categories), matched


def character_sheet(character: Character, session: GameSession | None) -> Sheet:
    """Build ``character``'s sheet for ``session``: Traits by category (Physical,
    Social, Mental) with counts, copies lost in this session, Negative Traits,
    Abilities, Disciplines, weapons, pools left tonight, active Blood Traits,
    her health level and Traits at risk tonight; on a test-pool sheet
    (``bns``) also ``attributes`` (:class:`AttributeSheet`), on a dice-pool
    sheet (``storytelling``) ``story`` (:class:`StorySheetView`, four more
    queries). Five queries (six when neither ``session`` nor ``character``
    has its chronicle read)."""
    return character_sheets([character], session)[character.pk]


def character_sheets(
    characters: list[Character], session: GameSession | None, *, risks: bool = True
) -> dict[int, Sheet]:
    """:func:`character_sheet` for many characters at once (a narrator's
    roster): five queries in all, not five per character (copies at risk in
    her open challenges of ``session`` read with the rules engine's own
    reckoning, ``challenges.services.open_bids``). Keyed by character id.
    ``risks=False``: copies at risk are not read (every ``at_risk`` 0, one
    query less, no challenge state parsed): for a screen that shows none, a
    narrator's roster (issue 14: 0.1 s of a 1,500-character dashboard)."""
    from challenges.models import TraitLoss  # challenges depends on characters, not back
    from challenges.services import open_bids
    from challenges.services._reads import _sheet_extras

    ids = [c.pk for c in characters]
    losses: Counter[int] = Counter()
    health: dict[int, HealthLevel] = {}
    status: dict[int, str] = {}
    spent: dict[int, tuple[int, ...]] = {}
    blood: dict[int, tuple[int, datetime | None]] = {}
    tonight: dict[int, tuple[int, str, str]] = {}  # damage, Garou form, fate (test pools)
    now = timezone.now()
    risked: dict[tuple[int, object], list[int]] = {}
    if session is not None and ids and risks:
        for bid in open_bids(session.pk, ids):
            risked.setdefault((bid.character_id, bid.key), []).append(bid.challenge_id)
    if session is not None:
        rows = (
            TraitLoss.objects.filter(session=session, character_id__in=ids)
            .values("trait_id")
            .annotate(n=Count("id"))
            .values_list("trait_id", "n")
        )
        losses.update(dict(rows))
        spent_fields = [f"{pool}_spent" for pool in Character.POOLS]
        presences = Presence.objects.filter(session=session, character_id__in=ids).values_list(
            "character_id",
            "health",
            "status",
            "blood_traits",
            "blood_traits_until",
            "damage",
            "form",
            "fate",
            *spent_fields,
        )
        for character_id, level, seat, traits, until, damage, form, fate, *used in presences:
            health[character_id] = HealthLevel(level)
            status[character_id] = seat
            spent[character_id] = tuple(used)
            tonight[character_id] = (damage, form, fate)
            if traits and until is not None and until > now:
                blood[character_id] = (traits, until)
    lines: dict[int, list[TraitLine]] = {pk: [] for pk in ids}
    traits = (
        Trait.objects.filter(character_id__in=ids)
        .order_by("name")
        .values_list("id", "character_id", "name", "category", "count", "negative")
    )
    for trait_id, character_id, name, category, count, negative in traits:
        # By id; by name and category for a bid saved without ids.
        risked_in = risked.get((character_id, trait_id), []) + risked.get(
            (character_id, (name, category)), []
        )
        lines[character_id].append(
            TraitLine(
                id=trait_id,
                name=name,
                category=Category(category),
                count=count,
                lost=min(losses[trait_id], count),
                negative=negative,
                at_risk=len(risked_in),
                risked_in=tuple(sorted(risked_in)),
            )
        )
    # Abilities, Disciplines and weapons in one query (as the rules engine reads them).
    extras = _sheet_extras(ids) if ids else {}
    # An unknown ruleset (a row older than the code) shows the Trait sheet, as before.
    rules = chronicle_rules(characters, session) if characters else None
    test_pools = rules is not None and rules.test_pools
    dice = story_sheets(characters, session) if rules is not None and rules.dice_pools else {}
    return {
        c.pk: Sheet(
            character=c,
            session=session,
            health=health.get(c.pk, HealthLevel(c.health)),
            categories=[
                CategoryLines(
                    category=cat,
                    traits=[t for t in lines[c.pk] if t.category == cat and not t.negative],
                )
                for cat in Category
            ],
            negatives=[t for t in lines[c.pk] if t.negative],
            abilities=[
                Ability(character_id=c.pk, name=a.name, rating=a.rating)
                for a in extras[c.pk].abilities
            ],
            status=status.get(c.pk, Presence.Status.PRESENT.value),
            pools=_pool_lines(c, spent.get(c.pk, (0,) * len(Character.POOLS))),
            disciplines=[
                Discipline(character_id=c.pk, name=d.name, rating=d.rating)
                for d in extras[c.pk].disciplines
            ],
            weapons=[
                Weapon(
                    character_id=c.pk,
                    name=w.name,
                    bonus=w.bonus,
                    ability=w.ability,
                    ranged=w.ranged,
                )
                for w in extras[c.pk].weapons
            ],
            blood_traits=blood.get(c.pk, (0, None))[0],
            blood_traits_until=blood.get(c.pk, (0, None))[1],
            attributes=_attributes(c, extras[c.pk].abilities, spent, tonight)
            if test_pools
            else None,
            story=dice.get(c.pk),
        )
        for c in characters
    }


@dataclass(frozen=True)
class CategoryCount:
    """One category of a roster row: the Trait count ``held`` tonight and the
    copies ``lost`` this session (Negative Traits not counted), as
    :class:`CategoryLines` totals them."""

    category: Category
    held: int
    lost: int

    @property
    def label(self) -> str:
        return self.category.value.title()


@dataclass(frozen=True)
class RosterSheet:
    """What a narrator's roster row shows of a character with a Trait sheet
    (MET) tonight: her ``health``, seat ``status`` and each category's
    :class:`CategoryCount`, without her Trait lines. Answers what a roster
    row and a health clock ask of a :class:`Sheet` (``health``,
    ``categories``, ``on_break``, ``trait_sheet``, ``attributes``, ``story``,
    :meth:`held`)."""

    health: HealthLevel
    categories: list[CategoryCount]
    status: str = Presence.Status.PRESENT.value
    attributes: None = None
    story: None = None

    @property
    def trait_sheet(self) -> bool:
        """Always: a roster sheet is read for Trait sheets only."""
        return True

    @property
    def on_break(self) -> bool:
        """On a break (out of character), as :attr:`Sheet.on_break`."""
        return self.status == Presence.Status.BREAK

    def held(self, category: Category) -> int:
        """Trait count of ``category`` held tonight."""
        return next(c.held for c in self.categories if c.category == category)


def roster_sheets(
    characters: list[Character], session: GameSession
) -> dict[int, Sheet | RosterSheet]:
    """What a narrator's roster shows of ``characters`` at ``session``, keyed
    by character id: for a chronicle of Trait sheets (MET) a
    :class:`RosterSheet` each, summed by the database in three queries
    (Trait counts by category, this session's losses by Trait, the seats)
    with no Trait line built; for test pools (``bns``) or dice pools
    (``storytelling``), whose rows show more, their :func:`character_sheets`
    (``risks=False``). Issue 14: reading every Trait line of 1,500
    characters for a whole dashboard took ~0.5 s of the database thread,
    half of it; the totals are what :class:`CategoryLines` sums (a Trait's
    copies lost count at most its count)."""
    if not characters:
        return {}
    rules = chronicle_rules(characters, session)
    if rules is not None and (rules.test_pools or rules.dice_pools):
        return dict(character_sheets(characters, session, risks=False))
    from challenges.models import TraitLoss  # challenges depends on characters, not back

    ids = [c.pk for c in characters]
    counts: dict[tuple[int, str], int] = {}
    for character_id, category, n in (
        Trait.objects.filter(character_id__in=ids, negative=False)
        .values_list("character_id", "category")
        .annotate(n=Sum("count"))
        .order_by()
    ):
        counts[character_id, category] = n
    lost: Counter[tuple[int, str]] = Counter()
    # Grouped by Trait: each Trait's lost copies count at most its count.
    for _trait, character_id, category, count, n in (
        TraitLoss.objects.filter(session=session, character_id__in=ids, trait__negative=False)
        .values_list("trait_id", "trait__character_id", "trait__category", "trait__count")
        .annotate(n=Count("id"))
        .order_by()
    ):
        lost[character_id, category] += min(n, count)
    seats = {
        character_id: (HealthLevel(level), status)
        for character_id, level, status in Presence.objects.filter(
            session=session, character_id__in=ids
        ).values_list("character_id", "health", "status")
    }
    unseated = Presence.Status.PRESENT.value  # her sheet's health, as character_sheets
    sheets: dict[int, Sheet | RosterSheet] = {}
    for c in characters:
        health, status = seats.get(c.pk) or (HealthLevel(c.health), unseated)
        sheets[c.pk] = RosterSheet(
            health=health,
            status=status,
            categories=[
                CategoryCount(
                    category=cat,
                    held=counts.get((c.pk, cat.value), 0) - lost[c.pk, cat.value],
                    lost=lost[c.pk, cat.value],
                )
                for cat in Category
            ],
        )
    return sheets


def plays_met_challenges(character: Character, session: GameSession | None) -> bool:
    """``character``'s chronicle plays MET challenges (``Ruleset.met_challenges``:
    mob scenes, statics, simple tests); True for an unknown ruleset (a Trait
    sheet, as :func:`character_sheets` shows it). No query after her
    :func:`character_sheet` (the ruleset is read as it read it)."""
    rules = chronicle_rules([character], session)
    return rules is None or rules.met_challenges


def chronicle_rules(characters: Sequence[Character], session: GameSession | None) -> Ruleset | None:
    """The :class:`~challenges.rules.Ruleset` of ``characters``' chronicle (one
    chronicle; ``session`` its open session or None), or None for a ruleset
    name the engine does not know. No query when a seat's session
    (``chronicle_ruleset``, ``views.seats.player_seat``), the session's or a
    character's cached chronicle carries the name; else one query. Raises
    IndexError if ``characters`` is empty and ``session`` is None."""
    return RULESETS.get(_ruleset_name(characters, session))


def _ruleset_name(characters: Sequence[Character], session: GameSession | None) -> str:
    """The ruleset of ``characters``' chronicle (one chronicle), read without
    a query when a seat (``chronicle_ruleset``), the session or a character
    carries it; else one query, whose chronicle is kept on the session (or
    the first character) for whoever reads it next."""
    if session is not None:
        carried = getattr(session, "chronicle_ruleset", None)
        if carried:
            return carried
        if GameSession.chronicle.is_cached(session):
            return session.chronicle.ruleset
    for character in characters:
        if Character.chronicle.is_cached(character):
            return character.chronicle.ruleset
    return (session or characters[0]).chronicle.ruleset


def _attributes(
    character: Character,
    abilities: Sequence,
    spent: dict[int, tuple[int, ...]],
    tonight: dict[int, tuple[int, str, str]],
) -> AttributeSheet:
    """Her :class:`AttributeSheet` from the rows :func:`character_sheets` read."""
    used = dict(zip(Character.POOLS, spent.get(character.pk, ()), strict=False))
    damage, form, fate = tonight.get(character.pk, (0, "", ""))
    return attribute_sheet_of(
        character,
        [(a.name, a.rating) for a in abilities],
        willpower_spent=used.get("willpower", 0),
        rage_spent=used.get("rage", 0),
        damage=damage,
        form=form,
        fate=fate,
    )


def _pool_lines(character: Character, spent: Sequence[int]) -> list[PoolLine]:
    """Her pools with a rating above 0, each less ``spent`` (per Character.POOLS)."""
    lines = []
    for name, used in zip(Character.POOLS, spent, strict=True):
        rating = getattr(character, name)
        if rating:
            lines.append(PoolLine(name, rating, max(0, rating - used)))
    return lines


def session_start(
    *, chronicle: Chronicle, name: str = "", user=None, number: int | None = None
) -> GameSession:
    """End ``chronicle``'s open session (if any) and open the next one: every
    lost Trait is restored, the old session keeps its history. The one flow is
    ``challenges.services.session_start`` (it voids the old session's unresolved
    challenges and moves every open screen; ``number``: the session confirmed,
    ActionRefused if another started first); this is its name here."""
    from challenges.services import session_start as start  # challenges depends on characters

    return start(chronicle=chronicle, name=name, user=user, number=number)


def presence_join(*, session: GameSession, character: Character) -> Presence:
    """Mark ``character`` present at ``session`` (idempotent); a new arrival starts
    the evening at her sheet's starting health."""
    presence, _ = Presence.objects.get_or_create(
        session=session, character=character, defaults={"health": character.health}
    )
    return presence


JOIN_BACKEND = "characters.backends.JoinLinkBackend"


def join_links_revoke(*, user) -> int:
    """Revoke every one-tap join link handed out to ``user`` so far, and log out
    the browsers that came in through one. Links made afterwards work.

    Returns how many logged-in browsers (Django sessions) were ended. Her open
    websockets are told after commit (``RIGHTS_CHANGED`` to her user group) and
    those of an ended session close with 4401 at once, on every worker; in
    another process than the sockets' with the in-memory channel layer, at
    their next reconnect. Used by the admin action "Revoke join links" and
    ``manage.py joinlinks --revoke``.
    """
    from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.models import Session

    from characters.models import JoinLinkRevocation

    now = timezone.now()
    JoinLinkRevocation.objects.update_or_create(user=user, defaults={"revoked_at": now})
    ended = []
    for session in Session.objects.filter(expire_date__gt=now).iterator():
        data = session.get_decoded()
        if data.get(SESSION_KEY) == str(user.pk) and data.get(BACKEND_SESSION_KEY) == JOIN_BACKEND:
            ended.append(session.pk)
    Session.objects.filter(pk__in=ended).delete()
    if ended:
        broadcast_on_commit([user_group(user.pk)], RIGHTS_CHANGED)
    return len(ended)
