"""``manage.py rehearse``: a crowded evening anyone can watch.

A chronicle "Rehearsal" of one ruleset, its characters present at an open
session, the evening's history written at once through the services
(:func:`fill`), then played live by simulated phones speaking the app's
websocket frames to a running server (:func:`play`): the bench's phones
(``bench.load``: :class:`~bench.load.Conn`, the evening plans) at a
narrator's pace instead of a load's. Unlike the bench it uses the user's own
database and server, so a narrator can open the dashboard and watch.
"""

from __future__ import annotations

import asyncio
import math
import random
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.fixtures import evening_sheet, other_characters, other_sheet, session_cookies

CHRONICLE = "Rehearsal"
SESSION = "Rehearsal evening"
PLAYER_PREFIX = "rehearsal-player-"
#: The simulated narrator's login: its dashboard opens mob scenes, calls
#: for rolls and voids what is stuck, beside the person watching.
ASSISTANT = "rehearsal-narrator"
#: The people who watch: the demo's logins (``manage.py demo``), made here if missing.
WATCHERS = (("narrator", False), ("admin", True))
CATEGORIES = ("physical", "social", "mental")
ATTACK_SHARE = 0.15  # of the filled MET challenges: an attack (a loss costs a health level)
FILL_TRIES = 3  # starts the fill may try for each result it writes
CALL_SHARE = 0.03  # of the results, filled or played: a side calls a narrator to it
CALLED_SHARE = 0.25  # of the filled storytelling rolls: one a narrator calls for
#: Test-pool attacks of the filled challenges: brawl, or an armed attack she has the Skill of.
ARMED_ATTACKS = {"melee": "Melee", "firearms": "Firearms"}
STAKES = (
    "I shove you against the wall.",
    "You tell me where the fetish is.",
    "I slip past you to the door.",
    "You believe my story.",
    "I see through your lie.",
    "",
)

FIRST_NAMES = (  # noqa: SIM905 - a list of names reads best as prose
    "Mara Tobias Rosa Jack Vesper Iris Marcus Seraphine Nico Helen Grady Camille Ray "
    "Connor Lucius Ada Bram Celeste Dorian Elsa Felix Greta Hugo Ingrid Jonah Katya "
    "Leon Mina Nathaniel Odette Pavel Quinn Rhea Silas Thea Ulric Vera Wren Xavier "
    "Yara Zane Agnes Basil Cora Declan Esme Fabian Gideon Hazel Isidore Juno Kit "
    "Lorcan Margot"
).split()
SURNAMES = (  # noqa: SIM905 - a list of names reads best as prose
    "Ashford Blackwood Crane Delacroix Everett Falk Grey Hollis Ivers Kincaid Lark "
    "Marsh Nightingale Orlov Pryce Quill Ravenscroft Sterling Thorne Underhill Vance "
    "Whitlock Yardley Zell Corvin Moreau Harrow Sable Lockhart Voss"
).split()


def character_names(count: int, seed: int = 30) -> list[str]:
    """``count`` different names "First Last" from :data:`FIRST_NAMES` and
    :data:`SURNAMES`, in a shuffled order drawn from ``seed``. ValueError
    beyond the ``len(FIRST_NAMES) * len(SURNAMES)`` there are."""
    names = [f"{first} {last}" for first in FIRST_NAMES for last in SURNAMES]
    if count > len(names):
        raise ValueError(f"at most {len(names)} characters, not {count}")
    return random.Random(seed).sample(names, count)


@dataclass
class Rehearsal:
    """What the phones need: the session, ``phones`` as ``[(character id,
    session cookie)]``, the assistant narrator's cookie, and per character
    the Negative Traits of her sheet (MET) or her Skills (test and dice pools)."""

    session: int
    ruleset: str
    phones: list[tuple[int, str]]
    assistant: str
    negatives: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    skills: dict[int, list[str]] = field(default_factory=dict)


def create(ruleset: str, characters: int) -> Rehearsal:
    """Replace the chronicle :data:`CHRONICLE` (and its players' logins) with
    a new one of ``ruleset`` and ``characters`` present characters, one
    player each, at an open session :data:`SESSION`; the watchers
    (:data:`WATCHERS`) and :data:`ASSISTANT` narrate it. Sheets: Traits in
    every category with a Negative Trait each (``bench.fixtures.evening_sheet``),
    or the demo's sheets in turn for test pools and dice pools
    (``bench.fixtures.other_characters``). RulesError for an unknown
    ruleset, ValueError for too many characters."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import transaction

    from challenges.rules import get_ruleset
    from characters.models import Character, Chronicle, GameSession, Presence, Trait

    rules = get_ruleset(ruleset)
    names = character_names(characters)
    User = get_user_model()
    password = make_password(None)  # unusable: players log in by cookie or join link
    with transaction.atomic():
        Chronicle.objects.filter(name=CHRONICLE).delete()
        User.objects.filter(username__startswith=PLAYER_PREFIX).delete()
        User.objects.filter(username=ASSISTANT).delete()
        players = User.objects.bulk_create(
            User(username=f"{PLAYER_PREFIX}{i}", first_name=name.split()[0], password=password)
            for i, name in enumerate(names)
        )
        assistant = User.objects.create(username=ASSISTANT, password=password, is_staff=True)
        watchers = [
            User.objects.get_or_create(
                username=username,
                defaults={
                    "password": password,
                    "is_staff": True,
                    "is_superuser": superuser,
                    "first_name": username.title(),
                },
            )[0]
            for username, superuser in WATCHERS
        ]
        chronicle = Chronicle.objects.create(name=CHRONICLE, ruleset=ruleset)
        chronicle.narrators.add(assistant, *watchers)
        session = GameSession.objects.create(chronicle=chronicle, name=SESSION)
        negatives: dict[int, dict[str, list[str]]] = {}
        skills: dict[int, list[str]] = {}
        if rules.adjective_traits:
            made = Character.objects.bulk_create(
                Character(chronicle=chronicle, name=name, player=user)
                for name, user in zip(names, players, strict=True)
            )
            sheets = {c.pk: evening_sheet(c.pk, CATEGORIES) for c in made}
            Trait.objects.bulk_create(
                Trait(character_id=pk, name=n, category=cat, count=count, negative=negative)
                for pk, sheet in sheets.items()
                for n, cat, count, negative in sheet
            )
            for pk, sheet in sheets.items():
                for n, cat, _, negative in sheet:
                    if negative:
                        negatives.setdefault(pk, {}).setdefault(cat, []).append(n)
        else:
            made = other_characters(chronicle, ruleset, players, names)
            skills = {  # Skills (dice pools) or Abilities (test pools)
                c.pk: [skill[0] for skill in other_sheet(ruleset, i).skills]
                for i, c in enumerate(made)
            }
        Presence.objects.bulk_create(
            Presence(session=session, character=c, health=c.health) for c in made
        )
        cookies = session_cookies([*players, assistant])
    return Rehearsal(
        session=session.pk,
        ruleset=ruleset,
        phones=[(c.pk, cookies[c.player_id]) for c in made],
        assistant=cookies[assistant.pk],
        negatives=negatives,
        skills=skills,
    )


def fill(rehearsal: Rehearsal, count: int, *, seed: int = 3) -> Counter:
    """Write ``count`` challenges (storytelling: dice rolls) of random pairs
    of the rehearsal's characters into its session through the services, each
    played to its result at once: MET and test-pool challenges by both sides
    as auto-answering NPCs would (``services.challenge_autoplay``: best Traits
    or defence, random throws, ties declared, relenting when Wounded), an
    attack at :data:`ATTACK_SHARE`; contested actions, or at
    :data:`CALLED_SHARE` rolls a narrator calls for. A side calls a narrator
    to :data:`CALL_SHARE` of the results. A start the rules refuse (no Trait
    left, Incapacitated) is counted and another pair drawn, up to
    :data:`FILL_TRIES` starts a result. Returns the counts."""
    from challenges import services
    from challenges.rules import RulesError, get_ruleset
    from characters.models import Character, GameSession

    session = GameSession.objects.select_related("chronicle").get(pk=rehearsal.session)
    rules = get_ruleset(rehearsal.ruleset)
    cast = list(Character.objects.filter(chronicle=session.chronicle).select_related("player"))
    assistant = session.chronicle.narrators.get(username=ASSISTANT)
    rng = random.Random(seed)
    counts: Counter = Counter()
    written = 0
    for _ in range(count * FILL_TRIES):
        if written == count:
            break
        one, other = rng.sample(cast, 2)
        try:
            if rules.dice_pools:
                _fill_roll(rehearsal, session, one, other, assistant, rng, counts)
                written += 1
                continue
            if rules.met_challenges:
                opened = _open_met(session, one, other, rng)
            else:
                opened = services.bns_open(
                    session=session,
                    attacker=one,
                    defender=other,
                    attack=rng.choice(_attacks(rehearsal, one.pk)),
                    user=one.player,
                    msg_id=_id(),
                )
            done = services.challenge_autoplay(challenge_id=opened.pk, choose=rng.choice)
        except (services.ActionRefused, RulesError) as refused:
            counts[f"starts refused ({str(refused).partition(':')[0][:50]})"] += 1
            continue
        written += 1
        counts["resolved" if done.stage == "resolved" else "left open"] += 1
        if done.stage == "resolved" and rng.random() < CALL_SHARE:
            services.challenge_call_narrator(
                challenge_id=done.pk, character=other, user=other.player, msg_id=_id()
            )
            counts["narrator called"] += 1
    return counts


def _attacks(rehearsal: Rehearsal, character_id: int) -> list[str]:
    """The test-pool attacks her sheet lets her make: brawl, and each of
    :data:`ARMED_ATTACKS` whose Skill she has."""
    skills = rehearsal.skills.get(character_id, [])
    return ["brawl", *(attack for attack, skill in ARMED_ATTACKS.items() if skill in skills)]


def _open_met(session, challenger, defender, rng: random.Random):
    """``challenger`` opens a MET challenge on ``defender`` in a category,
    bidding her Traits with the most copies left tonight (two when her health
    asks for two). RulesError or ActionRefused when she cannot: the first
    refusal's."""
    from django.db.models import Count, F, Q

    from challenges import services
    from challenges.rules import RulesError
    from challenges.services import ActionRefused
    from characters.models import Trait

    category = rng.choice(CATEGORIES)
    tonight = Count("losses", filter=Q(losses__session=session))
    held = list(
        Trait.objects.filter(character=challenger, category=category, negative=False)
        .annotate(left=F("count") - tonight)
        .filter(left__gt=0)
        .order_by("-left")
        .values_list("name", flat=True)
    )
    refused: Exception | None = None if held else ActionRefused("No Trait left to bid")
    for need in (1, 2) if held else ():
        try:
            return services.challenge_open(
                session=session,
                challenger=challenger,
                defender=defender,
                category=category,
                bids=held[:need],
                is_attack=rng.random() < ATTACK_SHARE,
                stakes=rng.choice(STAKES),
                user=challenger.player,
                msg_id=uuid.uuid4().hex,
            )
        except (RulesError, ActionRefused) as error:
            refused = refused or error
    raise refused


def _fill_roll(rehearsal, session, actor, opponent, assistant, rng, counts: Counter) -> None:
    """One storytelling roll of :func:`fill`: a narrator calls for one of
    ``actor``'s pools and she rolls it, or she contests ``opponent``."""
    from challenges import services
    from challenges.rules.storytelling import ATTRIBUTES

    def spec(who) -> dict:
        skills = rehearsal.skills.get(who.pk, [])
        return services.roll_spec(
            attribute=rng.choice(list(ATTRIBUTES)), skill=rng.choice(skills) if skills else None
        )

    if rng.random() < CALLED_SHARE:
        called = services.roll_call(
            session=session, character=actor, spec=spec(actor), user=assistant, msg_id=_id()
        )
        services.roll_make(roll_id=called.pk, character=actor, user=actor.player, msg_id=_id())
        counts["rolls called"] += 1
        return
    contest = services.roll_contest(
        session=session,
        character=actor,
        opponent=opponent,
        spec=spec(actor),
        label=rng.choice(("Sneak past", "Win the argument", "Grab the book", "Read the aura")),
        user=actor.player,
        msg_id=_id(),
    )
    services.roll_resist(
        roll_id=contest.pk,
        character=opponent,
        spec=spec(opponent),
        user=opponent.player,
        msg_id=_id(),
    )
    counts["contested rolls"] += 1


def _id() -> str:
    return uuid.uuid4().hex


SWEEP_SECONDS = 10.0  # how often the results the dashboard should show are forgotten
CONNECT_WAIT = 20.0  # seconds a page, a socket's first view may take
#: Seconds a phone waits for a move of the other side before a narrator voids
#: it: long, as a narrator's Time out may hold a challenge for minutes.
PLAY_WAIT = 600.0


async def play(
    base: str,
    rehearsal: Rehearsal,
    *,
    rate: float,
    duration: float,
    stop: asyncio.Event,
    log: Callable[[str], None],
):
    """Connect a phone per character and the assistant's dashboard to the
    server at ``base`` ("http://host:port"), then play the evening at
    ``rate`` starts a minute for ``duration`` seconds (``inf``: until
    ``stop``; what is in flight then is cancelled), as ``bench.load.evening``
    plays the bench's evening rows, a side calling a narrator to
    :data:`CALL_SHARE` of the results. Without the dashboard (the server
    refused its view) no mob scene or called roll starts. Sockets are closed
    however it ends. Returns ``(result, plan counts)``: the
    ``bench.report.Result`` of the results seen on the phones."""
    from bench import load
    from bench.report import Result

    ws = "ws" + base.removeprefix("http")
    beats = load.Heartbeats()
    phones = [
        load.Conn(f"{ws}/ws/play/{pk}/", base, cookie=cookie, ident=pk, beats=beats)
        for pk, cookie in rehearsal.phones
    ]
    dashboard = load.Conn(
        f"{ws}/ws/narrate/{rehearsal.session}/", base, cookie=rehearsal.assistant, beats=beats
    )
    target = load.Narrator(phones, [dashboard])
    plan = _plan(target, rehearsal)
    plan.call_share = CALL_SHARE
    result = Result("rehearsal", base, "narrator")
    sweeping = asyncio.create_task(_sweep(target))
    try:
        gate = asyncio.Semaphore(20)

        async def page(phone: load.Conn) -> None:
            async with gate:
                await phone.load_page()  # her start form, as a browser opens the app

        load.set_wait(CONNECT_WAIT)
        await asyncio.gather(*(page(phone) for phone in phones))
        _, failed = await load.open_all(phones, concurrency=50)
        refused: Counter = Counter()
        await load.open_all([dashboard], concurrency=1, errors=refused)
        plan.narrated = not refused
        if refused:
            why = ", ".join(refused)
            log(
                f"The simulated narrator's dashboard did not connect ({why}; the server's log "
                "may say why): no mob scene or called roll tonight."
            )
        log(f"{len(phones) - failed} of {len(phones)} phones connected; playing.")
        load.set_wait(PLAY_WAIT)
        if not math.isinf(duration):  # then it stops as on Ctrl-C: nothing left in flight
            asyncio.get_running_loop().call_later(duration, stop.set)
        if not stop.is_set():
            await load.evening(
                target,
                plan=plan,
                rate=rate / 60,
                duration=math.inf,
                result=result,
                on_ready=lambda: None,
                stop=stop,
            )
    finally:
        sweeping.cancel()
        await asyncio.gather(*(conn.close() for conn in [*phones, dashboard]))
    return result, plan.counts


def _plan(target, rehearsal: Rehearsal):
    """The evening plan of the rehearsal's ruleset (``bench.load``)."""
    from bench import load
    from challenges.rules import get_ruleset

    rules = get_ruleset(rehearsal.ruleset)
    if rules.dice_pools:
        return load.StoryEvening(target, lambda pk: rehearsal.skills.get(pk, []))
    if rules.test_pools:
        return load.BnsEvening(target)
    return load.Evening(target, CATEGORIES, lambda pk: rehearsal.negatives.get(pk, {}))


async def _sweep(target) -> None:
    """Forget, every :data:`SWEEP_SECONDS`, the dashboard rows the plans wait
    for (the bench measures them; a rehearsal that runs for hours would keep
    every one)."""
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        seen, target.dashboard_seen = target.dashboard_seen, []
        for _, futures in seen:
            for future in futures:
                future.cancel()


def tally(session_id: int) -> dict[str, int]:
    """What the session holds now: challenges, resolved ones, events, narrator
    calls not yet ruled, dice rolls and those rolled."""
    from challenges.models import Challenge, DiceRoll, Event

    challenges = Challenge.objects.filter(session_id=session_id)
    rolls = DiceRoll.objects.filter(session_id=session_id)
    return {
        "challenges": challenges.count(),
        "resolved": challenges.filter(stage="resolved").count(),
        "calls": challenges.filter(called_at__isnull=False).count(),
        "rolls": rolls.count(),
        "rolled": rolls.filter(rolled_at__isnull=False).count(),
        "events": Event.objects.filter(session_id=session_id).count(),
    }
