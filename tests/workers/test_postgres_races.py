"""Races on PostgreSQL with real transactions and row locks.

Each thread has its own database connection (closed when it ends); threads meet
at a barrier and move at the same instant. Run with ``DATABASE_URL`` pointing
at PostgreSQL; on SQLite (one writer at a time) these tests skip.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection
from django.utils import timezone

from challenges import rules, services
from challenges.consistency import find_inconsistencies
from challenges.models import Challenge, ClientAction, Event, Test, TraitLoss
from challenges.rules import Category
from tests.factories import make_character, make_user
from tests.workers.conftest import strong_pairs

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHALLENGES = 1000  # both throws committed at the same instant, this many times
PAIRS = 50  # pairs of characters; each pair has CHALLENGES / PAIRS challenges
THREAD_PAIRS = 4  # pairs of racing threads (one per side)
TIME_OUT_ROUNDS = 150  # a time out racing the resolving throw, this many times
BEATS = {"rock": "scissors", "scissors": "paper", "paper": "rock"}


def _id() -> str:
    return uuid.uuid4().hex


def run_threads(targets: list[Callable[[], None]], timeout: float = 400.0) -> None:
    """Run each target in its own thread (own database connection, closed at
    the end); re-raise the first error."""
    errors: list[BaseException] = []

    def wrap(target):
        try:
            target()
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=wrap, args=(t,), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a racing thread hung (deadlock?)"
    if errors:
        raise errors[0]


@pytest.fixture
def chronicle(transactional_db):
    """A narrator, an open session and ``PAIRS`` pairs of strong characters."""
    return strong_pairs(PAIRS, 200)


def answered_challenges(session, pairs, per_pair: int) -> list[tuple[int, tuple, tuple]]:
    """``per_pair`` opposed challenges for each pair, opened and answered (one
    "Strong" each), waiting on both throws: what ``challenge_open`` and
    ``challenge_bid`` would have written (rows, events, client action ids, version
    2), prepared in bulk so the race itself gets the time. Returns
    ``[(challenge id, challenger, defender), ...]`` in play order."""
    now = time.time()
    rows, events, actions, order = [], [], [], []
    for challenger, defender in pairs:
        (c, c_player), (d, d_player) = challenger, defender
        c_view, d_view = services.combatant(c, session), services.combatant(d, session)
        for _ in range(per_pair):
            opened = rules.open_opposed(
                ruleset=session.chronicle.ruleset,
                challenger=c_view,
                defender=d_view,
                category=Category.PHYSICAL,
                bids=["Strong"],
                now=now,
            )
            answered = rules.respond(opened.state, bids=["Strong"], now=now)
            state = answered.state
            rows.append(
                Challenge(
                    session=session,
                    kind="opposed",
                    challenger=c,
                    defender=d,
                    category="physical",
                    stage=state.stage.value,
                    stage_since=timezone.now(),
                    state=state.to_dict(),
                    version=2,
                )
            )
            events.append(
                [(e, c_player) for e in opened.events] + [(e, d_player) for e in answered.events]
            )
            actions += [
                ClientAction(user=c_player, msg_id=_id(), action="challenge.open"),
                ClientAction(user=d_player, msg_id=_id(), action="challenge.bid"),
            ]
            order.append((challenger, defender))
    Challenge.objects.bulk_create(rows)
    Event.objects.bulk_create(
        Event(session=session, challenge=row, kind=e.kind, data=e.data, actor=actor)
        for row, pairs_ in zip(rows, events, strict=True)
        for e, actor in pairs_
    )
    ClientAction.objects.bulk_create(actions)
    Test.objects.bulk_create(
        Test(challenge=row, number=number, tie=False)
        for row in rows
        for number, _ in enumerate(row.state["tests"], start=1)
    )
    return [(row.pk, c, d) for row, (c, d) in zip(rows, order, strict=True)]


def test_both_throws_at_the_same_instant_resolve_each_challenge_exactly_once(chronicle):
    session = chronicle["session"]
    prepared = answered_challenges(session, chronicle["pairs"], CHALLENGES // PAIRS)
    assert find_inconsistencies() == []
    results: Counter[str] = Counter()
    lock = threading.Lock()

    def thread_pair(chunk):
        barrier = threading.Barrier(2)

        def side_loop(side):
            for number, (challenge_id, challenger, defender) in chunk:
                challenger_throw = ("rock", "paper", "scissors")[number % 3]
                # Even challenges the challenger wins, odd ones the defender.
                if side == "challenger":
                    mine, (character, player) = challenger_throw, challenger
                else:
                    character, player = defender
                    mine = (
                        BEATS[challenger_throw]
                        if number % 2 == 0
                        else next(t for t, b in BEATS.items() if b == challenger_throw)
                    )
                barrier.wait(30)
                done = services.challenge_throw(
                    challenge_id=challenge_id,
                    character=character,
                    throw=mine,
                    user=player,
                    msg_id=_id(),
                )
                with lock:
                    results[done.stage] += 1

        return [lambda: side_loop("challenger"), lambda: side_loop("defender")]

    numbered = list(enumerate(prepared))
    chunks = [numbered[k::THREAD_PAIRS] for k in range(THREAD_PAIRS)]
    began = time.monotonic()
    run_threads(list(itertools.chain.from_iterable(thread_pair(chunk) for chunk in chunks)))
    elapsed = time.monotonic() - began
    print(
        f"{CHALLENGES} pairs of simultaneous throws on {THREAD_PAIRS} pairs of threads "
        f"in {elapsed:.1f}s"
    )

    challenges = list(Challenge.objects.filter(session=session))
    assert len(challenges) == CHALLENGES
    # Of each pair of simultaneous throws one saw "throws", the other resolved it.
    assert results == {"throws": CHALLENGES, "resolved": CHALLENGES}
    resolved = Counter(
        Event.objects.filter(session=session, kind="resolved").values_list(
            "challenge_id", flat=True
        )
    )
    tests = Counter(
        Test.objects.filter(challenge__session=session).values_list("challenge_id", flat=True)
    )
    losses = Counter(
        TraitLoss.objects.filter(session=session).values_list("challenge_id", "character_id")
    )
    for challenge in challenges:
        assert challenge.stage == "resolved"
        assert resolved[challenge.pk] == 1
        assert tests[challenge.pk] == 1
        # opened, answered, then one version per throw.
        assert challenge.version == 4
        loser = "defender" if challenge.outcome == "challenger_wins" else "challenger"
        loser_id = getattr(challenge, f"{loser}_id")
        assert losses[(challenge.pk, loser_id)] == len(challenge.state[f"{loser}_bids"]) == 1
        assert sum(n for (cid, _), n in losses.items() if cid == challenge.pk) == 1
    outcomes = Counter(c.outcome for c in challenges)
    assert outcomes == {"challenger_wins": CHALLENGES // 2, "defender_wins": CHALLENGES // 2}
    assert find_inconsistencies() == []


def test_nothing_resolves_after_a_committed_time_out(chronicle):
    session, narrator = chronicle["session"], chronicle["narrator"]
    pairs = chronicle["pairs"]
    prepared = answered_challenges(session, pairs, TIME_OUT_ROUNDS // PAIRS)
    assert len(prepared) == TIME_OUT_ROUNDS
    # Interleave the pairs so that no character piles up challenges left waiting.
    prepared = [prepared[i::PAIRS] for i in range(PAIRS)]
    prepared = [p for group in itertools.zip_longest(*prepared) for p in group if p]
    barrier = threading.Barrier(2)
    outcome: Counter[str] = Counter()

    def player_loop():
        for round_, (challenge_id, challenger, defender) in enumerate(prepared):
            services.challenge_throw(
                challenge_id=challenge_id,
                character=challenger[0],
                throw="rock",
                user=challenger[1],
                msg_id=_id(),
            )
            barrier.wait(30)
            if round_ % 2:
                time.sleep(0.0005 * (round_ % 7))  # shift the interleaving a little
            try:
                services.challenge_throw(
                    challenge_id=challenge_id,
                    character=defender[0],
                    throw="scissors",
                    user=defender[1],
                    msg_id=_id(),
                )
                outcome["resolved first"] += 1
            except services.ActionRefused as refused:
                assert "Time out" in str(refused)
                outcome["refused"] += 1
            barrier.wait(30)  # both done
            barrier.wait(30)  # resumed

    def narrator_loop():
        for round_ in range(TIME_OUT_ROUNDS):
            barrier.wait(30)
            if not round_ % 2:
                time.sleep(0.0005 * (round_ % 5))
            services.session_time_out(session=session, user=narrator, msg_id=_id())
            barrier.wait(30)
            services.session_resume(session=session, user=narrator, msg_id=_id())
            barrier.wait(30)

    began = time.monotonic()
    run_threads([player_loop, narrator_loop])
    print(
        f"{TIME_OUT_ROUNDS} time outs racing a resolving throw in "
        f"{time.monotonic() - began:.1f}s: {dict(outcome)}"
    )
    assert sum(outcome.values()) == TIME_OUT_ROUNDS

    # Walk the history in id order: no player's move is recorded while paused.
    paused = False
    time_outs = 0
    for kind, challenge_id in Event.objects.filter(session=session).values_list(
        "kind", "challenge_id"
    ):
        if kind == "time_out":
            paused, time_outs = True, time_outs + 1
        elif kind == "resume":
            paused = False
        else:
            assert not paused, f"'{kind}' of challenge #{challenge_id} recorded during a time out"
    assert time_outs == TIME_OUT_ROUNDS
    # Every refused throw left its challenge waiting and its action id unclaimed.
    waiting = Challenge.objects.filter(session=session, stage="throws").count()
    assert waiting == outcome["refused"]
    resolved = Challenge.objects.filter(session=session, stage="resolved").count()
    assert resolved == outcome["resolved first"]
    assert ClientAction.objects.filter(action="challenge.throw").count() == (
        TIME_OUT_ROUNDS + outcome["resolved first"]
    )
    challenger, defender = pairs[0]

    # Once a time out is committed, every move is refused and changes nothing.
    services.session_time_out(session=session, user=narrator, msg_id=_id())
    before = Event.objects.count()
    for challenge in Challenge.objects.filter(session=session, stage="throws"):
        with pytest.raises(services.ActionRefused, match="Time out"):
            services.challenge_throw(
                challenge_id=challenge.pk,
                character=challenge.defender,
                throw="paper",
                user=challenge.defender.player,
                msg_id=_id(),
            )
    with pytest.raises(services.ActionRefused, match="Time out"):
        services.challenge_open(
            session=session,
            challenger=challenger[0],
            defender=defender[0],
            category="physical",
            bids=["Strong"],
            user=challenger[1],
            msg_id=_id(),
        )
    assert Event.objects.count() == before
    assert find_inconsistencies() == []


LAST_COPY_ROUNDS = 40  # one Trait copy bid in two challenges at the same instant


def test_a_last_trait_copy_bid_in_two_challenges_at_once_is_taken_once(chronicle):
    """Two challengers face a defender who holds one copy of "Strong"; he
    answers both challenges with it at the same instant (two phones, or a double
    tap): one answer stands, the other is refused, as it would be one after the
    other (seeds/000 "Initial Bid": a Trait at risk cannot be bid again)."""
    session = chronicle["session"]
    (first, _), (second, _) = chronicle["pairs"][:2]
    rounds = []
    for round_ in range(LAST_COPY_ROUNDS):
        player = make_user(f"lone{round_}")
        lone = make_character(
            session.chronicle, f"Lone {round_}", player, traits=[("Strong", "physical", 1)]
        )
        opened = [
            services.challenge_open(
                session=session,
                challenger=challenger,
                defender=lone,
                category="physical",
                bids=["Strong"],
                user=challenger_player,
                msg_id=_id(),
            ).pk
            for challenger, challenger_player in (first, second)
        ]
        rounds.append((lone, player, opened))
    barrier = threading.Barrier(2)
    accepted: Counter[int] = Counter()
    refusals: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(index):
        for round_, (lone, player, opened) in enumerate(rounds):
            barrier.wait(30)
            try:
                services.challenge_bid(
                    challenge_id=opened[index],
                    character=lone,
                    bids=["Strong"],
                    user=player,
                    msg_id=_id(),
                )
                with lock:
                    accepted[round_] += 1
            except rules.RulesError as error:
                with lock:
                    refusals[str(error)] += 1

    began = time.monotonic()
    run_threads([lambda: answer(0), lambda: answer(1)])
    print(
        f"{LAST_COPY_ROUNDS} double answers with a last copy in {time.monotonic() - began:.1f}s; "
        f"refusals: {dict(refusals)}"
    )
    assert [accepted[r] for r in range(LAST_COPY_ROUNDS)] == [1] * LAST_COPY_ROUNDS
    assert refusals == {"Your 'Strong' is already at risk in another challenge.": LAST_COPY_ROUNDS}
    assert find_inconsistencies() == []


@pytest.mark.parametrize("kind", ["static", "simple"])
def test_a_narrators_open_waits_for_the_characters_row(chronicle, kind):
    """A static challenge or a simple test takes the character's row lock (FOR
    NO KEY UPDATE), as a player's open does: while another move holds it, the
    narrator's open waits (here: gives up after its lock_timeout and changes
    nothing); once it is free, the open goes through."""
    from django.db import OperationalError, transaction

    from characters.models import Character

    session, narrator = chronicle["session"], chronicle["narrator"]
    (character, _), _ = chronicle["pairs"][0]

    def open_() -> Challenge:
        common = dict(session=session, character=character, user=narrator, msg_id=_id())
        if kind == "static":
            return services.static_open(**common, category="physical", difficulty=2)
        return services.simple_test_open(**common)

    refused: list[BaseException] = []

    def narrator_opens():
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")
        try:
            open_()
        except OperationalError as error:
            refused.append(error)

    with transaction.atomic():
        Character.objects.select_for_update(no_key=True).get(pk=character.pk)
        run_threads([narrator_opens], timeout=30)
    assert len(refused) == 1 and "lock timeout" in str(refused[0])
    assert not Challenge.objects.filter(challenger=character).exists()
    assert not ClientAction.objects.filter(action=f"{kind}.open").exists()
    assert open_().challenger_id == character.pk
