"""Small builders for a chronicle with an open session and the seeds' characters."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from characters.models import Ability, Character, Chronicle, GameSession, Presence, Trait


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


def evening():
    """Helen (7 Physical) and Grady (5 Physical) of seeds/000, their players, a
    narrator, and an open session. Returns a dict of everything."""
    narrator = make_user("narrator")
    helen_player = make_user("helen")
    grady_player = make_user("grady")
    chronicle = Chronicle.objects.create(name="Test Chronicle")
    chronicle.narrators.add(narrator)
    session = GameSession.objects.create(chronicle=chronicle, name="Tonight")
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
