"""Reads and writes around characters and sessions.

``character_sheet`` is the one place that works out what a character still
holds tonight; the challenge services build the rules engine's ``Combatant``
from it, and the phone renders it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from challenges.realtime import SESSIONS_ENDED, broadcast_on_commit, user_group
from challenges.rules import Category, HealthLevel
from characters.models import Ability, Character, Chronicle, GameSession, Presence, Trait


@dataclass(frozen=True)
class TraitLine:
    """One Trait of a sheet tonight: ``count`` on the sheet, ``lost`` this session."""

    id: int
    name: str
    category: Category
    count: int
    lost: int
    negative: bool

    @property
    def held(self) -> int:
        """Copies still held tonight (Trait count)."""
        return self.count - self.lost


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
class Sheet:
    """A character's sheet as it stands in one session (or between sessions)."""

    character: Character
    session: GameSession | None
    health: HealthLevel
    categories: list[CategoryLines]
    negatives: list[TraitLine]
    abilities: list[Ability] = field(default_factory=list)

    def held(self, category: Category) -> int:
        """Trait count of ``category`` held tonight (what a tie compares)."""
        return next(c.held for c in self.categories if c.category == category)

    @property
    def traits(self) -> list[TraitLine]:
        """Every non-negative Trait line, all categories."""
        return [t for c in self.categories for t in c.traits]


def character_sheet(character: Character, session: GameSession | None) -> Sheet:
    """Build ``character``'s sheet for ``session``: Traits by category (Physical,
    Social, Mental) with counts, copies lost in this session, Negative Traits,
    Abilities and her health level tonight. Three queries."""
    return character_sheets([character], session)[character.pk]


def character_sheets(characters: list[Character], session: GameSession | None) -> dict[int, Sheet]:
    """:func:`character_sheet` for many characters at once (a narrator's
    roster): four queries in all, not four per character. Keyed by character id."""
    from challenges.models import TraitLoss  # challenges depends on characters, not back

    ids = [c.pk for c in characters]
    losses: Counter[int] = Counter()
    health: dict[int, HealthLevel] = {}
    if session is not None:
        rows = (
            TraitLoss.objects.filter(session=session, character_id__in=ids)
            .values("trait_id")
            .annotate(n=Count("id"))
            .values_list("trait_id", "n")
        )
        losses.update(dict(rows))
        for character_id, level in Presence.objects.filter(
            session=session, character_id__in=ids
        ).values_list("character_id", "health"):
            health[character_id] = HealthLevel(level)
    lines: dict[int, list[TraitLine]] = {pk: [] for pk in ids}
    for t in Trait.objects.filter(character_id__in=ids).order_by("name"):
        lines[t.character_id].append(
            TraitLine(
                id=t.id,
                name=t.name,
                category=Category(t.category),
                count=t.count,
                lost=min(losses[t.id], t.count),
                negative=t.negative,
            )
        )
    abilities: dict[int, list[Ability]] = {pk: [] for pk in ids}
    for ability in Ability.objects.filter(character_id__in=ids).order_by("name"):
        abilities[ability.character_id].append(ability)
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
            abilities=abilities[c.pk],
        )
        for c in characters
    }


def session_start(*, chronicle: Chronicle, name: str = "") -> GameSession:
    """End ``chronicle``'s open session (if any) and open a new one.

    Losses are recorded per session, so every lost Trait is restored in the new
    session while the old one keeps its history. Characters present last time
    are present again, at their sheet's starting health.
    """
    with transaction.atomic():
        previous = (
            GameSession.objects.select_for_update()
            .filter(chronicle=chronicle, ended_at__isnull=True)
            .first()
        )
        present: list[int] = []
        if previous is not None:
            present = list(previous.presences.values_list("character_id", flat=True))
            previous.ended_at = timezone.now()
            previous.time_out = False
            previous.save(update_fields=["ended_at", "time_out"])
        session = GameSession.objects.create(chronicle=chronicle, name=name)
        for character in Character.objects.filter(pk__in=present):
            Presence.objects.create(session=session, character=character, health=character.health)
    return session


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
    websockets are told after commit (``SESSIONS_ENDED`` to her user group) and
    those of an ended session close with 4401 at once; in another process
    than the sockets' with the in-memory channel layer, at their next
    reconnect. Used by the admin action "Revoke join links" and
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
        broadcast_on_commit([user_group(user.pk)], SESSIONS_ENDED, user_id=user.pk)
    return len(ended)
