"""Small builders for a chronicle with an open session and the seeds' characters,
and for challenges played through ``challenges.services`` as the players would."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from characters.models import (
    Ability,
    Character,
    Chronicle,
    GameSession,
    Merit,
    Presence,
    StorySheet,
    StorySkill,
    Trait,
)


def make_user(username: str, **extra):
    user = get_user_model().objects.create_user(
        username=username, password="pw-" + username, **extra
    )
    return user


def make_character(
    chronicle, name, player=None, traits=(), negatives=(), abilities=(), present=True
):
    """``traits``: (name, category, count) tuples; ``negatives`` the same, negative."""
    character = Character.objects.create(chronicle=chronicle, name=name, player=player)
    for trait_name, category, count in traits:
        Trait.objects.create(character=character, name=trait_name, category=category, count=count)
    for trait_name, category, count in negatives:
        Trait.objects.create(
            character=character, name=trait_name, category=category, count=count, negative=True
        )
    for ability_name, rating in abilities:
        Ability.objects.create(character=character, name=ability_name, rating=rating)
    if present:
        session = chronicle.open_session()
        Presence.objects.create(session=session, character=character)
    return character


def make_rosa(chronicle, player=None, skills=(("Brawl", 3), ("Dodge", 2)), **fields):
    """Rosa, a Strength-focused brawler of a bns chronicle (issue 12,
    seeds/002): Physical 7, Social 3, Mental 4, Willpower 6, ``skills`` as
    (name, rating); ``fields`` change her sheet."""
    values = {
        "name": "Rosa",
        "physical_attribute": 7,
        "social_attribute": 3,
        "mental_attribute": 4,
        "willpower": 6,
        "focus": "strength",
        **fields,
    }
    character = Character.objects.create(chronicle=chronicle, player=player, **values)
    for name, rating in skills:
        Ability.objects.create(character=character, name=name, rating=rating)
    return character


def make_iris(
    chronicle,
    player=None,
    skills=(("Academics", 3, "History"), ("Occult", 3, "Ghosts, Tarot"), ("Stealth", 1, "")),
    merits=(("Library", 2, "Rare occult texts"),),
    **sheet,
):
    """Iris, a mage of a storytelling chronicle (issue 13, seeds/003): seven
    Health dots (the seed's example), Intelligence 3, Wits 3, Dexterity 2,
    Composure 3, Willpower 5; ``skills`` as (name, dots, specialties),
    ``merits`` as (name, dots, note); ``sheet`` changes her StorySheet."""
    character = Character.objects.create(
        chronicle=chronicle, player=player, name="Iris", willpower=5
    )
    values = {
        "intelligence": 3,
        "wits": 3,
        "resolve": 2,
        "dexterity": 2,
        "stamina": 2,
        "presence": 2,
        "manipulation": 2,
        "composure": 3,
        "health": 7,
        "defense": 2,
        "initiative": 5,
        "speed": 8,
        **sheet,
    }
    StorySheet.objects.create(character=character, **values)
    for name, dots, specialties in skills:
        StorySkill.objects.create(
            character=character, name=name, dots=dots, specialties=specialties
        )
    for name, dots, note in merits:
        Merit.objects.create(character=character, name=name, dots=dots, note=note)
    return character


def narrated_chronicle(name: str = "Test Chronicle") -> dict:
    """A chronicle ``name`` narrated by user "narrator", with an open session
    "Tonight". Returns ``{"narrator", "chronicle", "session"}``."""
    narrator = make_user("narrator")
    chronicle = Chronicle.objects.create(name=name)
    chronicle.narrators.add(narrator)
    session = GameSession.objects.create(chronicle=chronicle, name="Tonight")
    return {"narrator": narrator, "chronicle": chronicle, "session": session}


def paired_chronicle(
    pairs: int,
    *,
    copies: int,
    names: tuple[str, str] = ("Agnes", "Boris"),
    traits: tuple[str, str] = ("Strong", "Tough"),
    chronicle_name: str = "Paired Chronicle",
) -> dict:
    """``narrated_chronicle(chronicle_name)`` and ``pairs`` pairs of present
    characters to play against each other: pair n is ``f"{names[0]}{n}"``, played
    by user ``f"{names[0].lower()}{n}"``, with ``copies`` copies of the Physical
    Trait ``traits[0]``, and the same of ``names[1]`` with ``traits[1]``. Returns
    ``{"narrator", "chronicle", "session", "pairs": [(first, second), ...]}``
    (characters; ``character.player`` is the user)."""
    built = narrated_chronicle(chronicle_name)
    built["pairs"] = [
        tuple(
            make_character(
                built["chronicle"],
                f"{name}{n}",
                make_user(f"{name.lower()}{n}"),
                traits=[(trait, "physical", copies)],
            )
            for name, trait in zip(names, traits, strict=True)
        )
        for n in range(pairs)
    ]
    return built


def evening():
    """Helen (7 Physical) and Grady (5 Physical) of seeds/000, their players, a
    narrator, and an open session. Returns a dict of everything."""
    table = narrated_chronicle()
    narrator, chronicle, session = table["narrator"], table["chronicle"], table["session"]
    helen_player = make_user("helen")
    grady_player = make_user("grady")
    helen = make_character(
        chronicle,
        "Helen",
        helen_player,
        traits=[
            ("Ferocious", "physical", 2),
            ("Quick", "physical", 3),
            ("Brawny", "physical", 2),
            ("Alluring", "social", 1),
            ("Cunning", "mental", 1),
        ],
        negatives=[("Clumsy", "physical", 1)],
        abilities=[("Brawl", 2)],
    )
    grady = make_character(
        chronicle,
        "Grady",
        grady_player,
        traits=[("Resilient", "physical", 2), ("Tough", "physical", 3), ("Witty", "social", 1)],
    )
    return {
        "narrator": narrator,
        "helen_player": helen_player,
        "grady_player": grady_player,
        "chronicle": chronicle,
        "session": session,
        "helen": helen,
        "grady": grady,
    }


def opposed_challenge(session, challenger, defender, **moves):
    """An opposed challenge in ``session`` made through ``challenges.services``
    by the characters' players: ``bench.fixtures.play_challenge`` (``bid``,
    ``answer``, ``throws``, ``category``, ``is_attack``). Returns the
    Challenge as the database holds it. Raises what the services raise."""
    from bench.fixtures import play_challenge

    return play_challenge(session, challenger, defender, **moves)


def grady_loses_resilient(game):
    """In ``evening()``'s session Helen attacks Grady (Ferocious against
    Resilient, her Paper on his Rock): he loses Resilient and a health level.
    Returns the resolved Challenge."""
    return opposed_challenge(
        game["session"],
        game["helen"],
        game["grady"],
        bid="Ferocious",
        answer="Resilient",
        throws=("paper", "rock"),
        is_attack=True,
    )


def crowded_session(session, *, characters: int = 100, challenges: int = 300, open_every: int = 3):
    """Fill ``session`` for a dashboard at scale: ``characters`` present
    characters "Guest 001"… (each with a player and a few Traits) and
    ``challenges`` opposed challenges between them, every ``open_every``-th
    still waiting on a bid, the others resolved, their ``stage_since`` spread
    over the last hour. Two challenges are played through the services; the
    rest are copies of their rows (one insert), so this takes a second, not a
    minute. Returns the guests."""
    import copy
    import random
    from datetime import UTC, datetime

    from bench.fixtures import copied_challenge
    from challenges.models import Challenge

    chronicle = session.chronicle
    guests = [
        make_character(
            chronicle,
            f"Guest {n:03d}",
            make_user(f"guest{n:03d}"),
            traits=[("Strong", "physical", 4), ("Tough", "physical", 3), ("Witty", "social", 2)],
        )
        for n in range(characters)
    ]
    waiting = opposed_challenge(session, guests[0], guests[1], bid="Strong")
    done = opposed_challenge(
        session, guests[2], guests[3], bid="Strong", answer="Tough", throws=("rock", "scissors")
    )
    trait_ids = {
        (character_id, name): pk
        for pk, character_id, name in Trait.objects.filter(character__in=guests).values_list(
            "pk", "character_id", "name"
        )
    }
    rng = random.Random(9)
    now = datetime.now(tz=UTC).timestamp()
    rows = []
    for n in range(challenges - 2):
        model = waiting if n % open_every == 0 else done
        first, second = rng.sample(guests, 2)
        state = copy.deepcopy(model.state)
        state["challenger"].update(character_id=first.pk, name=first.name)
        state["defender"].update(character_id=second.pk, name=second.name)
        # Bids, holdings and losses name their Trait rows: the copies' own.
        for side, who in (("challenger", first), ("defender", second)):
            for holding in state[side]["traits"]:
                holding["trait_id"] = trait_ids[who.pk, holding["name"]]
            state[f"{side}_bid_ids"] = [trait_ids[who.pk, name] for name in state[f"{side}_bids"]]
        for loss in state["losses"]:
            loss.update(character_id=second.pk, trait_id=trait_ids[second.pk, loss["trait"]])
        state["wounds"] = []
        since = now - rng.uniform(0, 3600)
        state["stage_since"] = since
        rows.append(
            copied_challenge(model, first, second, state, datetime.fromtimestamp(since, tz=UTC))
        )
    Challenge.objects.bulk_create(rows)
    return guests


def bns_combat_evening() -> dict:
    """Issue 12, combat rounds: a ``bns`` chronicle ("By Night") with an open
    session and four present characters, each with a player: Vesper
    (Physical 3, Mental 9: initiative 9), Rosa (7/4: 7), Jack (6/4: 6) and
    Tooth, a Garou (9/3: 9) with Rage 4, one spent tonight; Rosa alone has a
    Skill, Melee 1 (the stake she pierces hearts with). Returns
    ``narrated_chronicle``'s dict with the characters by lower-case name and
    their players as ``<name>_player``."""
    table = narrated_chronicle("By Night")
    chronicle, session = table["chronicle"], table["session"]
    chronicle.ruleset = Chronicle.Ruleset.BNS
    chronicle.save()
    sheets = {
        "vesper": ("Vesper", 3, 6, 9, {}),
        "rosa": ("Rosa", 7, 3, 4, {"focus": "strength"}),
        "jack": ("Jack", 6, 4, 4, {}),
        "tooth": ("Tooth", 9, 2, 3, {"garou": True, "rage": 4, "form": "homid"}),
    }
    for key, (name, physical, social, mental, extra) in sheets.items():
        player = make_user(key)
        character = Character.objects.create(
            chronicle=chronicle,
            name=name,
            player=player,
            physical_attribute=physical,
            social_attribute=social,
            mental_attribute=mental,
            willpower=5,
            **extra,
        )
        if key == "rosa":
            Ability.objects.create(character=character, name="Melee", rating=1)
        Presence.objects.create(
            session=session, character=character, rage_spent=1 if key == "tooth" else 0
        )
        table[key], table[f"{key}_player"] = character, player
    return table


def story_fight_evening() -> dict:
    """Issue 13, a Storytelling fight: a ``storytelling`` chronicle with an
    open session and four present characters, each with a player, Health 6,
    Defense 2 and Willpower 5: Ada (Strength 2, Brawl 1, Initiative +3),
    Bram (Strength 2, Brawl 2, +2), Cleo (Strength 3, Brawl 2, Dexterity 3,
    Firearms 2, +1) and Dora (+0). Returns ``narrated_chronicle``'s dict with
    the characters by lower-case name and their players as ``<name>_player``."""
    table = narrated_chronicle("Awakening")
    chronicle, session = table["chronicle"], table["session"]
    chronicle.ruleset = Chronicle.Ruleset.STORYTELLING
    chronicle.save()
    sheets = {
        "ada": (2, 2, 3, {"Brawl": 1}),
        "bram": (2, 2, 2, {"Brawl": 2}),
        "cleo": (3, 3, 1, {"Brawl": 2, "Firearms": 2}),
        "dora": (2, 2, 0, {"Brawl": 1}),
    }
    for key, (strength, dexterity, initiative, skills) in sheets.items():
        player = make_user(key)
        character = Character.objects.create(
            chronicle=chronicle, name=key.title(), player=player, willpower=5
        )
        StorySheet.objects.create(
            character=character,
            strength=strength,
            dexterity=dexterity,
            health=6,
            defense=2,
            initiative=initiative,
            speed=9,
        )
        for name, dots in skills.items():
            StorySkill.objects.create(character=character, name=name, dots=dots)
        Presence.objects.create(session=session, character=character)
        table[key], table[f"{key}_player"] = character, player
    return table
