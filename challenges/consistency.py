"""Invariants over the stored play history, checked after the fact.

Every move is one transaction (``challenges.services``), so no crash, retry or
race may leave the database in a state that no sequence of whole moves could
produce. ``find_inconsistencies()`` reads everything and says what breaks;
``manage.py checkstate`` prints it. Use it after an incident (a worker killed,
a database failover) and in the fault tests.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from django.db.models import Count

from challenges.models import POOLS_KIND, Challenge, ClientAction, Event, Test, TraitLoss
from challenges.rules import ChallengeState, HealthLevel, Kind, Stage, bns
from characters.models import Presence

# A client action → the Event kinds its move writes exactly once, by that actor.
# Bids and declarations are counted apart (their event kinds are shared).
_ONE_EVENT_PER_ACTION = {
    "challenge.open": "opened",
    "static.open": "opened",
    "simple.open": "opened",
    "challenge.throw": "threw",
    "challenge.relent": "relented",
    "challenge.void": "voided",
    "presence.set": "presence_set",
}


def _test_row(test: Test) -> dict:
    return {
        "challenger_throw": test.challenger_throw or None,
        "defender_throw": test.defender_throw or None,
        "challenger_declared": test.challenger_declared,
        "defender_declared": test.defender_declared,
        "winner": test.winner or None,
        "tie": test.tie,
        "retest": test.retest or None,
        "by": test.by or None,
    }


def _check_pooled(challenge: Challenge, tests, losses, kinds: Counter) -> list[str]:
    """Issue 12: a challenge of test pools: its state parses, its stage and
    outcome columns are the state's, a Test row per test with the state's
    throws, one "opened", one "resolved" once over, no Trait lost."""
    from challenges.services.bns import OUTCOME_OF, STAGE_OF

    name = f"challenge #{challenge.pk}"
    try:
        parsed = bns.BnsChallengeState.from_dict(challenge.state)
    except (KeyError, TypeError, ValueError) as error:
        return [f"{name}: state does not parse ({error!r})"]
    problems = []
    outcome = OUTCOME_OF[parsed.result].value if parsed.result else ""
    if (challenge.stage, challenge.outcome) != (STAGE_OF[parsed.stage].value, outcome):
        problems.append(f"{name}: stage/outcome {challenge.stage}/{challenge.outcome or '-'}")
    stored = [
        (t.challenger_throw or None, t.defender_throw or None)
        for t in sorted(tests, key=lambda t: t.number)
    ]
    expected = [
        (
            t.attacker_throw.value if t.attacker_throw else None,
            t.defender_throw.value if t.defender_throw else None,
        )
        for t in parsed.tests
    ]
    if stored != expected:
        problems.append(f"{name}: Test rows do not match the tests in its state")
    resolved = parsed.stage is bns.BnsStage.RESOLVED
    if kinds["opened"] != 1 or kinds["resolved"] != (1 if resolved else 0):
        problems.append(f"{name}: 'opened'/'resolved' events do not match its state")
    if losses:
        problems.append(f"{name}: a challenge of test pools lost Traits")
    return problems


def _check_challenge(challenge: Challenge, tests, losses, kinds: Counter) -> list[str]:
    if challenge.pooled:
        return _check_pooled(challenge, tests, losses, kinds)
    name = f"challenge #{challenge.pk}"
    state = challenge.state
    try:
        parsed = ChallengeState.from_dict(state)
    except (KeyError, TypeError, ValueError) as error:
        return [f"{name}: state does not parse ({error!r})"]
    problems = []
    outcome = parsed.outcome.value if parsed.outcome else ""
    if (challenge.stage, challenge.outcome) != (parsed.stage.value, outcome):
        problems.append(
            f"{name}: stage/outcome {challenge.stage}/{challenge.outcome or '-'} "
            f"but state says {parsed.stage.value}/{outcome or '-'}"
        )
    if challenge.kind != parsed.kind.value:
        problems.append(f"{name}: kind {challenge.kind} but state says {parsed.kind.value}")
    expected_tests = [t.to_dict() for t in parsed.tests]
    stored_tests = [_test_row(t) for t in sorted(tests, key=lambda t: t.number)]
    if [t.number for t in sorted(tests, key=lambda t: t.number)] != list(range(1, len(tests) + 1)):
        problems.append(f"{name}: test numbers are not 1..{len(tests)}")
    if stored_tests != expected_tests:
        problems.append(
            f"{name}: {len(stored_tests)} Test rows do not match the "
            f"{len(expected_tests)} tests in its state"
        )
    resolved = parsed.stage is Stage.RESOLVED
    # By the Trait bid (its id), whatever it is called now; by name for a
    # state saved without ids.
    by_id = all(x.trait_id is not None for x in parsed.losses)
    stored_losses = Counter(
        (loss.character_id, loss.trait_id if by_id else loss.trait.name) for loss in losses
    )
    if resolved:
        expected_losses = Counter(
            (x.character_id, x.trait_id if by_id else x.trait) for x in parsed.losses
        )
        if stored_losses != expected_losses:
            problems.append(
                f"{name}: lost Traits {sorted(stored_losses.elements())} "
                f"but state says {sorted(expected_losses.elements())}"
            )
        if challenge.resolved_at is None:
            problems.append(f"{name}: resolved without resolved_at")
    elif stored_losses:
        problems.append(f"{name}: {sum(stored_losses.values())} lost Traits but not resolved")
    wrong_trait = [
        loss.pk
        for loss in losses
        if loss.trait.character_id != loss.character_id
        or loss.session_id != challenge.session_id
        or loss.trait.category != (parsed.category.value if parsed.category else None)
    ]
    if wrong_trait:
        problems.append(f"{name}: lost Traits {wrong_trait} belong elsewhere")
    if kinds["resolved"] != (1 if resolved else 0):
        problems.append(
            f"{name}: {kinds['resolved']} 'resolved' events, expected {1 if resolved else 0}"
        )
    if kinds["opened"] != 1:
        problems.append(f"{name}: {kinds['opened']} 'opened' events, expected 1")
    if parsed.kind is Kind.OPPOSED:
        throws = sum(
            (t.challenger_throw is not None) + (t.defender_throw is not None) for t in parsed.tests
        )
    else:
        throws = sum(t.challenger_throw is not None for t in parsed.tests)
    if kinds["threw"] != throws:
        problems.append(f"{name}: {kinds['threw']} 'threw' events for {throws} throws in its state")
    return problems


def _check_health(wounds: dict[tuple[int, int], int]) -> list[str]:
    """A character wounded N times in a session is at least N levels below
    Healthy (capped at Dead). Healing in the admin is not in the history, so a
    healed character shows up here too: read such a line with the narrators."""
    problems = []
    presences = {
        (p.session_id, p.character_id): p.health
        for p in Presence.objects.filter(
            session_id__in={s for s, _ in wounds}, character_id__in={c for _, c in wounds}
        )
    }
    for (session_id, character_id), count in sorted(wounds.items()):
        health = presences.get((session_id, character_id))
        if health is None:
            problems.append(
                f"character #{character_id} was wounded in session #{session_id} but is not present"
            )
        elif health < min(count, HealthLevel.DEAD):
            problems.append(
                f"character #{character_id} took {count} wounds in session #{session_id} "
                f"but her health is only {HealthLevel(health).label}"
            )
    return problems


def _check_client_actions() -> list[str]:
    """Every recorded client action id belongs to a move that was applied, and
    every applied move has its id: per user, actions and their events agree."""
    problems = []
    actions = Counter(
        (row["user_id"], row["action"]) for row in ClientAction.objects.values("user_id", "action")
    )
    events = Counter()
    for actor_id, kind, data, challenge_kind in Event.objects.filter(
        actor__isnull=False
    ).values_list("actor_id", "kind", "data", "challenge__kind"):
        side = (data or {}).get("side")
        if kind.startswith("roll_") and "action" in (data or {}):
            # Issue 13: each move of services.rolls writes one Event naming its action.
            events[(actor_id, data["action"])] += 1
            continue
        if challenge_kind == POOLS_KIND:  # issue 12: services.bns's moves
            if kind in _POOLED_ONE_EVENT:
                events[(actor_id, _POOLED_ONE_EVENT[kind])] += 1
            continue
        if kind == "responded" or (kind == "bid" and challenge_kind == Kind.STATIC):
            events[(actor_id, "challenge.bid")] += 1
        elif kind == "declared" and not (challenge_kind != Kind.OPPOSED and side == "defender"):
            events[(actor_id, "challenge.declare")] += 1
        elif kind in ("time_out", "resume"):
            events[(actor_id, f"session.{kind}")] += 1
        for action, event_kind in _ONE_EVENT_PER_ACTION.items():
            if kind == event_kind and (kind != "opened" or _opened_by(action, data)):
                events[(actor_id, action)] += 1
    for key in sorted(set(actions) | set(events)):
        user_id, action = key
        if action.startswith("session."):
            # A repeated Time out changes nothing and writes no event.
            if events[key] > actions[key]:
                problems.append(
                    f"user #{user_id}: {events[key]} '{action}' events "
                    f"but only {actions[key]} action ids"
                )
        elif actions[key] != events[key]:
            problems.append(
                f"user #{user_id}: {actions[key]} '{action}' action ids "
                f"but {events[key]} moves applied"
            )
    return problems


#: Issue 12: an Event kind of a challenge of test pools → the one action writing it.
_POOLED_ONE_EVENT = {
    "opened": "bns.open",
    "pools": "bns.answer",
    "threw": "bns.throw",
    "retest": "bns.retest",
    "voided": "bns.void",
    "settled": "bns.settle",
}


def _opened_by(action: str, data: dict) -> bool:
    kind = (data or {}).get("kind")
    return {"challenge.open": "opposed", "static.open": "static", "simple.open": "simple"}[
        action
    ] == kind


def find_inconsistencies(session_id: int | None = None) -> list[str]:
    """Check every challenge (of one session if ``session_id`` is given) and
    return one line per broken invariant; an empty list means consistent.

    Invariants: a challenge's stage, outcome and kind agree with its ``state``;
    its Test rows equal ``state["tests"]``; a resolved challenge's lost Traits
    equal ``state["losses"]`` and an unresolved one has none; its history has
    one "opened", one "threw" per throw in its state, and one "resolved" if and
    only if it is resolved; a character wounded N times in a session is N
    levels down (as far as the history tells); and, over the whole database,
    every client action id matches one applied move (``ClientAction``).
    Reads the whole table set; seconds for a season of play.
    """
    challenges = Challenge.objects.order_by("pk")
    if session_id is not None:
        challenges = challenges.filter(session_id=session_id)
    ids = list(challenges.values_list("pk", flat=True))
    tests = defaultdict(list)
    for test in Test.objects.filter(challenge_id__in=ids):
        tests[test.challenge_id].append(test)
    losses = defaultdict(list)
    for loss in TraitLoss.objects.filter(challenge_id__in=ids).select_related("trait"):
        losses[loss.challenge_id].append(loss)
    kinds: dict[int, Counter] = defaultdict(Counter)
    for challenge_id, kind, n in (
        Event.objects.filter(challenge_id__in=ids)
        .values("challenge_id", "kind")
        .annotate(n=Count("id"))
        .values_list("challenge_id", "kind", "n")
    ):
        kinds[challenge_id][kind] = n
    problems: list[str] = []
    wounds: Counter[tuple[int, int]] = Counter()
    for challenge in challenges:
        problems += _check_challenge(
            challenge, tests[challenge.pk], losses[challenge.pk], kinds[challenge.pk]
        )
        if challenge.stage == Stage.RESOLVED:
            for character_id in challenge.state.get("wounds", []):
                wounds[(challenge.session_id, character_id)] += 1
    problems += _check_health(wounds)
    if session_id is None:
        problems += _check_client_actions()
    return problems
