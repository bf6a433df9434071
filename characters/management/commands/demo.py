"""``manage.py demo [--password PW]``: the demo chronicles of the rules' examples.

Creates (once) the users admin and narrator, the players of the examples in
``seeds/000`` (Helen, Grady, Camille, Ray, Connor, Sir Godfrey, Steps-in-Gum),
their sheets (with Rage, Gnosis, Willpower, weapons and Stamina-based
Traits), the "Demo Chronicle" (``met_classic``) with an open session and
every demo character present; and the "UK Masquerade demo" (``ukm``, seeds/004)
with three Kindred (Blood, Willpower, Disciplines, weapons, a generation limit)
and their players, its own session open. Each chronicle also has an
auto-answering NPC with no player (issue 11 section 4): the spirit "Pattern
Spider" (``met_classic``) and the ghoul "Bertram" (``ukm``). Issue 12 adds
"By Night demo" (``bns``, seeds/002): sheets of Attributes and Skills for a
Strength-focused brawler, a Dexterity-focused gunslinger, a Garou in Crinos
with Rage, a Mentally strong mystic and a Stock NPC thug, its own session
open. Issue 13 adds "Awakening demo" (``storytelling``, seeds/003): four
mages of a Mage: The Awakening cast on sheets of dots (Attributes, Skills
with specialties, Merits, Willpower, Health, Defense, Initiative, Speed,
Size, Wisdom, armor), one with the seed's seven Health dots, its own
session open. Running it again creates nothing twice and leaves edited sheets and
existing passwords alone.
"""

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand
from django.db import transaction
from django.db.models import Q

from challenges.rules import Category
from characters.models import (
    Ability,
    Character,
    Chronicle,
    Discipline,
    Merit,
    Presence,
    StorySheet,
    StorySkill,
    Trait,
    Weapon,
)
from characters.services import presence_join, session_start

CHRONICLE = "Demo Chronicle"
SESSION = "Demo evening"
UKM_CHRONICLE = "UK Masquerade demo"
UKM_SESSION = "Elysium"
BNS_CHRONICLE = "By Night demo"
BNS_SESSION = "The warehouse"
STORY_CHRONICLE = "Awakening demo"
STORY_SESSION = "The Athenaeum"

SHEET_MODELS = [
    "character",
    "trait",
    "ability",
    "discipline",
    "weapon",
    "presence",
    "storysheet",
    "storyskill",
    "merit",
]

# Physical Traits a surprised defender may bid (seeds/004 "Surprise").
STAMINA_TRAITS = {"Resilient", "Tough", "Enduring", "Tireless", "Stalwart", "Rugged"}

P, S, M = Category.PHYSICAL, Category.SOCIAL, Category.MENTAL


@dataclass(frozen=True)
class DemoUser:
    """A demo login: ``username`` and the name shown in the app."""

    username: str
    first_name: str
    superuser: bool = False
    staff: bool = False


@dataclass(frozen=True)
class DemoSheet:
    """A demo character: Traits as (name, category, count, negative; Physical
    ones named in STAMINA_TRAITS are Stamina-based), Abilities and Disciplines
    as (name, rating), ``pools`` as {Character pool field: rating}, weapons as
    (name, bonus, ability, ranged), ``blood_per_turn`` her generation limit."""

    name: str
    player: str
    concept: str
    traits: list[tuple[str, Category, int, bool]]
    abilities: list[tuple[str, int]] = field(default_factory=list)
    pools: dict[str, int] = field(default_factory=dict)
    disciplines: list[tuple[str, int]] = field(default_factory=list)
    weapons: list[tuple[str, int, str, bool]] = field(default_factory=list)
    blood_per_turn: int | None = None
    # Issue 11 section 4: ``player`` "" is an NPC run by the narrators; with
    # ``auto_answer`` the server answers its challenges.
    auto_answer: bool = False


USERS = [
    DemoUser("admin", "Admin", superuser=True, staff=True),
    DemoUser("narrator", "Narrator", staff=True),
    DemoUser("helen", "Helen"),
    DemoUser("grady", "Grady"),
    DemoUser("camille", "Camille"),
    DemoUser("ray", "Ray"),
    DemoUser("connor", "Connor"),
    DemoUser("godfrey", "Godfrey"),
    DemoUser("steps", "Steps"),
    DemoUser("lucius", "Lucius"),
    DemoUser("mara", "Mara"),
    DemoUser("tobias", "Tobias"),
    DemoUser("rosa", "Rosa"),
    DemoUser("jack", "Jack"),
    DemoUser("rips", "Rips"),
    DemoUser("vesper", "Vesper"),
    DemoUser("iris", "Iris"),
    DemoUser("marcus", "Marcus"),
    DemoUser("seraphine", "Seraphine"),
    DemoUser("nico", "Nico"),
]

# seeds/000: Helen (7 Physical) against Grady (5 Physical, Resilient); Ray
# (Commanding, Persuasive) against Camille (Alluring, not Condescending); Sir
# Godfrey (15 Physical, Relentless) against Connor (5 Physical); Steps-in-Gum
# (6 Social) against a spirit of difficulty 4.
SHEETS = [
    DemoSheet(
        "Helen",
        "helen",
        "Get of Fenris warrior",
        [
            ("Ferocious", P, 2, False),
            ("Quick", P, 2, False),
            ("Brawny", P, 1, False),
            ("Tireless", P, 1, False),
            ("Resilient", P, 1, False),
            ("Intimidating", S, 2, False),
            ("Commanding", S, 1, False),
            ("Cunning", M, 1, False),
            ("Alert", M, 1, False),
            ("Clumsy", P, 1, True),
        ],
        [("Brawl", 2), ("Dodge", 1)],
        pools={"rage": 4, "gnosis": 2, "willpower": 3},
        weapons=[("Klaive", 2, "Melee", False)],
    ),
    DemoSheet(
        "Grady",
        "grady",
        "Bone Gnawer scrounger",
        [
            ("Resilient", P, 1, False),
            ("Brawny", P, 1, False),
            ("Quick", P, 2, False),
            ("Tough", P, 1, False),
            ("Friendly", S, 1, False),
            ("Diplomatic", S, 1, False),
            ("Alert", M, 1, False),
            ("Observant", M, 1, False),
            ("Repugnant", S, 1, True),
        ],
        [("Brawl", 1), ("Streetwise", 2)],
        pools={"rage": 2, "gnosis": 3, "willpower": 4},
        weapons=[("Crowbar", 1, "Melee", False)],
    ),
    DemoSheet(
        "Camille",
        "camille",
        "Glass Walker socialite",
        [
            ("Alluring", S, 2, False),
            ("Charismatic", S, 1, False),
            ("Dignified", S, 1, False),
            ("Elegant", S, 1, False),
            ("Graceful", P, 1, False),
            ("Nimble", P, 1, False),
            ("Quick", P, 1, False),
            ("Clever", M, 1, False),
            ("Insightful", M, 2, False),
            ("Naive", S, 1, True),
        ],
        [("Etiquette", 2), ("Computer", 1)],
        pools={"rage": 2, "gnosis": 4, "willpower": 5},
        weapons=[("Pistol", 2, "Firearms", True)],
    ),
    DemoSheet(
        "Ray",
        "ray",
        "Shadow Lord schemer",
        [
            ("Commanding", S, 1, False),
            ("Persuasive", S, 1, False),
            ("Intimidating", S, 2, False),
            ("Wiry", P, 1, False),
            ("Quick", P, 1, False),
            ("Tough", P, 1, False),
            ("Cunning", M, 2, False),
            ("Condescending", S, 1, True),
        ],
        [("Leadership", 2), ("Intimidation", 1)],
        pools={"rage": 3, "gnosis": 3, "willpower": 5},
    ),
    DemoSheet(
        "Connor",
        "connor",
        "Black Spiral Dancer",
        [
            ("Brawny", P, 1, False),
            ("Ferocious", P, 1, False),
            ("Quick", P, 1, False),
            ("Tough", P, 1, False),
            ("Wiry", P, 1, False),
            ("Intimidating", S, 1, False),
            ("Cunning", M, 1, False),
            ("Bestial", S, 1, True),
        ],
        [("Brawl", 2)],
        pools={"rage": 5, "gnosis": 2, "willpower": 3},
    ),
    DemoSheet(
        "Sir Godfrey",
        "godfrey",
        "Silver Fang knight",
        [
            ("Relentless", P, 1, False),
            ("Ferocious", P, 3, False),
            ("Brawny", P, 3, False),
            ("Quick", P, 2, False),
            ("Tireless", P, 2, False),
            ("Tough", P, 2, False),
            ("Resilient", P, 1, False),
            ("Wiry", P, 1, False),
            ("Commanding", S, 2, False),
            ("Dignified", S, 2, False),
            ("Disciplined", M, 2, False),
            ("Alert", M, 1, False),
            ("Arrogant", S, 1, True),
        ],
        [("Brawl", 3), ("Melee", 2), ("Leadership", 1)],
        pools={"rage": 5, "gnosis": 3, "willpower": 6},
        weapons=[("Silver sword", 3, "Melee", False)],
    ),
    DemoSheet(
        "Steps-in-Gum",
        "steps",
        "Uktena mystic",
        [
            ("Persuasive", S, 2, False),
            ("Friendly", S, 1, False),
            ("Genial", S, 1, False),
            ("Diplomatic", S, 1, False),
            ("Eloquent", S, 1, False),
            ("Nimble", P, 1, False),
            ("Tireless", P, 2, False),
            ("Wise", M, 2, False),
            ("Insightful", M, 2, False),
            ("Shy", S, 1, True),
        ],
        [("Occult", 2), ("Enigmas", 1)],
        pools={"rage": 1, "gnosis": 6, "willpower": 5},
    ),
    # Issue 11 section 4: an auto-answering NPC (no player) players can challenge.
    DemoSheet(
        "Pattern Spider",
        "",
        "A Weaver spirit, run by the narrators",
        [
            ("Quick", P, 2, False),
            ("Tireless", P, 1, False),
            ("Resilient", P, 1, False),
            ("Calm", S, 2, False),
            ("Dignified", S, 1, False),
            ("Cunning", M, 2, False),
            ("Methodical", M, 2, False),
            ("Predictable", M, 1, True),
        ],
        pools={"gnosis": 4},
        auto_answer=True,
    ),
]

# seeds/004 (ukm): Kindred with Blood, a generation limit, Willpower retests,
# Disciplines (Dominate, Celerity, Fortitude) and weapons that need their Ability.
UKM_SHEETS = [
    DemoSheet(
        "Lucius",
        "lucius",
        "Ventrue primogen",
        [
            ("Commanding", S, 2, False),
            ("Persuasive", S, 2, False),
            ("Dignified", S, 1, False),
            ("Resilient", P, 2, False),
            ("Stalwart", P, 1, False),
            ("Cunning", M, 2, False),
            ("Disciplined", M, 1, False),
            ("Arrogant", S, 1, True),
        ],
        [("Leadership", 3), ("Subterfuge", 2), ("Melee", 1)],
        pools={"blood": 10, "willpower": 6},
        disciplines=[("Dominate", 3), ("Fortitude", 2), ("Presence", 1)],
        weapons=[("Cane sword", 2, "Melee", False)],
        blood_per_turn=3,
    ),
    DemoSheet(
        "Mara",
        "mara",
        "Brujah anarch",
        [
            ("Ferocious", P, 2, False),
            ("Quick", P, 2, False),
            ("Brawny", P, 1, False),
            ("Tough", P, 1, False),
            ("Rugged", P, 1, False),
            ("Intimidating", S, 2, False),
            ("Alert", M, 1, False),
            ("Clumsy", P, 1, True),
        ],
        [("Brawl", 3), ("Firearms", 2), ("Dodge", 1)],
        pools={"blood": 12, "willpower": 4},
        disciplines=[("Celerity", 2), ("Potence", 2)],
        weapons=[("Shotgun", 3, "Firearms", True), ("Knuckledusters", 1, "", False)],
        blood_per_turn=2,
    ),
    DemoSheet(
        "Tobias",
        "tobias",
        "Malkavian seer",
        [
            ("Insightful", M, 2, False),
            ("Intuitive", M, 2, False),
            ("Wise", M, 1, False),
            ("Enduring", P, 1, False),
            ("Nimble", P, 1, False),
            ("Charming", S, 1, False),
            ("Oblivious", M, 1, True),
        ],
        [("Awareness", 2), ("Occult", 2)],
        pools={"blood": 10, "willpower": 5},
        disciplines=[("Auspex", 3), ("Dominate", 1)],
        blood_per_turn=1,
    ),
    # Issue 11 section 4: an auto-answering NPC (no player) players can challenge.
    DemoSheet(
        "Bertram",
        "",
        "A ghoul of the Prince, run by the narrators",
        [
            ("Brawny", P, 2, False),
            ("Tough", P, 1, False),
            ("Quick", P, 1, False),
            ("Loyal", S, 2, False),
            ("Dignified", S, 1, False),
            ("Alert", M, 2, False),
            ("Patient", M, 1, False),
            ("Submissive", S, 1, True),
        ],
        [("Brawl", 2), ("Melee", 1)],
        pools={"blood": 2, "willpower": 2},
        auto_answer=True,
    ),
]


@dataclass(frozen=True)
class DemoAttributeSheet:
    """A demo character of a test-pool chronicle (``bns``, seeds/002):
    Attributes (Physical, Social, Mental), Skills as (name, rating), and
    ``sheet``: other Character fields (willpower, rage, garou, form, focus,
    stock_npc, no_knockout); ``player`` "" is an NPC."""

    name: str
    player: str
    concept: str
    attributes: tuple[int, int, int]
    skills: list[tuple[str, int]]
    sheet: dict = field(default_factory=dict)
    # Tonight's presence (her form, for a Garou who starts the evening changed).
    form_tonight: str = ""


# seeds/002: test pools are an Attribute plus a Skill (Physical + Brawl) or
# current Willpower (Mental + Willpower); a Physical focus gives free
# maneuvers; Stock NPCs assist with +1 and have no wound track; vampires
# cannot be knocked out.
BNS_SHEETS = [
    DemoAttributeSheet(
        "Rosa",
        "rosa",
        "Bare-knuckle brawler, Strength-focused (free Grapple or Knock Down)",
        (7, 3, 3),
        [("Brawl", 4), ("Dodge", 3), ("Intimidation", 2)],
        {"willpower": 5, "focus": "strength"},
    ),
    DemoAttributeSheet(
        "Jack",
        "jack",
        "Gunslinger, Dexterity-focused (free Quick Draw or Burst of Speed)",
        (6, 4, 4),
        [("Firearms", 4), ("Dodge", 2), ("Streetwise", 2)],
        {"willpower": 5, "focus": "dexterity"},
    ),
    DemoAttributeSheet(
        "Rips-the-Dark",
        "rips",
        "Get of Fenris Ahroun, in Crinos with Rage to spend",
        (9, 2, 4),
        [("Brawl", 3), ("Dodge", 2), ("Survival", 2)],
        {"willpower": 4, "rage": 5, "garou": True, "form": "homid", "focus": "stamina"},
        form_tonight="crinos",
    ),
    DemoAttributeSheet(
        "Sister Vesper",
        "vesper",
        "Tremere mystic: Mental attacks, Social and Mental defence with Willpower",
        (3, 6, 9),
        [("Occult", 4), ("Awareness", 3), ("Dodge", 1)],
        {"willpower": 8, "no_knockout": True},
    ),
    DemoAttributeSheet(
        "Warehouse thug",
        "",
        "A Stock NPC run by the narrators: +1 when he assists",
        (5, 1, 2),
        [("Brawl", 2), ("Melee", 1)],
        {"stock_npc": True},
    ),
]


@dataclass(frozen=True)
class DemoStorySheet:
    """A demo character of a dice-pool chronicle (``storytelling``,
    seeds/003): ``attributes`` as nine dots in ATTRIBUTES order (Intelligence,
    Wits, Resolve, Strength, Dexterity, Stamina, Presence, Manipulation,
    Composure), Skills as (name, dots, specialties), Merits as (name, dots,
    note), ``willpower`` (1–10) and ``sheet``: the other StorySheet fields
    (health, defense, initiative, speed, size, wisdom, armor)."""

    name: str
    player: str
    concept: str
    attributes: tuple[int, int, int, int, int, int, int, int, int]
    skills: list[tuple[str, int, str]]
    merits: list[tuple[str, int, str]]
    willpower: int
    sheet: dict = field(default_factory=dict)


# seeds/003: "seven Health dots" (its example of marking damage), the Merits
# it names (Contacts, Resources, Striking Looks), Skills with a Specialty in
# parentheses, Defense and Initiative modifier, Speed, Wisdom, armour.
STORY_SHEETS = [
    DemoStorySheet(
        "Iris Vale",
        "iris",
        "Acanthus scholar of the occult; seven Health dots, as the seed's example",
        (3, 3, 2, 1, 2, 2, 2, 2, 3),
        [
            ("Academics", 3, "History"),
            ("Occult", 3, "Ghosts, Tarot"),
            ("Investigation", 2, ""),
            ("Empathy", 2, ""),
            ("Stealth", 1, ""),
        ],
        [("Library", 2, "Rare occult texts"), ("Contacts", 1, "Antiquarians")],
        5,
        {"health": 7, "defense": 2, "initiative": 5, "speed": 8, "wisdom": 7},
    ),
    DemoStorySheet(
        "Marcus Hale",
        "marcus",
        "Obrimos ex-detective: Strength + Brawl, a pistol, a vest",
        (2, 3, 3, 3, 3, 3, 2, 2, 2),
        [
            ("Brawl", 3, "Grappling"),
            ("Firearms", 3, "Pistols"),
            ("Athletics", 2, ""),
            ("Investigation", 2, "Crime scenes"),
            ("Intimidation", 2, ""),
            ("Streetwise", 2, ""),
        ],
        [("Contacts", 2, "The police"), ("Fighting Style: Boxing", 2, "")],
        5,
        {"health": 8, "defense": 3, "initiative": 5, "speed": 11, "wisdom": 6, "armor": 1},
    ),
    DemoStorySheet(
        "Seraphine",
        "seraphine",
        "Mastigos socialite: Presence and Persuasion, money and looks",
        (2, 2, 2, 2, 2, 2, 4, 3, 3),
        [
            ("Persuasion", 3, "Seduction"),
            ("Socialize", 3, "High society"),
            ("Subterfuge", 2, ""),
            ("Expression", 2, ""),
            ("Politics", 1, ""),
        ],
        [("Striking Looks", 2, "Turns heads"), ("Resources", 3, "")],
        5,
        {"health": 7, "defense": 2, "initiative": 5, "speed": 9, "wisdom": 7},
    ),
    DemoStorySheet(
        "Nico Reyes",
        "nico",
        "Moros thief: quick hands, locks and knives",
        (2, 3, 2, 2, 4, 2, 2, 3, 2),
        [
            ("Larceny", 3, "Locks"),
            ("Stealth", 3, ""),
            ("Weaponry", 2, "Knives"),
            ("Drive", 2, ""),
            ("Computer", 2, "Hacking"),
            ("Streetwise", 1, ""),
        ],
        [("Fast Reflexes", 2, "+2 Initiative (counted in it)"), ("Fleet of Foot", 1, "")],
        4,
        {"health": 7, "defense": 3, "initiative": 8, "speed": 12, "wisdom": 6},
    ),
]


class Command(BaseCommand):
    help = (
        "Create the demo chronicle, its users, characters and open session. "
        "Idempotent: a second run creates nothing and keeps edits."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--password",
            help="Set this password for every demo user. Without it, new users get an "
            "unusable password (they log in by one-tap link) and others keep theirs.",
        )

    @transaction.atomic
    def handle(self, *args, password: str | None = None, **options):
        users, new_users = ensure_users(password)
        if password:
            passwords = "password set for all"
        elif new_users:
            passwords = "new users log in by one-tap link"
        else:
            passwords = "passwords unchanged"
        for name, ruleset, ensure, sheets, session_name in (
            (CHRONICLE, Chronicle.Ruleset.MET_CLASSIC, ensure_characters, SHEETS, SESSION),
            (UKM_CHRONICLE, Chronicle.Ruleset.UKM, ensure_characters, UKM_SHEETS, UKM_SESSION),
            (
                BNS_CHRONICLE,
                Chronicle.Ruleset.BNS,
                ensure_attribute_characters,
                BNS_SHEETS,
                BNS_SESSION,
            ),
            (
                STORY_CHRONICLE,
                Chronicle.Ruleset.STORYTELLING,
                ensure_story_characters,
                STORY_SHEETS,
                STORY_SESSION,
            ),
        ):
            chronicle, _ = Chronicle.objects.get_or_create(name=name, defaults={"ruleset": ruleset})
            chronicle.narrators.add(users["narrator"])
            characters, new_characters = ensure(chronicle, users, sheets)
            session = chronicle.open_session() or session_start(
                chronicle=chronicle, name=session_name
            )
            for character in characters:
                presence_join(session=session, character=character)
            if ensure is ensure_attribute_characters:
                ensure_forms_tonight(session, sheets)
            ensure_prepared_statics(chronicle)  # issue 11, statics
            self.stdout.write(
                f"{chronicle} ({chronicle.ruleset}): {len(users)} demo users "
                f"({new_users} new), {len(characters)} characters ({new_characters} new), "
                f"session {session.name or session.pk} open with "
                f"{session.presences.count()} present; {passwords}."
            )


def ensure_users(password: str | None) -> tuple[dict, int]:
    """Create the missing demo users and give them their flags and the narrator
    her permissions. Returns (users by username, how many were created)."""
    User = get_user_model()
    users: dict = {}
    created_count = 0
    for spec in USERS:
        user, created = User.objects.get_or_create(
            username=spec.username,
            defaults={
                "first_name": spec.first_name,
                "is_staff": spec.staff,
                "is_superuser": spec.superuser,
            },
        )
        changed = created
        if created:
            user.set_unusable_password()
            created_count += 1
        for flag, wanted in [
            ("is_active", True),
            ("is_staff", spec.staff or user.is_staff),
            ("is_superuser", spec.superuser or user.is_superuser),
        ]:
            if getattr(user, flag) != wanted:
                setattr(user, flag, wanted)
                changed = True
        # Setting the same password again would change its hash and so
        # invalidate every one-tap link already handed out.
        if password and not user.check_password(password):
            user.set_password(password)
            changed = True
        if changed:
            user.save()
        users[spec.username] = user
    users["narrator"].user_permissions.add(*narrator_permissions())
    return users, created_count


def narrator_permissions():
    """View everything about challenges and sessions; edit sheets and presences."""
    edit = [f"{action}_{model}" for action in ("add", "change") for model in SHEET_MODELS]
    return Permission.objects.filter(
        Q(content_type__app_label__in=["challenges", "characters"], codename__startswith="view_")
        | Q(content_type__app_label="characters", codename__in=edit)
    )


def ensure_characters(
    chronicle: Chronicle, users: dict, sheets: list[DemoSheet] = SHEETS
) -> tuple[list[Character], int]:
    """Create the missing characters of ``sheets`` with their sheets (pools,
    Traits, Abilities, Disciplines, weapons); an existing character's sheet is
    left as it is. Returns (characters, how many were new)."""
    characters = []
    created_count = 0
    for sheet in sheets:
        character, created = Character.objects.get_or_create(
            chronicle=chronicle,
            name=sheet.name,
            defaults={
                "player": users.get(sheet.player),
                "auto_answer": sheet.auto_answer,
                "concept": sheet.concept,
                "blood_per_turn": sheet.blood_per_turn,
                # s11 clocks: the demo's Garou (those with Rage) heal by resting.
                "garou": sheet.pools.get("rage", 0) > 0,
                **sheet.pools,
            },
        )
        if created:
            created_count += 1
            Trait.objects.bulk_create(
                Trait(
                    character=character,
                    name=name,
                    category=category.value,
                    count=count,
                    negative=negative,
                    stamina=category is P and not negative and name in STAMINA_TRAITS,
                )
                for name, category, count, negative in sheet.traits
            )
            Ability.objects.bulk_create(
                Ability(character=character, name=name, rating=rating)
                for name, rating in sheet.abilities
            )
            Discipline.objects.bulk_create(
                Discipline(character=character, name=name, rating=rating)
                for name, rating in sheet.disciplines
            )
            Weapon.objects.bulk_create(
                Weapon(character=character, name=name, bonus=bonus, ability=ability, ranged=ranged)
                for name, bonus, ability, ranged in sheet.weapons
            )
        characters.append(character)
    return characters, created_count


def ensure_attribute_characters(
    chronicle: Chronicle, users: dict, sheets: list[DemoAttributeSheet] = BNS_SHEETS
) -> tuple[list[Character], int]:
    """Create the missing characters of a test-pool chronicle's ``sheets``
    (Attributes, Skills, Willpower, Rage, form, focus, flags); an existing
    character's sheet is left as it is. Returns (characters, how many were new)."""
    characters = []
    created_count = 0
    for sheet in sheets:
        physical, social, mental = sheet.attributes
        character, created = Character.objects.get_or_create(
            chronicle=chronicle,
            name=sheet.name,
            defaults={
                "player": users.get(sheet.player),
                "concept": sheet.concept,
                "physical_attribute": physical,
                "social_attribute": social,
                "mental_attribute": mental,
                **sheet.sheet,
            },
        )
        if created:
            created_count += 1
            Ability.objects.bulk_create(
                Ability(character=character, name=name, rating=rating)
                for name, rating in sheet.skills
            )
        characters.append(character)
    return characters, created_count


def ensure_story_characters(
    chronicle: Chronicle, users: dict, sheets: list[DemoStorySheet] = STORY_SHEETS
) -> tuple[list[Character], int]:
    """Create the missing characters of a dice-pool chronicle's ``sheets``
    (Willpower, the StorySheet of dots, Skills with specialties, Merits); an
    existing character's sheet is left as it is. Returns (characters, how
    many were new)."""
    characters = []
    created_count = 0
    for sheet in sheets:
        character, created = Character.objects.get_or_create(
            chronicle=chronicle,
            name=sheet.name,
            defaults={
                "player": users.get(sheet.player),
                "concept": sheet.concept,
                "willpower": sheet.willpower,
            },
        )
        if created:
            created_count += 1
            StorySheet.objects.create(
                character=character,
                **dict(zip(StorySheet.ATTRIBUTE_FIELDS, sheet.attributes, strict=True)),
                **sheet.sheet,
            )
            StorySkill.objects.bulk_create(
                StorySkill(character=character, name=name, dots=dots, specialties=specialties)
                for name, dots, specialties in sheet.skills
            )
            Merit.objects.bulk_create(
                Merit(character=character, name=name, dots=dots, note=note)
                for name, dots, note in sheet.merits
            )
        characters.append(character)
    return characters, created_count


def ensure_forms_tonight(session, sheets: list[DemoAttributeSheet]) -> None:
    """Put the Garou of ``sheets`` who start the evening changed in their form
    tonight, unless a form was set for tonight already."""
    for sheet in sheets:
        if sheet.form_tonight:
            Presence.objects.filter(session=session, character__name=sheet.name, form="").update(
                form=sheet.form_tonight
            )


# --- issue 11, statics: a prepared static per demo chronicle ----------------------

#: (chronicle, object or place, hint, category, difficulty, reveal, may overbid, may retest)
PREPARED_STATICS = [
    (
        CHRONICLE,
        "the Gaffling",
        "A small spirit in the old oak. Convince it to help (Social).",
        "social",
        4,
        "The Gaffling agrees to help: it shows you the hidden path to the caern.",
        False,
        False,
    ),
    (
        UKM_CHRONICLE,
        "the Prince's ledger",
        "A locked ledger on the Prince's desk (Mental).",
        "mental",
        5,
        "The ledger names three Kindred who owe the Prince a boon.",
        True,
        True,
    ),
]
"""The demo's prepared statics: seeds/000's Steps-in-Gum and the Gaffling
(Social, difficulty 4), and a ukm one whose object overbids and retests."""


def ensure_prepared_statics(chronicle: Chronicle) -> None:
    """Create the chronicle's demo prepared statics that are missing (by name);
    an existing one keeps its edits and its QR token."""
    from challenges.models import PreparedStatic

    for name, thing, hint, category, difficulty, reveal, overbid, retest in PREPARED_STATICS:
        if name == chronicle.name:
            PreparedStatic.objects.get_or_create(
                chronicle=chronicle,
                name=thing,
                defaults={
                    "hint": hint,
                    "category": category,
                    "difficulty": difficulty,
                    "reveal": reveal,
                    "may_overbid": overbid,
                    "may_retest": retest,
                },
            )
