"""Persisted state of challenges: the challenge, each test with both throws,
Traits lost per session, the append-only event history, and client action ids.

The rules engine's full state is kept in ``Challenge.state`` (a lossless
``ChallengeState.to_dict()``); the other columns mirror what the dashboard and
the database constraints need. Only ``challenges.services`` writes these rows.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from challenges.rules import Kind, MobStage, Outcome, RetestKind, Side, Stage, Throw
from characters.models import CATEGORY_CHOICES, Character, GameSession, Trait


def _choices(enum) -> list[tuple[str, str]]:
    return [(member.value, member.value.replace("_", " ").capitalize()) for member in enum]


class Challenge(models.Model):
    """One conflict: opposed (character against character), static (against a
    narrator-set difficulty) or a simple test. seeds/000 "Challenges"."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="challenges")
    kind = models.CharField(max_length=10, choices=_choices(Kind))
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
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["session", "stage"])]
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
    """One Trait (one of its copies) lost for the rest of a session."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="losses")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="losses")
    trait = models.ForeignKey(Trait, on_delete=models.CASCADE, related_name="losses")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="losses")
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
