"""Persisted state of challenges: the challenge, each test with both throws,
Traits lost per session, the append-only event history, and client action ids.

The rules engine's full state is kept in ``Challenge.state`` (a lossless
``ChallengeState.to_dict()``); the other columns mirror what the dashboard and
the database constraints need. Only ``challenges.services`` writes these rows.
"""

import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.db.models.expressions import RawSQL
from django.utils import timezone

from challenges.rules import Kind, MobStage, Outcome, RetestKind, Side, Stage, Throw
from characters.models import CATEGORY_CHOICES, Character, CleanNameMixin, GameSession, Trait
from characters.names import clean_name, clean_text


def _choices(enum) -> list[tuple[str, str]]:
    return [(member.value, member.value.replace("_", " ").capitalize()) for member in enum]


# --- issue 11, statics: a prepared static --------------------------------------


def new_static_token() -> str:
    """An unguessable token for a prepared static's QR link: 128 random bits
    from ``secrets``, URL-safe (22 characters)."""
    return secrets.token_urlsafe(16)


class PreparedStatic(CleanNameMixin, models.Model):
    """A static challenge a narrator prepares before the evening, left on an
    object or place as a QR code (RULES.md "Static challenges": "notes on
    objects"; seeds/000 "Static Challenges"). A player scans it and plays it
    from her phone with no narrator present (``services.prepared_static_open``).

    ``difficulty`` is a Trait count never shown to a player; ``reveal`` is
    shown only to the winner, after the result. ``may_overbid``/``may_retest``:
    the object's moves, played by the server (``rules.judge.object_retest``).
    ``available_from``/``available_until`` (either blank: no bound) and
    ``session`` (blank: any session) say when it is in play; ``active`` False
    retires it. One attempt per character per session.

    Its texts are kept cleaned on ``clean()`` and ``save()``, whatever the
    path (the dashboard's form, the admin, code): ``name`` and ``hint`` as
    names are (``characters.names.clean_name``: NFC, no bidi or zero-width
    characters, one line), ``reveal`` as free text (``clean_text``: its
    lines kept); a name with nothing visible is a ValidationError."""

    chronicle = models.ForeignKey(
        "characters.Chronicle", on_delete=models.CASCADE, related_name="prepared_statics"
    )
    name = models.CharField(
        "object or place", max_length=120, help_text="What the card is on: “the vault door”."
    )
    hint = models.CharField(
        max_length=200, blank=True, help_text="Printed on the card: “Locked. Mental to pick.”"
    )
    category = models.CharField(max_length=10, choices=CATEGORY_CHOICES)
    difficulty = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(99)],
        help_text="A Trait count. Never shown to a player.",
    )
    reveal = models.TextField(
        "what winning reveals",
        blank=True,
        max_length=2000,
        help_text="Shown only to the winner, on her phone, after the result.",
    )
    may_overbid = models.BooleanField(
        "the object may overbid", default=False, help_text="Played by the server when useful."
    )
    may_retest = models.BooleanField(
        "the object may retest", default=False, help_text="One retest, played by the server."
    )
    available_from = models.DateTimeField(null=True, blank=True)
    available_until = models.DateTimeField(null=True, blank=True)
    session = models.ForeignKey(
        GameSession,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="prepared_statics",
        help_text="Only in this session (blank: every session).",
    )
    token = models.CharField(max_length=43, unique=True, default=new_static_token, editable=False)
    active = models.BooleanField(default=True, help_text="Untick to retire it.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "prepared static"
        ordering = ["chronicle", "name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        self._clean_texts()
        super().save(*args, **kwargs)

    def clean(self) -> None:
        super().clean()
        self._clean_texts()

    def _clean_texts(self) -> None:
        self.hint = clean_name(self.hint)
        self.reveal = clean_text(self.reveal)

    def refusal(self, session: GameSession | None, now=None) -> str:
        """Why it cannot be played now in ``session`` ("" if it can): retired,
        no session open, another session's, before ``available_from``, after
        ``available_until``."""
        now = now or timezone.now()
        if not self.active:
            return f"{self.name} is no longer in play."
        if session is None or not session.is_open:
            return "No session is open: static challenges wait for the next evening."
        if self.session_id is not None and self.session_id != session.pk:
            return f"{self.name} is not in play tonight."
        if self.available_from is not None and now < self.available_from:
            return f"{self.name} is not in play yet."
        if self.available_until is not None and now > self.available_until:
            return f"{self.name} is no longer in play."
        return ""


#: ``Challenge.kind`` of an opposed challenge settled by test pools (issue 12,
#: seeds/002): its ``state`` is ``challenges.rules.bns.BnsChallengeState.to_dict()``
#: and only ``challenges.services.bns`` moves it.
POOLS_KIND = "pools"


class Challenge(models.Model):
    """One conflict: opposed (character against character), static (against a
    narrator-set difficulty) or a simple test (MET, seeds/000 "Challenges"),
    or an opposed challenge of test pools (``kind`` :data:`POOLS_KIND`,
    seeds/002 "Tests and Challenges")."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="challenges")
    kind = models.CharField(
        max_length=10, choices=[*_choices(Kind), (POOLS_KIND, "Test pools (opposed)")]
    )
    challenger = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="challenges_made"
    )
    defender = models.ForeignKey(
        Character,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="challenges_received",
    )
    narrator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The narrator who ran this static challenge or simple test.",
    )
    category = models.CharField(max_length=10, choices=CATEGORY_CHOICES, blank=True)
    difficulty = models.PositiveSmallIntegerField(null=True, blank=True)
    is_attack = models.BooleanField(default=False)
    stakes = models.CharField("what happens on a win", max_length=300, blank=True)
    stage = models.CharField(max_length=20, choices=_choices(Stage))
    stage_since = models.DateTimeField()
    outcome = models.CharField(max_length=20, choices=_choices(Outcome), blank=True)
    state = models.JSONField(help_text="The rules engine's ChallengeState.to_dict().")
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    prepared = models.ForeignKey(
        PreparedStatic,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="attempts",
        help_text="The prepared static played (from its QR code), if any.",
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    # s11 rulings: a narrator called into the challenge (RULES.md "Disputes"),
    # and the rulings made on it, newest last (each also an Event).
    called_at = models.DateTimeField(
        null=True, blank=True, help_text="When a side called a narrator (cleared by a ruling)."
    )
    called_by = models.CharField(max_length=10, choices=_choices(Side), blank=True)
    call_reason = models.CharField(max_length=200, blank=True)
    rulings = models.JSONField(
        default=list,
        blank=True,
        help_text='Narrator rulings, oldest first: {"text", "reason", "narrator", "at"}.',
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["session", "stage"]),
            # Issue 14: one character's challenges of a session, a side at a
            # time (:func:`her_challenges_sql`), without reading the whole
            # session's (a reconnect storm late in an evening read them all).
            models.Index(fields=["challenger", "session"], name="challenge_challenger_session"),
            models.Index(fields=["defender", "session"], name="challenge_defender_session"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(stage=Stage.RESOLVED) | Q(outcome=""),
                name="outcome_only_when_resolved",
            ),
            models.CheckConstraint(
                condition=~Q(stage=Stage.RESOLVED) | ~Q(outcome=""),
                name="resolved_has_outcome",
            ),
        ]

    def __str__(self) -> str:
        against = self.defender.name if self.defender_id else "the narrator"
        return f"#{self.pk} {self.challenger.name} vs {against} ({self.kind})"

    @property
    def is_resolved(self) -> bool:
        return self.stage == Stage.RESOLVED

    @property
    def pooled(self) -> bool:
        """Settled by test pools (``kind`` :data:`POOLS_KIND`): its state is
        the ``bns`` engine's, not the MET ``ChallengeState``."""
        return self.kind == POOLS_KIND


def her_challenges_sql(session: str = "%s", character: str = "%s") -> str:
    """SQL of the ids of one character's challenges of one session, on either
    side, each once, for ``id IN (...)``: a SELECT per side, each searched by
    its ``(side, session)`` index (issue 14). Written as one ``session_id = ?
    AND (challenger_id = ? OR defender_id = ?)``, SQLite searched the
    session's index and read every challenge of the session for each phone:
    ~1.5-3 ms per query at 4,500 challenges against ~0.05 ms, and a
    reconnect storm late in an evening ran three such queries per phone.
    ``session`` and ``character`` are the placeholders as written into the
    SQL (``"%s"``, or ``"%(character)s"`` for named parameters); with
    ``"%s"`` the parameters go in the order ``[character, session,
    character, session, character]`` (:func:`her_challenges_params`)."""
    table = Challenge._meta.db_table
    return (
        f"SELECT id FROM {table} WHERE challenger_id = {character} AND session_id = {session} "
        f"UNION ALL SELECT id FROM {table} WHERE defender_id = {character} "
        f"AND session_id = {session} AND challenger_id <> {character}"
    )


def her_challenges_params(session_id: int, character_id: int) -> list[int]:
    """The parameters of :func:`her_challenges_sql` written with ``"%s"``."""
    return [character_id, session_id, character_id, session_id, character_id]


def her_challenges(session_id: int, character_id: int) -> RawSQL:
    """:func:`her_challenges_sql` with its parameters, for a queryset's
    ``filter(pk__in=her_challenges(session_id, character_id))``."""
    return RawSQL(her_challenges_sql(), her_challenges_params(session_id, character_id))


class Test(models.Model):
    """One simultaneous rock-paper-scissors throw of a challenge (a "chop").

    In static challenges and simple tests the defender's throw is the narrator's.
    """

    __test__ = False  # not a pytest test class

    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="tests")
    number = models.PositiveSmallIntegerField()
    challenger_throw = models.CharField(max_length=10, choices=_choices(Throw), blank=True)
    defender_throw = models.CharField(max_length=10, choices=_choices(Throw), blank=True)
    challenger_declared = models.PositiveSmallIntegerField(null=True, blank=True)
    defender_declared = models.PositiveSmallIntegerField(null=True, blank=True)
    winner = models.CharField(max_length=10, choices=_choices(Side), blank=True)
    tie = models.BooleanField(default=False)
    retest = models.CharField(
        max_length=20,
        choices=_choices(RetestKind),
        blank=True,
        help_text="Why this test was held (blank: the challenge's first test).",
    )
    by = models.CharField(
        "called by", max_length=10, choices=_choices(Side), blank=True, help_text="Who called it."
    )

    class Meta:
        ordering = ["challenge", "number"]
        constraints = [
            models.UniqueConstraint(fields=["challenge", "number"], name="unique_test_number")
        ]

    def __str__(self) -> str:
        return f"test {self.number} of challenge #{self.challenge_id}"


class TraitLoss(models.Model):
    """One Trait (one of its copies) lost for the rest of a session: in
    ``challenge``, or (no challenge) for ``reason``, e.g. the Mortally Wounded
    clock."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="losses")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="losses")
    trait = models.ForeignKey(Trait, on_delete=models.CASCADE, related_name="losses")
    challenge = models.ForeignKey(
        Challenge, null=True, blank=True, on_delete=models.CASCADE, related_name="losses"
    )
    # Why, when no challenge cost it (a health clock, a ruling).
    reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "lost Trait"
        indexes = [models.Index(fields=["session", "character"])]

    def __str__(self) -> str:
        return f"{self.character} lost {self.trait.name}"


class Event(models.Model):
    """Append-only history of a session: every state change of a challenge, time
    outs and rulings. Written in the same transaction as the change it records."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="events")
    challenge = models.ForeignKey(
        Challenge, null=True, blank=True, on_delete=models.CASCADE, related_name="events"
    )
    kind = models.CharField(max_length=30)
    data = models.JSONField(default=dict, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Events are append-only.")
        super().save(*args, **kwargs)


class ClientAction(models.Model):
    """A client message id already applied: a repeat is answered "already done"."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    msg_id = models.CharField(max_length=64)
    action = models.CharField(max_length=40)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "msg_id"], name="unique_client_action")
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.msg_id}"


# --- issue 11, section 2: mob scenes ------------------------------------------


class MobScene(models.Model):
    """A mob scene (seeds/000 "The Mob Scene"; seeds/004 "Mob Scenes"): the
    characters in it choose targets, then each target is settled by one test
    of her attackers' leader against her, a :class:`Challenge` (``challenge``:
    the current target's). ``state`` is the rules engine's
    ``MobScene.to_dict()`` (choices, order of targets, bids, outcomes); the
    other columns mirror what the dashboard shows. Only
    ``challenges.services.mob`` writes these rows."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="mob_scenes")
    narrator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    participants = models.ManyToManyField(Character, related_name="mob_scenes")
    category = models.CharField(max_length=10, choices=CATEGORY_CHOICES)
    is_attack = models.BooleanField(default=True)
    stage = models.CharField(max_length=10, choices=_choices(MobStage))
    current_target = models.ForeignKey(
        Character, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    challenge = models.ForeignKey(
        Challenge,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The current target's test.",
    )
    state = models.JSONField(help_text="The rules engine's MobScene.to_dict().")
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["session", "stage"])]

    def __str__(self) -> str:
        return f"mob scene #{self.pk} ({self.stage})"

    @property
    def is_settled(self) -> bool:
        return self.stage == MobStage.SETTLED


# --- issue 12: bns combat rounds -------------------------------------------------


class Combat(models.Model):
    """A ``bns`` combat (seeds/002 "Resolving Combat"): the characters in it
    act by initiative, round after round, until a narrator ends it. ``state``
    is the rules engine's ``challenges.rules.bns_combat.CombatState.to_dict()``
    (the order, the round, each fighter's actions, the challenges made and
    the immunities they left); the other columns mirror what the screens
    need. ``version`` grows with every move (the screens' stamps). Only
    ``challenges.services.combat`` writes these rows."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="combats")
    narrator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    participants = models.ManyToManyField(Character, related_name="combats")
    state = models.JSONField(help_text="The rules engine's CombatState.to_dict().")
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["session", "ended_at"])]

    def __str__(self) -> str:
        return f"combat #{self.pk}{' (ended)' if self.ended_at else ''}"

    @property
    def is_over(self) -> bool:
        return self.ended_at is not None


# --- issue 13: storytelling rolls (seeds/003) -------------------------------------


class DiceRoll(models.Model):
    """One roll of the Storytelling System's dice (seeds/003 "Rolling Dice"),
    made by the server (``challenges.services.rolls``) and kept as the log of
    the evening.

    ``kind``: a roll a narrator ``called`` for (it waits for the player's
    tap), an ``npc``'s roll (rolled at once), an ``open`` roll of N dice on the
    dashboard, a ``contested`` action (``character`` acts, ``opponent``
    resists; it waits for the resisting pool), an ``extended`` action (one
    row for all its rolls). ``spec``: what the pool is built from,
    ``{"attribute", "skill", "specialty", "equipment", "modifiers": [[reason,
    dice]], "willpower_allowed"}`` (the resisting side's under
    ``"opponent"``); the wound penalty is read when the dice are rolled.
    ``pool``/``opponent_pool``: the engine's ``DicePool.to_dict()`` rolled;
    ``result``: ``Roll.to_dict()``, ``Contest.to_dict()`` or
    ``ExtendedAction.to_dict()``; ``play_start``: an extended action's start as
    a play instant (epoch seconds less the session's Time out). ``rolled_at``
    is set once it is over (None: waiting, or an extended action going on).
    ``version`` grows with every change (the screens' stamps). Only
    ``challenges.services.rolls`` writes these rows."""

    class Kind(models.TextChoices):
        CALLED = "called", "Called for"
        NPC = "npc", "NPC"
        OPEN = "open", "Open"
        CONTESTED = "contested", "Contested"
        EXTENDED = "extended", "Extended"

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="dice_rolls")
    character = models.ForeignKey(
        Character, null=True, blank=True, on_delete=models.CASCADE, related_name="dice_rolls"
    )
    opponent = models.ForeignKey(
        Character, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    asked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    label = models.CharField(max_length=200)
    opponent_label = models.CharField(max_length=200, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    pool = models.JSONField(null=True, blank=True, help_text="DicePool.to_dict() rolled.")
    opponent_pool = models.JSONField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    willpower_spent = models.PositiveSmallIntegerField(default=0)
    play_start = models.FloatField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    rolled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["session", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} roll #{self.pk}: {self.label}"

    @property
    def is_over(self) -> bool:
        return self.rolled_at is not None


# --- issue 13: a Storytelling fight (seeds/003 "Combat") ------------------------


class StoryCombat(models.Model):
    """A fight of a ``storytelling`` chronicle (seeds/003 "Combat"): the
    characters in it roll Initiative once, then act turn after turn from the
    highest Initiative to the lowest until a narrator ends it. ``state`` is
    the rules engine's ``challenges.rules.storytelling.CombatState.to_dict()``;
    ``rolls`` the log of every roll made in it, oldest first, each
    ``{"kind": "initiative"|"attack", "by": id, "target": id|None, "roll":
    Roll.to_dict(), "pool": DicePool.to_dict()|None, "defense": dice taken off,
    "damage": points, "damage_type": str, "track": picture after}``;
    ``guard``: ids of fighters who will spend a Willpower point on Defense
    against the next attack on them (their phone's standing toggle). ``version``
    grows with every move (the screens' stamps). Only
    ``challenges.services.story_combat`` writes these rows."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="story_combats")
    narrator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    participants = models.ManyToManyField(Character, related_name="story_combats")
    state = models.JSONField(help_text="The rules engine's storytelling CombatState.to_dict().")
    rolls = models.JSONField(default=list, blank=True, help_text="Every roll of the fight.")
    guard = models.JSONField(
        default=list, blank=True, help_text="Ids spending Willpower on Defense next attack."
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["session", "ended_at"], name="storycombat_live")]

    def __str__(self) -> str:
        return f"fight #{self.pk}{' (ended)' if self.ended_at else ''}"

    @property
    def is_over(self) -> bool:
        return self.ended_at is not None
