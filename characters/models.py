"""Chronicles, their sessions, characters and their sheets.

A character's sheet (Traits, Negative Traits, Abilities) is permanent; what she
loses in an evening is recorded per session in ``challenges.TraitLoss`` so that
starting a new session restores every Trait while the last one keeps its history.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from challenges.rules import RULESETS, Category, HealthLevel, get_ruleset
from challenges.rules import Ruleset as RulesetPolicies
from challenges.rules.npc import Relents as NpcRelents
from challenges.rules.storytelling import traits as story_traits
from characters.names import clean_name, name_key

# Copies of one Trait, an Ability's rating: far above any sheet, a guard against
# typos in the admin (validators, not database constraints: the load bench and
# the fault tests give characters hundreds of copies so that play never runs out).
MAX_TRAIT_COUNT = 99
MAX_ABILITY_RATING = 10
# A permanent pool rating (Willpower, Rage, Gnosis, Blood) and a weapon's bonus
# Traits: guards against typos, as above.
MAX_POOL = 20
MAX_WEAPON_BONUS = 5
# Blood Traits stay active this long after the end of the challenge they were
# spent in (seeds/004 "Expending Blood": "up to five minutes after the end of
# the last challenge").
BLOOD_TRAITS_MINUTES = 5
# Sheets of a ruleset with test pools (bns, seeds/002): the seed gives no
# ranges, so these are the app's policy (docs/rules.md "bns sheets").
ATTRIBUTE_RANGE = (1, 15)
SKILL_RANGE = (0, 5)  # a Skill rated 0 is simply not on the sheet
WILLPOWER_RANGE = (0, 10)
WOUND_BOXES_RANGE = (1, 10)
DEFAULT_WOUND_BOXES = 3
#: The wound tracks of a test-pool sheet, in the order damage fills them.
WOUND_TRACKS = ("healthy", "injured", "incapacitated")
#: Garou forms (seeds/001 setting vocabulary; seeds/000 "Healing": no healing in Homid).
GAROU_FORMS = [(f, f.title()) for f in ("homid", "glabro", "crinos", "hispo", "lupus")]
#: A test-pool sheet's Physical focus (seeds/002 "Physical Focuses in Combat").
PHYSICAL_FOCUSES = [(f, f.title()) for f in ("strength", "dexterity", "stamina")]
#: What a test-pool sheet's character is, for Pierce the Heart (seeds/002
#: "Combat Maneuvers": it kills a mortal, stakes a vampire hit with a staking
#: weapon); "" (not said) and "other" (a Garou, a fae...): the damage only.
CREATURES = [("mortal", "Mortal"), ("vampire", "Vampire"), ("other", "Other creature")]
#: How Pierce the Heart left her tonight (seeds/002 "Combat Maneuvers").
FATES = [("dead", "Dead"), ("staked", "Staked")]


def _rating_field(
    label: str, help_text: str, default: int, low: int, high: int
) -> models.PositiveSmallIntegerField:
    return models.PositiveSmallIntegerField(
        label,
        default=default,
        db_default=default,  # rows written in plain SQL (a bulk import) get the default
        validators=[MinValueValidator(low), MaxValueValidator(high)],
        help_text=help_text,
    )


def _pool_field(label: str, help_text: str) -> models.PositiveSmallIntegerField:
    return _rating_field(label, help_text, 0, 0, MAX_POOL)


def _attribute_field(label: str) -> models.PositiveSmallIntegerField:
    low, high = ATTRIBUTE_RANGE
    help_text = f"Test-pool sheets: {low}–{high}. Unused by Trait sheets (0)."
    return _rating_field(label, help_text, 0, 0, high)


def _wound_boxes_field(label: str, help_text: str) -> models.PositiveSmallIntegerField:
    return _rating_field(label, help_text, DEFAULT_WOUND_BOXES, *WOUND_BOXES_RANGE)


def _optional_choice(label: str, choices, help_text: str = "") -> models.CharField:
    """A choice that may be left blank ("": none)."""
    return models.CharField(
        label,
        max_length=10,
        blank=True,
        default="",
        db_default="",  # rows written in plain SQL (a bulk import) have none
        choices=choices,
        help_text=help_text,
    )


class CleanNameMixin:
    """Keeps ``name`` cleaned (:func:`clean_name`) on ``clean()`` and ``save()``;
    a name typed with nothing visible is a validation error."""

    def clean(self) -> None:
        super().clean()  # type: ignore[misc]
        typed = self.name
        self.name = clean_name(typed)
        # No name at all is the field's own error ("required"); so is one its
        # form refused (too long), which leaves a new row's name empty here.
        if typed and not self.name:
            raise ValidationError({"name": "A name needs at least one visible letter."})

    def save(self, *args, **kwargs) -> None:
        self.name = clean_name(self.name)
        super().save(*args, **kwargs)  # type: ignore[misc]


class Chronicle(models.Model):
    """An ongoing game (a LARP campaign) with its characters, narrators and ruleset."""

    class Ruleset(models.TextChoices):
        MET_CLASSIC = "met_classic", "Mind's Eye Theatre (classic)"
        UKM = "ukm", "UK Masquerade house rules (MET)"
        BNS = "bns", "By Night Studios MET"
        STORYTELLING = "storytelling", "Storytelling System (Mage: The Awakening)"

    name = models.CharField(max_length=200, unique=True)
    ruleset = models.CharField(max_length=20, choices=Ruleset.choices, default=Ruleset.MET_CLASSIC)
    narrators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="narrated_chronicles"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def rules(self) -> RulesetPolicies:
        """Its ruleset's policies (``challenges.rules.rulesets``): what its sheets
        hold and which challenges it plays. RulesError for an unknown ruleset."""
        return get_ruleset(self.ruleset)

    @property
    def has_test_pools(self) -> bool:
        """Its sheets rate Attributes and Skills (``Ruleset.test_pools``: ``bns``);
        False for an unknown ruleset, whose sheets stay Trait sheets."""
        rules = RULESETS.get(self.ruleset)
        return rules is not None and rules.test_pools

    @property
    def has_dice_pools(self) -> bool:
        """Its sheets rate Attributes and Skills in dots, rolled as d10 dice
        pools (``Ruleset.dice_pools``: ``storytelling``, seeds/003); False for
        an unknown ruleset."""
        rules = RULESETS.get(self.ruleset)
        return rules is not None and rules.dice_pools

    def open_session(self) -> "GameSession | None":
        """The session being played now, or None between evenings."""
        return self.sessions.filter(ended_at__isnull=True).first()

    def latest_session(self) -> "GameSession | None":
        """The newest session, open or ended (None before the first evening)."""
        return self.sessions.order_by("-number", "-started_at").first()

    def is_narrator(self, user) -> bool:
        """True if ``user`` may referee this chronicle (its narrators, and superusers)."""
        if not user.is_authenticated:
            return False
        return user.is_superuser or self.narrators.filter(pk=user.pk).exists()


class GameSession(models.Model):
    """One evening (one story) of a chronicle.

    Lost Traits and wounds are kept per session; at most one session of a
    chronicle is open at a time. ``time_out`` freezes all play in it.
    """

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="sessions")
    name = models.CharField(
        max_length=200,
        blank=True,
        help_text='Optional, e.g. "The Masquerade Ball"; else "Session 5 · 24 Nov 2026".',
    )
    number = models.PositiveIntegerField(
        default=0, help_text="Sessions of a chronicle are numbered 1, 2, 3… as they start."
    )
    started_at = models.DateTimeField("started", auto_now_add=True)
    ended_at = models.DateTimeField("ended", null=True, blank=True)
    time_out = models.BooleanField("Time out", default=False)
    time_out_since = models.DateTimeField("in Time out since", null=True, blank=True)
    # s11 clocks: seconds of finished Time outs, so every health clock can
    # leave them out (challenges.rules.clocks.Pause).
    time_out_seconds = models.FloatField(
        "seconds in Time out", default=0.0, db_default=0.0, help_text="Finished Time outs only."
    )

    class Meta:
        verbose_name = "session"
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["chronicle"],
                condition=Q(ended_at__isnull=True),
                name="one_open_session_per_chronicle",
            )
        ]

    def __str__(self) -> str:
        when = self.name or (f"{self.started_at:%Y-%m-%d}" if self.started_at else "new")
        return f"{self.chronicle}: {when}"

    def save(self, *args, **kwargs):
        # Numbered as it is created: one more than the chronicle's latest.
        if not self.number and self.chronicle_id is not None:
            self.number = self.next_number
        super().save(*args, **kwargs)

    @property
    def is_open(self) -> bool:
        return self.ended_at is None

    @property
    def label(self) -> str:
        """What screens call the session: its name, else "Session 5 · 24 Nov 2026"."""
        if self.name:
            return self.name
        when = f" · {self.started_at:%d %b %Y}" if self.started_at else ""
        return f"Session {self.number}{when}"

    @property
    def next_number(self) -> int:
        """The number the chronicle's next session will get (one query)."""
        latest = GameSession.objects.filter(chronicle_id=self.chronicle_id).aggregate(
            n=models.Max("number")
        )["n"]
        return (latest or 0) + 1


class Character(CleanNameMixin, models.Model):
    """A character of a chronicle, played by one user (or kept by the narrators)."""

    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="characters")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="characters",
    )
    name = models.CharField(max_length=200)
    concept = models.CharField(max_length=200, blank=True)
    health = models.PositiveSmallIntegerField(
        "health level at the start of a session",
        choices=[(level.value, level.label) for level in HealthLevel],
        default=HealthLevel.HEALTHY.value,
        help_text=(
            "Wounds that last past an evening (aggravated wounds) are set here; "
            "tonight's health level is on her presence."
        ),
    )
    notes = models.TextField(blank=True)
    # Permanent pool ratings; what is spent of them is kept per session
    # (Presence.*_spent), so a new session refreshes them.
    willpower = _pool_field("Willpower", "Spent on Willpower retests (UK Masquerade); 0: none.")
    rage = _pool_field("Rage", "Spent to pre-empt with a Gift (classic MET); 0: none.")
    gnosis = _pool_field("Gnosis", "0: none.")
    blood = _pool_field("Blood", "Spent for extra Physical Traits (UK Masquerade); 0: none.")
    # s11 clocks: a Garou heals by resting; each Mortal Wound episode leaves a
    # battle scar (seeds/000 "Healing", "Battle Scars").
    garou = models.BooleanField(
        "Garou", default=False, db_default=False, help_text="Heals one level every five minutes."
    )
    battle_scars = models.PositiveSmallIntegerField(
        default=0,
        db_default=0,
        help_text="Mortal Wound episodes: three light, two deep, then permanent injuries.",
    )
    blood_per_turn = models.PositiveSmallIntegerField(
        "generation limit: Blood per spending",
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_POOL)],
        help_text="Empty: the ruleset's limit (UK Masquerade: 3 Blood Traits a challenge).",
    )
    # --- issue 12: a sheet of Attributes and Skills (ruleset bns, seeds/002) ---
    # Unused by Trait sheets (met_classic, ukm); the admin shows them only to
    # a chronicle whose ruleset has test pools (Ruleset.test_pools).
    physical_attribute = _attribute_field("Physical")
    social_attribute = _attribute_field("Social")
    mental_attribute = _attribute_field("Mental")
    focus = _optional_choice(
        "Physical focus",
        PHYSICAL_FOCUSES,
        "Strength or Dexterity: one free combat maneuver per combat; Stamina: "
        'hard to knock out or down (seeds/002 "Physical Focuses in Combat").',
    )
    form = _optional_choice(
        "starting form",
        GAROU_FORMS,
        "Garou only: her form when a session starts (tonight's is on her presence).",
    )
    healthy_boxes = _wound_boxes_field(
        "Healthy boxes", "Damage fills the Healthy track first, then Injured, then Incapacitated."
    )
    injured_boxes = _wound_boxes_field(
        "Injured boxes", "The seed names no Healthy or Injured track; 3 each is the app's default."
    )
    incapacitated_boxes = _wound_boxes_field(
        "Incapacitated boxes",
        'seeds/002 "Pierce the Heart" names the Incapacitated wound track.',
    )
    stock_npc = models.BooleanField(
        "Stock NPC",
        default=False,
        db_default=False,
        help_text=(
            "No wound track; assists with +1 instead of a maneuver or a Dodge bonus "
            '(seeds/002 "Stock NPC Tactics").'
        ),
    )
    no_knockout = models.BooleanField(
        "cannot be knocked out",
        default=False,
        db_default=False,
        help_text='Vampires and other creatures the seed names (seeds/002 "Knock Out").',
    )
    creature = _optional_choice(
        "creature",
        CREATURES,
        "Pierce the Heart kills a mortal and stakes a vampire hit with a staking weapon "
        '(seeds/002 "Combat Maneuvers"); a vampire cannot be knocked out. '
        "Not said or other: the damage only.",
    )
    # --- issue 11 section 4: characters the narrators run (NPCs) -------------
    # A character with no player is run by the narrators; these two settings
    # apply to such a character only (docs/guide.md "Running NPCs").
    auto_answer = models.BooleanField(
        "auto-answer",
        default=False,
        db_default=False,
        help_text=(
            "With no player: Narrator answers its challenges at once "
            "(bids its best Trait, throws at random, declares its true count)."
        ),
    )
    relents = models.CharField(
        "relents (auto-answer)",
        max_length=10,
        choices=[(r.value, r.label) for r in NpcRelents],
        default=NpcRelents.NEVER.value,
        db_default=NpcRelents.NEVER.value,
        help_text="When an auto-answering NPC relents instead of bidding.",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["chronicle", "name"], name="unique_character_name")
        ]

    RELENTS_CHOICES = [(r.value, r.label) for r in NpcRelents]
    """The "relents" setting's choices, for forms."""

    POOLS = ("willpower", "rage", "gnosis", "blood")
    """The names of her pool fields, as ``challenges.rules.Pool`` values."""

    def __str__(self) -> str:
        return self.name

    @property
    def is_npc(self) -> bool:
        """Run by the narrators: no player (issue 11 section 4)."""
        return self.player_id is None

    @property
    def auto_answers(self) -> bool:
        """An NPC whose challenges the server answers by itself."""
        return self.player_id is None and self.auto_answer

    ATTRIBUTES = ("physical_attribute", "social_attribute", "mental_attribute")
    """Her Attribute fields (test-pool sheets), Physical, Social, Mental."""

    WOUND_BOXES = ("healthy_boxes", "injured_boxes", "incapacitated_boxes")
    """Her boxes per wound track (test-pool sheets), in :data:`WOUND_TRACKS` order."""

    def clean(self) -> None:
        """Clean the name; refuse one another character of the chronicle has
        (any case, any spacing: :func:`name_key`), auto-answer for a
        character with a player, a starting form for a character who is not
        Garou, and, on a test-pool sheet (``Ruleset.test_pools``), an
        Attribute outside :data:`ATTRIBUTE_RANGE` or Willpower outside
        :data:`WILLPOWER_RANGE`; on a dice-pool sheet (``Ruleset.dice_pools``)
        Willpower outside 1 to 10 (seeds/003 "Willpower")."""
        super().clean()
        if self.auto_answer and self.player_id is not None:
            raise ValidationError(
                {"auto_answer": "Auto-answer is for characters with no player (NPCs)."}
            )
        if self.form and not self.garou:
            raise ValidationError({"form": "Only a Garou has a form."})
        if self.garou and self.creature in ("mortal", "vampire"):
            raise ValidationError({"creature": "A Garou is neither a mortal nor a vampire."})
        if not self.chronicle_id:
            return
        if self.chronicle.has_test_pools:
            self._clean_test_pool_sheet()
        if self.chronicle.has_dice_pools:
            low, high = story_traits.WILLPOWER_RANGE
            if not low <= self.willpower <= high:
                raise ValidationError(
                    {"willpower": f"Willpower is rated {low} to {high} (it is {self.willpower})."}
                )
        key = name_key(self.name)
        others = Character.objects.filter(chronicle_id=self.chronicle_id).exclude(pk=self.pk)
        for other in others.values_list("name", flat=True):
            if name_key(other) == key:
                raise ValidationError({"name": f"{other} is already in this chronicle."})

    def _clean_test_pool_sheet(self) -> None:
        errors = {}
        low, high = ATTRIBUTE_RANGE
        for name in self.ATTRIBUTES:
            value = getattr(self, name)
            if not low <= value <= high:
                label = self._meta.get_field(name).verbose_name
                errors[name] = f"{label} is rated {low} to {high} (it is {value})."
        low, high = WILLPOWER_RANGE
        if not low <= self.willpower <= high:
            errors["willpower"] = f"Willpower is rated {low} to {high} (it is {self.willpower})."
        if errors:
            raise ValidationError(errors)


CATEGORY_CHOICES = [(c.value, c.value.title()) for c in Category]


class Trait(CleanNameMixin, models.Model):
    """An adjective on a sheet (Physical *Ferocious*), held ``count`` times (*Quick* ×3).

    Negative Traits are flaws an opponent can name; they are never bid.
    """

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="traits")
    name = models.CharField(max_length=100)
    category = models.CharField(max_length=10, choices=CATEGORY_CHOICES)
    count = models.PositiveSmallIntegerField(
        "times held",
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_TRAIT_COUNT)],
        help_text=f"Quick ×3 is held 3 times: 1 to {MAX_TRAIT_COUNT}.",
    )
    negative = models.BooleanField(default=False)
    stamina = models.BooleanField(
        "Stamina-based",
        default=False,
        db_default=False,
        help_text="Stamina-based (a surprised defender may bid it); Physical Traits only.",
    )

    class Meta:
        ordering = ["category", "negative", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "name", "category", "negative"], name="unique_trait"
            ),
            models.CheckConstraint(condition=Q(count__gte=1), name="trait_count_at_least_1"),
            models.CheckConstraint(
                condition=Q(category__in=[c.value for c in Category]),
                name="trait_category_valid",
            ),
        ]

    def __str__(self) -> str:
        suffix = f" ×{self.count}" if self.count > 1 else ""
        return f"{self.name}{suffix}"

    def clean(self) -> None:
        """Clean the name; refuse a Stamina-based Trait outside Physical or a
        Negative one."""
        super().clean()
        if self.stamina and (self.category != Category.PHYSICAL.value or self.negative):
            raise ValidationError(
                {"stamina": "Only Physical Traits (not Negative ones) are Stamina-based."}
            )


class Ability(CleanNameMixin, models.Model):
    """A skill (*Brawl*, *Occult*) with a rating; never bid or lost."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="abilities")
    name = models.CharField(max_length=100)
    rating = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(MAX_ABILITY_RATING)]
    )

    class Meta:
        verbose_name_plural = "abilities"
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="unique_ability"),
            models.CheckConstraint(condition=Q(rating__gte=1), name="ability_rating_at_least_1"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.rating}" if self.rating > 1 else self.name

    def clean(self) -> None:
        """Clean the name; on a test-pool sheet (``Ruleset.test_pools``: a
        Skill) refuse a rating above :data:`SKILL_RANGE` (a Skill rated 0 is
        left off the sheet)."""
        super().clean()
        # The admin's inline gives a new sheet's Skills their unsaved character.
        character = self.character if Ability.character.is_cached(self) else None
        if character is None and self.character_id is not None:
            character = self.character
        if character is None or character.chronicle_id is None or self.rating is None:
            return
        if character.chronicle.has_test_pools and self.rating > SKILL_RANGE[1]:
            raise ValidationError(
                {
                    "rating": f"Skills are rated {SKILL_RANGE[0]} to {SKILL_RANGE[1]} "
                    "(a Skill rated 0 is left off the sheet)."
                }
            )


class Discipline(CleanNameMixin, models.Model):
    """A Discipline (*Dominate*, *Celerity*) with a rating; never bid or lost.
    Named for a Discipline retest (seeds/004 "Challenge Re-Tests")."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="disciplines")
    name = models.CharField(max_length=100)
    rating = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(MAX_ABILITY_RATING)]
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="unique_discipline"),
            models.CheckConstraint(condition=Q(rating__gte=1), name="discipline_rating_at_least_1"),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.rating}" if self.rating > 1 else self.name


class Weapon(CleanNameMixin, models.Model):
    """A weapon of a sheet: ``bonus`` Traits that count in a tie only with the
    Ability ``ability`` (blank: none needed); ``ranged``: an unarmed defender
    cannot counterattack it. seeds/004 "Weapons / Ranged Combat"."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="weapons")
    name = models.CharField(max_length=100)
    bonus = models.PositiveSmallIntegerField(
        "bonus Traits",
        default=0,
        validators=[MinValueValidator(0), MaxValueValidator(MAX_WEAPON_BONUS)],
    )
    ability = models.CharField(
        max_length=100,
        blank=True,
        help_text='The Ability its bonus needs, e.g. "Melee" or "Firearms"; blank: none.',
    )
    ranged = models.BooleanField(default=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="unique_weapon"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (+{self.bonus})" if self.bonus else self.name

    def save(self, *args, **kwargs) -> None:
        self.ability = clean_name(self.ability)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        super().clean()
        self.ability = clean_name(self.ability)


# --- issue 13: a sheet of dots (ruleset storytelling, seeds/003) ---------------
# Ranges the seed gives (Attributes and Skills 1 to 5 dots, Willpower and
# Wisdom 1 to 10) come from challenges.rules.storytelling.traits; the seed
# gives none for Health, Defense, Initiative, Speed, Size and armor, so these
# are the app's guards against typos (docs/rules.md "storytelling sheets").
STORY_HEALTH_RANGE = (1, 15)
STORY_DEFENSE_RANGE = (0, 10)
STORY_INITIATIVE_RANGE = (0, 15)
STORY_SPEED_RANGE = (0, 30)
STORY_SIZE_RANGE = (1, 10)
STORY_ARMOR_RANGE = (0, 10)
MERIT_RANGE = (1, 5)
#: Skill names for a select (seeds/003 "Skills"), in sheet order.
SKILL_CHOICES = [(name, name) for name in story_traits.SKILLS]


def _dots_field(label: str) -> models.PositiveSmallIntegerField:
    low, high = story_traits.DOTS_RANGE
    return _rating_field(label, f"{low} to {high} dots.", low, low, high)


def _story_field(label: str, default: int, limits: tuple[int, int], help_text: str):
    low, high = limits
    return _rating_field(label, f"{help_text} {low} to {high}.".strip(), default, low, high)


class StorySheet(models.Model):
    """The dots of a character of a chronicle with dice pools (``storytelling``,
    seeds/003 "Traits"): her nine Attributes (1–5 dots, named as in
    ``challenges.rules.storytelling.traits.ATTRIBUTES``, one field each in
    lower case), Health dots (her boxes), Defense, Initiative modifier, Speed
    (yards per turn), Size, Wisdom (1–10) and armor. Her Willpower is
    ``Character.willpower`` (1–10), her Skills :class:`StorySkill` rows, her
    Merits :class:`Merit` rows; tonight's Willpower spent and health track are
    on her ``Presence`` (``willpower_spent``, ``Presence.TRACK``).

    The seed has no Size rule: Health, Defense and Initiative are stated on
    the sheet, not worked out from Size or Attributes (RULES.md)."""

    character = models.OneToOneField(
        Character, on_delete=models.CASCADE, primary_key=True, related_name="story_sheet"
    )
    intelligence = _dots_field("Intelligence")
    wits = _dots_field("Wits")
    resolve = _dots_field("Resolve")
    strength = _dots_field("Strength")
    dexterity = _dots_field("Dexterity")
    stamina = _dots_field("Stamina")
    presence = _dots_field("Presence")
    manipulation = _dots_field("Manipulation")
    composure = _dots_field("Composure")
    health = _story_field(
        "Health dots", 7, STORY_HEALTH_RANGE, "Her Health boxes; damage marks them left to right."
    )
    defense = _story_field(
        "Defense", 2, STORY_DEFENSE_RANGE, "Subtracted from close-combat and thrown attacks."
    )
    initiative = _story_field(
        "Initiative modifier", 4, STORY_INITIATIVE_RANGE, "Added to one d10 for Initiative."
    )
    speed = _story_field("Speed", 10, STORY_SPEED_RANGE, "Yards a turn with an action.")
    size = _story_field("Size", 5, STORY_SIZE_RANGE, "For reference: the rules here use none.")
    wisdom = _rating_field("Wisdom", "1 to 10.", 7, *story_traits.WISDOM_RANGE)
    armor = _story_field("armor", 0, STORY_ARMOR_RANGE, "Subtracted from attacks on her.")

    class Meta:
        verbose_name = "Storytelling sheet"

    ATTRIBUTE_FIELDS = tuple(name.lower() for name in story_traits.ATTRIBUTES)
    """Her Attribute fields, in sheet order (Mental, Physical, Social)."""

    def __str__(self) -> str:
        return f"sheet of {self.character}"

    def dots(self, attribute: str) -> int:
        """Her dots in ``attribute`` ("Strength"). KeyError for an unknown name."""
        if attribute not in story_traits.ATTRIBUTES:
            raise KeyError(attribute)
        return getattr(self, attribute.lower())


def split_specialties(text: str) -> list[str]:
    """The specialties of a comma-separated ``text`` ("Occult, Ghosts"),
    each name cleaned (:func:`clean_name`), empty ones dropped."""
    return [name for name in (clean_name(part) for part in text.split(",")) if name]


class StorySkill(models.Model):
    """One Skill of a dice-pool sheet (seeds/003 "Skills"): ``name`` one of
    ``challenges.rules.storytelling.traits.SKILLS``, ``dots`` 0 to 5 (0: no
    Skill, rolled unskilled), ``specialties`` comma-separated ("History,
    Law"; each gives +1 die when it applies), only on a Skill with dots."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="story_skills")
    name = models.CharField(max_length=20, choices=SKILL_CHOICES)
    dots = models.PositiveSmallIntegerField(
        default=1,
        validators=[
            MinValueValidator(story_traits.SKILL_RANGE[0]),
            MaxValueValidator(story_traits.SKILL_RANGE[1]),
        ],
    )
    specialties = models.CharField(
        max_length=200, blank=True, help_text='Comma-separated, e.g. "History, Law".'
    )

    class Meta:
        verbose_name = "Skill"
        ordering = ["character", "name"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="unique_story_skill"),
            models.CheckConstraint(
                condition=Q(dots__lte=story_traits.SKILL_RANGE[1]),
                name="story_skill_dots_at_most_5",
            ),
        ]

    def __str__(self) -> str:
        specialties = f" ({self.specialties})" if self.specialties else ""
        return f"{self.name} {self.dots}{specialties}"

    def save(self, *args, **kwargs) -> None:
        self.specialties = ", ".join(split_specialties(self.specialties))
        super().save(*args, **kwargs)

    @property
    def specialty_list(self) -> list[str]:
        """Her specialties in this Skill, as names."""
        return split_specialties(self.specialties)

    def clean(self) -> None:
        """Refuse a name that is no Skill, a specialty on a Skill with no dots
        and a specialty named twice; tidy the specialties ("History, Law")."""
        super().clean()
        if self.name not in story_traits.SKILLS:
            raise ValidationError({"name": f"There is no Skill called {self.name!r}."})
        names = split_specialties(self.specialties)
        keys = [name_key(n) for n in names]
        if len(set(keys)) < len(keys):
            raise ValidationError({"specialties": "A specialty is named twice."})
        if names and not self.dots:
            raise ValidationError(
                {"specialties": "Only a Skill with dots has specialties (this one has none)."}
            )
        self.specialties = ", ".join(names)


class Merit(CleanNameMixin, models.Model):
    """A Merit of a dice-pool sheet (seeds/003 "Merits": *Contacts*,
    *Resources*, *Striking Looks*): 1 to 5 dots and a short note of its
    effect (the seed explains each in the character's description)."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="merits")
    name = models.CharField(max_length=100)
    dots = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(MERIT_RANGE[0]), MaxValueValidator(MERIT_RANGE[1])]
    )
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["character", "name"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="unique_merit"),
            models.CheckConstraint(
                condition=Q(dots__gte=MERIT_RANGE[0], dots__lte=MERIT_RANGE[1]),
                name="merit_dots_1_to_5",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.dots}"


class Presence(models.Model):
    """A character at a session, with her health level for the evening and her
    ``status``: present, on a break (out of character: nobody can challenge
    her, seeds/000 "Time") or absent (gone: off the roster and the opponent
    lists until her phone opens again)."""

    class Status(models.TextChoices):
        PRESENT = "present", "present"
        BREAK = "break", "on a break"
        ABSENT = "absent", "absent"

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="presences")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="presences")
    health = models.PositiveSmallIntegerField(
        "health level tonight",
        choices=[(level.value, level.label) for level in HealthLevel],
        default=HealthLevel.HEALTHY.value,
    )
    arrived_at = models.DateTimeField(auto_now_add=True)
    # db_default too: rows written in plain SQL (a bulk import) arrive present.
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PRESENT, db_default=Status.PRESENT
    )
    # Pools spent tonight (a new session is a new Presence: pools refresh); db
    # defaults like status, for rows written in plain SQL.
    willpower_spent = models.PositiveSmallIntegerField("Willpower spent", default=0, db_default=0)
    rage_spent = models.PositiveSmallIntegerField("Rage spent", default=0, db_default=0)
    gnosis_spent = models.PositiveSmallIntegerField("Gnosis spent", default=0, db_default=0)
    blood_spent = models.PositiveSmallIntegerField("Blood spent", default=0, db_default=0)
    blood_traits = models.PositiveSmallIntegerField(
        "active Blood Traits",
        default=0,
        db_default=0,
        help_text="Physical Traits bought with Blood, active until the time below (ukm).",
    )
    blood_traits_until = models.DateTimeField("Blood Traits active until", null=True, blank=True)
    # s11 clocks (challenges.rules.clocks.Clock, challenges.services.clocks):
    # instants are *play* instants, epoch seconds minus the session's Time out.
    clock_start = models.FloatField(
        "level since (play instant)", null=True, blank=True, help_text="Empty: no clock yet."
    )
    clock_due = models.FloatField(
        "next clock effect (play instant)", null=True, blank=True, help_text="Empty: none."
    )
    clock_lost = models.PositiveSmallIntegerField(
        "Physical Traits lost to the clock", default=0, db_default=0
    )
    clock_awake = models.BooleanField("awake (Incapacitated)", default=False, db_default=False)
    aid_given = models.BooleanField("medical aid given", default=False, db_default=False)
    rest_start = models.FloatField(
        "resting since (play instant)", null=True, blank=True, help_text="Empty: not resting."
    )
    form = _optional_choice("Garou form", GAROU_FORMS)
    aggravated = models.PositiveSmallIntegerField(
        "aggravated levels", default=0, db_default=0, help_text="Heal one per night's rest."
    )
    # s12: Pierce the Heart killed or staked her tonight (seeds/002 "Combat
    # Maneuvers"); she is shown so on the phones and the dashboard.
    fate = _optional_choice(
        "fate tonight",
        FATES,
        "Set by a successful Pierce the Heart; a narrator clears it (the stake pulled out).",
    )
    # issue 12: test-pool sheets (bns, seeds/002) take damage in points, which
    # fill her wound tracks in order (Character.WOUND_BOXES).
    damage = models.PositiveSmallIntegerField(
        "damage tonight",
        default=0,
        db_default=0,
        help_text=(
            "Test-pool sheets: points of damage taken this session; they fill the "
            "Healthy track, then Injured, then Incapacitated."
        ),
    )

    # issue 13: a dice-pool sheet's health track tonight (storytelling,
    # seeds/003 "Marking Damage"): boxes marked with each type of damage.
    # The seed keeps aggravated leftmost, then lethal, then bashing, so three
    # counts are the whole track (StorySheet.health boxes, filled left to
    # right: "*XX/" is 1 aggravated, 2 lethal, 1 bashing); their sum never
    # exceeds the boxes (PresenceForm, and the engine's track).
    track_aggravated = models.PositiveSmallIntegerField(
        "aggravated boxes", default=0, db_default=0, help_text="Marked * (leftmost)."
    )
    track_lethal = models.PositiveSmallIntegerField(
        "lethal boxes", default=0, db_default=0, help_text="Marked X (after aggravated)."
    )
    track_bashing = models.PositiveSmallIntegerField(
        "bashing boxes", default=0, db_default=0, help_text="Marked / (rightmost)."
    )

    # issue 13: natural healing of the track (seeds/003 "Healing"): the play
    # instant (epoch seconds less the session's Time out) the rightmost wound
    # started healing, and when its point heals (indexed, like clock_due).
    heal_start = models.FloatField(
        "healing since (play instant)", null=True, blank=True, help_text="Empty: nothing to heal."
    )
    heal_due = models.FloatField(
        "next point heals at (play instant)", null=True, blank=True, help_text="Empty: none."
    )

    TRACK = ("track_aggravated", "track_lethal", "track_bashing")
    """Her health track's fields (dice-pool sheets), in the order the boxes
    fill from the left: aggravated, lethal, bashing."""

    class Meta:
        verbose_name_plural = "presences"
        constraints = [
            models.UniqueConstraint(fields=["session", "character"], name="unique_presence")
        ]
        indexes = [
            models.Index(fields=["session", "clock_due"], name="presence_clock_due"),
            models.Index(fields=["session", "heal_due"], name="presence_heal_due"),
        ]

    def __str__(self) -> str:
        return f"{self.character} at {self.session}"


class Immunity(models.Model):
    """A defender's immunity, won by a Willpower retest that fended off the
    attack: ``character`` is immune to ``attacker``'s use of ``power`` until
    ``until`` (ten minutes, ukm). seeds/004 "Retrying The Test In An
    Ability-Based Challenge"."""

    session = models.ForeignKey(GameSession, on_delete=models.CASCADE, related_name="immunities")
    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="immunities", help_text="Who is immune."
    )
    attacker = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    power = models.CharField(max_length=100)
    until = models.DateTimeField()

    class Meta:
        verbose_name_plural = "immunities"
        ordering = ["-until"]
        indexes = [models.Index(fields=["session", "character", "until"])]

    def __str__(self) -> str:
        return f"{self.character} immune to {self.attacker}'s {self.power}"


class JoinLinkRevocation(models.Model):
    """When a narrator last revoked a user's one-tap join links: every link made
    before ``revoked_at`` is refused at the join view (``characters.backends``)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="join_link_revocation"
    )
    revoked_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"join links of {self.user} revoked at {self.revoked_at:%Y-%m-%d %H:%M:%S}"
