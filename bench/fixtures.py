"""Bench data in the bench database: ``python -m bench.fixtures``.

Run with ``DATABASE_URL`` (and ``SECRET_KEY``) set to the bench's own values;
the bench command does that in a subprocess so the user's database is never
opened. Two subcommands:

- ``prepare PHONES DASHBOARDS OUT``: migrate, then create one chronicle with an
  open session, ``PHONES`` players each with one present character (Physical
  Trait *Quick* ×500, so no phone runs out of Traits to bid in the paced,
  saturation and burst rows), ``DASHBOARDS`` narrators, and a logged-in
  session cookie for each; writes JSON to ``OUT``:
  ``{"session": id, "phones": [[character_id, cookie], ...], "dashboards": [cookie, ...]}``.
- ``evening``: give every bench character its evening sheet
  (:func:`evening_sheet`: Social and Mental Traits like the demo's), once,
  before the evening row; prints how many Traits were added.
- ``chronicle RULESET OUT``: once, before the ``evening_bns`` or
  ``evening_storytelling`` row, a second chronicle of ``RULESET`` (``bns``:
  test pools, seeds/002; ``storytelling``: dice pools, seeds/003) with its
  open session: every bench player gets a character in it with a sheet of
  the demo's (:func:`other_sheet`), present; the bench narrators narrate it.
  Writes ``{"session": id, "characters": [id, ...]}`` to ``OUT``, the
  characters in the order of ``prepare``'s phones (the same players, so the
  same cookies).
- ``crowd OUT``: once, before the ``crowded_dashboard`` row, issue 30's
  crowd (:func:`crowd`): a chronicle of 150 characters present, each played
  by a player of its own, with 600 challenges tonight, 100 of them open;
  the bench narrators narrate it. Writes ``{"session": id, "phones":
  [[character_id, cookie], ...]}`` to ``OUT``.
- ``verify``: print JSON counts of challenges, resolved challenges (of them,
  voided by a narrator: the reconnect storms' rulings), Trait losses and
  challenges with more than one loss (a doubled result); mob scenes and
  dice rolls, and those settled or rolled twice; Willpower spent beyond a
  sheet's; and ``inconsistencies``: the lines ``manage.py checkstate``
  prints (``challenges.consistency.find_inconsistencies``), none when the
  play history is consistent.
"""

from __future__ import annotations

import json
import os
import sys

BID_TRAIT = "Quick"
BID_COPIES = 500
EVENING_CATEGORIES = ("social", "mental")
_EVENING_TRAITS = {
    "physical": [
        "Brawny",
        "Dexterous",
        "Enduring",
        "Ferocious",
        "Graceful",
        "Nimble",
        "Quick",
        "Resilient",
        "Rugged",
        "Tireless",
        "Tough",
        "Wiry",
    ],
    "social": [
        "Alluring",
        "Charming",
        "Commanding",
        "Persuasive",
        "Eloquent",
        "Gracious",
        "Intimidating",
        "Witty",
        "Dignified",
        "Diplomatic",
        "Expressive",
        "Genial",
    ],
    "mental": [
        "Clever",
        "Cunning",
        "Insightful",
        "Knowledgeable",
        "Observant",
        "Patient",
        "Reflective",
        "Shrewd",
        "Wily",
        "Calm",
        "Determined",
        "Disciplined",
    ],
}
OTHER_RULESETS = {"bns": "Bench By Night", "storytelling": "Bench Awakening"}
"""The rulesets of the other evening rows, and their bench chronicle's name."""
_EVENING_NEGATIVES = {
    "physical": ["Clumsy", "Lame", "Sickly", "Delicate", "Decrepit"],
    "social": ["Condescending", "Tactless", "Naive", "Obnoxious", "Bestial"],
    "mental": ["Oblivious", "Forgetful", "Gullible", "Impatient", "Shortsighted"],
}


def evening_sheet(
    character_id: int, categories: tuple[str, ...] = EVENING_CATEGORIES
) -> list[tuple[str, str, int, bool]]:
    """The evening row's Traits of one bench character, like the demo's
    sheets: per category of ``categories`` (physical, social, mental), 5 to
    9 Traits with counts 1 to 3 and one Negative Trait (so 12 to 20 Traits
    in all for two categories), drawn from ``random.Random(character_id)``.
    Each is ``(name, category, count, negative)``."""
    import random

    rng = random.Random(character_id)
    sheet = []
    for category in categories:
        for name in rng.sample(_EVENING_TRAITS[category], rng.randint(5, 9)):
            sheet.append((name, category, rng.randint(1, 3), False))
        sheet.append((rng.choice(_EVENING_NEGATIVES[category]), category, 1, True))
    return sheet


def other_sheet(ruleset: str, index: int):
    """The demo's sheet bench player ``index`` plays in the ``ruleset``
    chronicle of :data:`OTHER_RULESETS`: the demo's players' sheets in turn
    (``characters/management/commands/demo.py``: ``BNS_SHEETS``, a
    ``DemoAttributeSheet``; ``STORY_SHEETS``, a ``DemoStorySheet``). Raises
    KeyError for another ruleset."""
    from characters.management.commands import demo

    sheets = {"bns": demo.BNS_SHEETS, "storytelling": demo.STORY_SHEETS}[ruleset]
    played = [sheet for sheet in sheets if sheet.player]
    return played[index % len(played)]


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "narrator.settings")
    import django

    django.setup()


def session_cookies(users) -> dict[int, str]:
    """A logged-in session for each of ``users`` (one bulk insert): ``{user
    id: session key}``, the value of the ``sessionid`` cookie a simulated
    phone or dashboard sends."""
    from django.contrib.auth import SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session

    store = SessionStore()
    cookies: dict[int, str] = {}
    rows = []
    for user in users:
        key = store._get_new_session_key()
        data = {
            SESSION_KEY: str(user.pk),
            "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
            "_auth_user_hash": user.get_session_auth_hash(),
        }
        rows.append(
            Session(
                session_key=key,
                session_data=store.encode(data),
                expire_date=store.get_expiry_date(),
            )
        )
        cookies[user.pk] = key
    Session.objects.bulk_create(rows)
    return cookies


def prepare(phones: int, dashboards: int, out: str) -> None:
    """Create the bench chronicle and write the connection details to ``out``."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import transaction

    from characters.models import Character, Chronicle, GameSession, Presence, Trait

    call_command("migrate", verbosity=0, interactive=False)
    User = get_user_model()
    password = make_password(None)  # unusable: bench users log in by cookie only
    with transaction.atomic():
        players = User.objects.bulk_create(
            User(username=f"bench-player-{i}", password=password) for i in range(phones)
        )
        narrators = User.objects.bulk_create(
            User(username=f"bench-narrator-{i}", password=password) for i in range(dashboards)
        )
        chronicle = Chronicle.objects.create(name="Bench Chronicle")
        chronicle.narrators.add(*narrators)
        session = GameSession.objects.create(chronicle=chronicle, name="Bench evening")
        characters = Character.objects.bulk_create(
            Character(chronicle=chronicle, name=f"Bench {i:05d}", player=user)
            for i, user in enumerate(players)
        )
        Trait.objects.bulk_create(
            Trait(character=c, name=BID_TRAIT, category="physical", count=BID_COPIES)
            for c in characters
        )

        Presence.objects.bulk_create(Presence(session=session, character=c) for c in characters)

        cookies = session_cookies([*players, *narrators])
    with open(out, "w") as fh:
        json.dump(
            {
                "session": session.pk,
                "phones": [[c.pk, cookies[c.player_id]] for c in characters],
                "dashboards": [cookies[n.pk] for n in narrators],
                "negatives": {
                    c.pk: {
                        category: [
                            n for n, cat, _, neg in evening_sheet(c.pk) if neg and cat == category
                        ]
                        for category in EVENING_CATEGORIES
                    }
                    for c in characters
                },
            },
            fh,
        )


def evening() -> None:
    """Add :func:`evening_sheet` to every bench character that has none yet."""
    from characters.models import Character, Trait

    characters = Character.objects.filter(chronicle__name="Bench Chronicle").exclude(
        traits__category__in=EVENING_CATEGORIES
    )
    added = Trait.objects.bulk_create(
        Trait(character=c, name=name, category=category, count=count, negative=negative)
        for c in characters
        for name, category, count, negative in evening_sheet(c.pk)
    )
    print(json.dumps({"traits": len(added)}))


def other_characters(chronicle, ruleset: str, players: list, names: list[str]) -> list:
    """One character of ``chronicle`` (of ``ruleset``: ``bns`` or
    ``storytelling``) for each of ``players``, named ``names`` in turn, on
    the demo's sheets in turn (:func:`other_sheet`); saved with their
    Abilities (``bns``) or dice-pool sheets, Skills and Merits
    (``storytelling``), in bulk. Returns them in the order of ``players``."""
    from characters.models import Ability, Character, Merit, StorySheet, StorySkill

    sheets = [other_sheet(ruleset, i) for i in range(len(players))]
    if ruleset == "bns":
        fields = [
            dict(
                zip(
                    ("physical_attribute", "social_attribute", "mental_attribute"),
                    sheet.attributes,
                    strict=True,
                ),
                **sheet.sheet,
            )
            for sheet in sheets
        ]
    else:
        fields = [{"willpower": sheet.willpower} for sheet in sheets]
    characters = Character.objects.bulk_create(
        Character(chronicle=chronicle, name=names[i], player=user, **fields[i])
        for i, user in enumerate(players)
    )
    pairs = list(zip(characters, sheets, strict=True))
    if ruleset == "bns":
        Ability.objects.bulk_create(
            Ability(character=c, name=name, rating=rating)
            for c, sheet in pairs
            for name, rating in sheet.skills
        )
    else:
        StorySheet.objects.bulk_create(
            StorySheet(
                character=c,
                **dict(zip(StorySheet.ATTRIBUTE_FIELDS, sheet.attributes, strict=True)),
                **sheet.sheet,
            )
            for c, sheet in pairs
        )
        StorySkill.objects.bulk_create(
            StorySkill(character=c, name=name, dots=dots, specialties=specialties)
            for c, sheet in pairs
            for name, dots, specialties in sheet.skills
        )
        Merit.objects.bulk_create(
            Merit(character=c, name=name, dots=dots, note=note)
            for c, sheet in pairs
            for name, dots, note in sheet.merits
        )
    return characters


def chronicle(ruleset: str, out: str) -> None:
    """Create the bench chronicle of ``ruleset`` (:data:`OTHER_RULESETS`) and
    write its session and characters to ``out`` (see the module's doc)."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from characters.models import Chronicle, GameSession, Presence

    User = get_user_model()
    players = list(User.objects.filter(username__startswith="bench-player-").order_by("pk"))
    narrators = User.objects.filter(username__startswith="bench-narrator-")
    with transaction.atomic():
        chronicle = Chronicle.objects.create(name=OTHER_RULESETS[ruleset], ruleset=ruleset)
        chronicle.narrators.add(*narrators)
        session = GameSession.objects.create(chronicle=chronicle, name=f"{chronicle.name} evening")
        names = [f"Bench {i:05d}" for i in range(len(players))]
        characters = other_characters(chronicle, ruleset, players, names)
        Presence.objects.bulk_create(
            Presence(session=session, character=c, health=c.health) for c in characters
        )
    with open(out, "w") as fh:
        json.dump({"session": session.pk, "characters": [c.pk for c in characters]}, fh)


CROWD_CHARACTERS = 150
CROWD_CHALLENGES = 600
CROWD_OPEN = 100
"""Issue 30's crowd (the ``crowded_dashboard`` row): characters present,
challenges tonight, and how many of them are still open."""


def crowd(out: str) -> None:
    """Create the crowd's chronicle, "Bench Crowd" (``met_classic``), which
    the bench narrators narrate, and write ``{"session": id, "phones":
    [[character id, cookie], ...]}`` to ``out``: :data:`CROWD_CHARACTERS`
    players of its own ("bench-crowd-N", each logged in), each with one
    character present in its open session (*Quick* ×:data:`BID_COPIES` to
    bid, and an :func:`evening_sheet`); and :data:`CROWD_CHALLENGES`
    opposed challenges between them tonight, :data:`CROWD_OPEN` of them
    waiting on the defender's bid, the others won by the challenger, their
    ``stage_since`` spread over the last hour. Two are played through the
    services; the others copy their rows (:func:`_copy_challenges`), so the
    history stays consistent (``manage.py checkstate``) and it all takes a
    second or two."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import transaction

    from characters.models import Character, Chronicle, GameSession, Presence, Trait

    User = get_user_model()
    password = make_password(None)  # unusable: bench users log in by cookie only
    with transaction.atomic():
        players = User.objects.bulk_create(
            User(username=f"bench-crowd-{i}", password=password) for i in range(CROWD_CHARACTERS)
        )
        chronicle = Chronicle.objects.create(name="Bench Crowd")
        chronicle.narrators.add(*User.objects.filter(username__startswith="bench-narrator-"))
        session = GameSession.objects.create(chronicle=chronicle, name="Bench Crowd evening")
        characters = Character.objects.bulk_create(
            Character(chronicle=chronicle, name=f"Crowd {i:03d}", player=user)
            for i, user in enumerate(players)
        )
        sheets = [(c, BID_TRAIT, "physical", BID_COPIES, False) for c in characters]
        sheets += [(c, *trait) for c in characters for trait in evening_sheet(c.pk)]
        Trait.objects.bulk_create(
            Trait(character=c, name=name, category=category, count=count, negative=negative)
            for c, name, category, count, negative in sheets
        )
        Presence.objects.bulk_create(Presence(session=session, character=c) for c in characters)
        cookies = session_cookies(players)
    _copy_challenges(session, characters)
    with open(out, "w") as fh:
        json.dump(
            {"session": session.pk, "phones": [[c.pk, cookies[c.player_id]] for c in characters]},
            fh,
        )


def play_challenge(
    session,
    challenger,
    defender,
    *,
    bid: str,
    answer: str | None = None,
    throws: tuple[str, ...] = (),
    category: str = "physical",
    is_attack: bool = False,
):
    """An opposed challenge in ``session`` made through ``challenges.services``
    by the characters' players, each move with a fresh message id:
    ``challenger`` opens it bidding the Trait ``bid``; if ``answer``,
    ``defender`` answers with that Trait; then the ``throws`` ("rock", "paper"
    or "scissors"), the challenger's first, then the defender's. Returns the
    Challenge as the database holds it. Raises what the services raise."""
    import uuid

    from challenges import services

    challenge = services.challenge_open(
        session=session,
        challenger=challenger,
        defender=defender,
        category=category,
        bids=[bid],
        is_attack=is_attack,
        user=challenger.player,
        msg_id=uuid.uuid4().hex,
    )
    if answer is not None:
        services.challenge_bid(
            challenge_id=challenge.pk,
            character=defender,
            bids=[answer],
            user=defender.player,
            msg_id=uuid.uuid4().hex,
        )
    for character, throw in zip((challenger, defender), throws, strict=False):
        services.challenge_throw(
            challenge_id=challenge.pk,
            character=character,
            throw=throw,
            user=character.player,
            msg_id=uuid.uuid4().hex,
        )
    challenge.refresh_from_db()
    return challenge


def copied_challenge(model, challenger, defender, state: dict, since):
    """A new Challenge (not saved) like ``model`` in its session, between
    ``challenger`` and ``defender``, with ``state`` (the engine's dict, its
    sides already theirs), in its stage since ``since`` (a datetime), and
    resolved then if ``model`` is resolved."""
    from challenges.models import Challenge

    return Challenge(
        session_id=model.session_id,
        kind=model.kind,
        challenger=challenger,
        defender=defender,
        category=model.category,
        stage=model.stage,
        stage_since=since,
        outcome=model.outcome,
        state=state,
        resolved_at=since if model.resolved_at else None,
    )


def _copy_challenges(session, characters) -> None:
    """Fill ``session`` with :data:`CROWD_CHALLENGES` challenges between
    ``characters`` (pairs drawn from ``random.Random(9)``), :data:`CROWD_OPEN`
    of them open: one open and one resolved played (:func:`play_challenge`),
    then copies of them with their sides, names, Trait rows and times
    changed. A copy's tests, events and lost Traits are its model's rows
    (events with no actor: no client action id is theirs), so
    ``find_inconsistencies`` reads it as a challenge played."""
    import copy
    import random
    from datetime import UTC, datetime

    from django.db import transaction

    from challenges.models import Challenge, Event, Test, TraitLoss
    from characters.models import Trait

    waiting = play_challenge(session, characters[0], characters[1], bid=BID_TRAIT)
    done = play_challenge(
        session,
        characters[2],
        characters[3],
        bid=BID_TRAIT,
        answer=BID_TRAIT,
        throws=("rock", "scissors"),
    )
    quick = dict(
        Trait.objects.filter(character__in=characters, name=BID_TRAIT).values_list(
            "character_id", "pk"
        )
    )
    rng = random.Random(9)
    now = datetime.now(tz=UTC).timestamp()
    copies = []
    for n in range(CROWD_CHALLENGES - 2):
        model = waiting if n < CROWD_OPEN - 1 else done
        first, second = rng.sample(characters, 2)
        who = {model.challenger_id: first.pk, model.defender_id: second.pk}
        state = copy.deepcopy(model.state)
        for side, character in (("challenger", first), ("defender", second)):
            state[side].update(character_id=character.pk, name=character.name)
            for holding in state[side]["traits"]:
                holding["trait_id"] = quick[character.pk]
            state[f"{side}_bid_ids"] = [quick[character.pk] for _ in state[f"{side}_bids"]]
        for loss in state["losses"]:
            loss["character_id"] = who[loss["character_id"]]
            loss["trait_id"] = quick[loss["character_id"]]
        since = datetime.fromtimestamp(now - rng.uniform(0, 3600), tz=UTC)
        state["stage_since"] = since.timestamp()
        copies.append((model, copied_challenge(model, first, second, state, since)))
    kept = [
        f.attname for f in Test._meta.concrete_fields if f.attname not in ("id", "challenge_id")
    ]
    tests = {m.pk: list(Test.objects.filter(challenge=m).values(*kept)) for m in (waiting, done)}
    events = {m.pk: list(Event.objects.filter(challenge=m)) for m in (waiting, done)}
    with transaction.atomic():
        Challenge.objects.bulk_create(row for _, row in copies)
        Test.objects.bulk_create(
            Test(challenge=row, **fields) for model, row in copies for fields in tests[model.pk]
        )
        Event.objects.bulk_create(
            Event(session=session, challenge=row, kind=event.kind, data=event.data)
            for model, row in copies
            for event in events[model.pk]
        )
        TraitLoss.objects.bulk_create(
            TraitLoss(
                session=session,
                character_id=loss["character_id"],
                trait_id=loss["trait_id"],
                challenge=row,
            )
            for _, row in copies
            for loss in (row.state["losses"] if row.resolved_at else ())
        )


def verify() -> None:
    """Print the database's own count of challenges and losses as JSON.

    ``doubled_losses``: challenges of one Trait bid a side (the Physical ones
    of paced, saturation, burst: *Quick*) with more than one loss.
    ``overspent``: evening challenges that cost more Trait copies than were
    bid in them (a draw, two bids of a Wounded side, an overbid or a Negative
    Trait owed may each cost more than one; a mob scene's test also costs
    the other attackers' bids, one each), and Traits with more copies lost
    tonight than held. ``doubled_results``: challenges resolved twice, mob
    scene targets settled twice, dice rolls rolled twice (their events).
    ``willpower_overspent``: presences that spent more Willpower than their
    sheet's. ``inconsistencies``: ``manage.py checkstate``'s lines (a list of
    strings, empty when consistent)."""
    from collections import Counter

    from django.db.models import Count, F

    from challenges.consistency import find_inconsistencies
    from challenges.models import Challenge, DiceRoll, Event, MobScene, TraitLoss
    from characters.models import Presence, Trait

    resolved = Challenge.objects.filter(stage="resolved")
    per_challenge = TraitLoss.objects.values("challenge").annotate(n=Count("id"))
    physical = per_challenge.filter(challenge__category="physical")
    evening = {
        row["challenge"]: row["n"]
        for row in per_challenge.filter(challenge__category__in=EVENING_CATEGORIES)
    }
    overspent = 0
    for c in Challenge.objects.filter(pk__in=evening).only("state"):
        bids = len(c.state["challenger_bids"]) + len(c.state["defender_bids"])
        others = max(0, c.state.get("mob_attackers", 0) - 1)  # a mob test's other attackers
        overspent += evening.get(c.pk, 0) > bids + others
    overspent += Trait.objects.annotate(n=Count("losses")).filter(n__gt=F("count")).count()
    twice = Event.objects.filter(kind="resolved").values("challenge").annotate(n=Count("id"))
    doubled = twice.filter(n__gt=1).count()
    mob_results = Counter(
        (data["mob"], data.get("defender"))
        for data in Event.objects.filter(kind="mob_result").values_list("data", flat=True)
    )
    rolled = Counter(
        data["roll"]
        for data in Event.objects.filter(kind__in=("roll_rolled", "roll_contested")).values_list(
            "data", flat=True
        )
    )
    doubled += sum(n > 1 for n in mob_results.values()) + sum(n > 1 for n in rolled.values())
    willpower = Presence.objects.filter(willpower_spent__gt=F("character__willpower")).count()
    print(
        json.dumps(
            {
                "challenges": Challenge.objects.count(),
                "resolved": resolved.count(),
                "voided": resolved.filter(outcome="void").count(),
                "losses": TraitLoss.objects.count(),
                "doubled_losses": physical.filter(n__gt=1).count(),
                "overspent": overspent,
                "mob_scenes": MobScene.objects.count(),
                "mob_settled": MobScene.objects.filter(stage="settled").count(),
                "rolls": DiceRoll.objects.count(),
                "rolled": DiceRoll.objects.filter(rolled_at__isnull=False).count(),
                "doubled_results": doubled,
                "willpower_overspent": willpower,
                "inconsistencies": find_inconsistencies(),
            }
        )
    )


if __name__ == "__main__":
    _setup()
    command, *args = sys.argv[1:]
    if command == "prepare":
        prepare(int(args[0]), int(args[1]), args[2])
    elif command == "evening":
        evening()
    elif command == "chronicle":
        chronicle(args[0], args[1])
    elif command == "crowd":
        crowd(args[0])
    elif command == "verify":
        verify()
    else:
        raise SystemExit(f"unknown command {command!r}")
