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

from challenges.models import (
    POOLS_KIND,
    Challenge,
    ClientAction,
    Event,
    Test,
    TraitLoss,
)
from challenges.models import MobScene as MobSceneRow
from challenges.rules import ChallengeState, HealthLevel, Kind, MobScene, Stage, bns
from characters.models import Presence


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


def _check_challenge(
    challenge: Challenge,
    tests,
    losses,
    kinds: Counter,
    taken: list[tuple[int, int, str]],
    mob_losses: tuple | None,
    missing: dict,
) -> list[str]:
    """One Trait-bid challenge (or one of test pools): its columns, Test rows,
    lost Traits (:func:`_check_losses`, adding what its rows lack to
    ``missing``) and events agree with its state."""
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
    if resolved and challenge.resolved_at is None:
        problems.append(f"{name}: resolved without resolved_at")
    problems += _check_losses(challenge, parsed, losses, taken, mob_losses, missing)
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


def _check_losses(
    challenge: Challenge,
    parsed: ChallengeState,
    losses,
    taken: list[tuple[int, int, str]],
    mob_losses: tuple | None,
    missing: dict,
) -> list[str]:
    """A challenge's TraitLoss rows against what its history explains: a
    resolved challenge's losses (a mob scene's test: its target's, each
    other attacker's bid included, ``mob_losses``), plus each copy a narrator
    took away on it (``taken``: (character id, Trait id, name) per
    "trait_taken" event). Rows beyond that are reported here; rows short of
    it may be copies a narrator gave back (which deletes a row of that Trait
    tonight, of any challenge), so each shortfall goes into ``missing``
    under (session, character, Trait), with this challenge's line, for
    :func:`_check_given_back`. Compared by the Trait bid (its id), whatever
    it is called now; by name for a state saved without ids."""
    name = f"challenge #{challenge.pk}"
    resolved = parsed.stage is Stage.RESOLVED
    source = mob_losses if resolved and mob_losses is not None else parsed.losses
    by_id = all(x.trait_id is not None for x in source)
    stored = Counter(
        (loss.character_id, loss.trait_id if by_id else loss.trait.name) for loss in losses
    )
    from_state = Counter(
        (x.character_id, x.trait_id if by_id else x.trait) for x in (source if resolved else ())
    )
    ruled = Counter(
        (character_id, trait_id if by_id else trait) for character_id, trait_id, trait in taken
    )
    expected = from_state + ruled
    problems = []
    excess = stored - expected
    line = (
        f"{name}: lost Traits {sorted(stored.elements())} "
        f"but state says {sorted(expected.elements())}"
    )
    if excess:
        problems.append(
            line if resolved else f"{name}: {sum(excess.values())} lost Traits but not resolved"
        )
    for (character_id, trait), count in (expected - stored).items():
        key = (challenge.session_id, character_id, trait if by_id else None)
        missing.setdefault(key, []).append((count, line))
    category = parsed.category.value if parsed.category else None
    wrong_trait = [
        loss.pk
        for loss in losses
        if loss.trait.character_id != loss.character_id
        or loss.session_id != challenge.session_id
        or (
            loss.trait.category != category
            and (loss.character_id, loss.trait_id if by_id else loss.trait.name) not in ruled
        )
    ]
    if wrong_trait:
        problems.append(f"{name}: lost Traits {wrong_trait} belong elsewhere")
    return problems


def _check_given_back(missing: dict, given_back: Counter) -> list[str]:
    """The lost Traits missing from challenges (``missing``, from
    :func:`_check_losses`) that no give-back explains: per session,
    character and Trait, more copies missing than "trait_given_back" events
    (``given_back``, same keys). A give-back may also have deleted a loss no
    challenge caused (a health clock's), so fewer missing is no fault. A
    state saved without Trait ids (key None) has no give-back to match."""
    lines: set[str] = set()
    for key, shortfalls in missing.items():
        if sum(count for count, _ in shortfalls) > given_back[key]:
            lines |= {line for _, line in shortfalls}
    return sorted(lines)


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


#: An Event kind → the client action whose move writes exactly one such
#: event, by its actor (the kinds :func:`_action_of` reads case by case
#: are not here). Events with no actor (an NPC's answers, the session's end
#: voiding what is open) are nobody's move.
_SIGNATURE = {
    "threw": "challenge.throw",
    "relented": "challenge.relent",
    "negative_named": "challenge.negative",
    "blood_spent": "challenge.blood",
    "preempted": "challenge.preempt",
    "accepted": "challenge.accept",
    "narrator_retest": "challenge.force_retest",
    "settled": "challenge.settle",
    "trait_given_back": "challenge.trait",
    "trait_taken": "challenge.trait",
    "narrator_called": "challenge.call_narrator",
    "call_dismissed": "challenge.dismiss_call",
    "presence_set": "presence.set",
    "npc_set": "npc.set",
    "time_out": "session.time_out",
    "resume": "session.resume",
    "session_started": "session.start",
    "mob_opened": "mob.open",
    "mob_chose": "mob.choose",
    "mob_bid": "mob.bid",
    "mob_gave_up": "mob.bid",
    "mob_hurt": "mob.hurt",
    "mob_voided": "mob.void",
    "track_mark": "track.mark",
    "track_heal": "track.heal",
}

#: Issue 12: an Event kind of a challenge of test pools → the one action writing it.
_POOLED_ONE_EVENT = {
    "opened": "bns.open",
    "pools": "bns.answer",
    "threw": "bns.throw",
    "retest": "bns.retest",
    "voided": "bns.void",
    "settled": "bns.settle",
}

_OPENED = {"opposed": "challenge.open", "static": "static.open", "simple": "simple.open"}

#: Actions checked one way only. A repeated Time out or Resume changes
#: nothing and writes no event (ids ≥ moves); a session is also started from
#: a page or the admin, with no id (ids ≤ moves).
_IDS_AT_LEAST_MOVES = {"session.time_out", "session.resume"}
_IDS_AT_MOST_MOVES = {"session.start"}

#: Families whose moves write only engine events that other moves of the
#: family write too (a fight's turn starts at its start or at a narrator's
#: "end turn"; a health clock's level changes by a move or by the clock), and
#: a bns accept, which writes only the "resolved" that a resolving throw
#: writes too: the history cannot count their moves, so their ids are not
#: checked.
_UNCOUNTED = ("combat.", "fight.", "clock.", "bns.accept")


class _History:
    """What :func:`_action_of` needs beyond one event: per challenge, the
    kind and time of its latest event by an actor (the move before, or an
    earlier event of the same move: one move's events share their time);
    how many characters chose in each mob scene; the sessions ended by
    starting the next."""

    def __init__(self):
        self.latest: dict[int, tuple[str, object]] = {}
        self.chose = Counter(
            (data or {}).get("mob")
            for data in Event.objects.filter(kind="mob_chose").values_list("data", flat=True)
        )
        self.ended_by_start = {
            (data or {}).get("previous")
            for data in Event.objects.filter(kind="session_started").values_list("data", flat=True)
        }


def _action_of(event: tuple, history: _History) -> str | None:
    """The client action of the move that wrote ``event`` (actor id, kind,
    data, challenge id, challenge kind, prepared static id, time, session
    id) as its one signature event, or None for the other events of a move."""
    _, kind, data, challenge_id, challenge_kind, prepared, at, session_id = event
    data = data or {}
    before = history.latest.get(challenge_id) if challenge_id is not None else None
    if kind.startswith("roll_") and "action" in data:
        return data["action"]  # issue 13: each move of services.rolls names its action
    if challenge_kind == POOLS_KIND:  # issue 12: services.bns's moves, and the calls
        return _POOLED_ONE_EVENT.get(kind, _SIGNATURE.get(kind))
    theirs = challenge_kind != Kind.OPPOSED and data.get("side") == "defender"
    if kind == "opened":
        # A mob scene's test opens in the mob move that completed its bids.
        if "mob" in data:
            return None
        return "static.prepared" if prepared else _OPENED.get(data.get("kind"))
    if kind == "bid":
        if data.get("added"):
            return "challenge.add_bid"
        return "challenge.bid" if challenge_kind == Kind.STATIC else None
    if kind == "responded":
        return "challenge.bid"
    if kind == "declared":
        return None if theirs else "challenge.declare"
    if kind == "retest_called":
        # A static challenge's object calls its retest in the player's move.
        return None if theirs else "challenge.retest"
    if kind == "retest_answered":
        # Answered in the very move that called it: a static challenge's
        # difficulty, or a count that stands (ukm).
        return None if before == ("retest_called", at) else "challenge.answer"
    if kind == "voided":
        # A narrator ending a mob scene voids its open test in the same move.
        return None if before is not None and before[0] == "mob_voided" else "challenge.void"
    if kind == "mob_revealed":
        # The last choice closes the choosing by itself; else a narrator did.
        return (
            "mob.close" if history.chose[data.get("mob")] < len(data.get("choices", ())) else None
        )
    if kind == "mob_leader":
        return "mob.leader" if "by" in data else None  # else the only attacker leads
    if kind == "session_ended":
        return None if session_id in history.ended_by_start else "session.end"
    return _SIGNATURE.get(kind)


def _check_client_actions() -> list[str]:
    """Every recorded client action id belongs to a move that was applied, and
    every applied move has its id: per user and action, the ids
    (``ClientAction``) and the moves the history shows (one signature event
    each, :func:`_action_of`) agree."""
    problems = []
    actions = Counter(
        (row["user_id"], row["action"]) for row in ClientAction.objects.values("user_id", "action")
    )
    history = _History()
    moves: Counter = Counter()
    for event in (
        Event.objects.filter(actor__isnull=False)
        .order_by("id")
        .values_list(
            "actor_id",
            "kind",
            "data",
            "challenge_id",
            "challenge__kind",
            "challenge__prepared_id",
            "created_at",
            "session_id",
        )
    ):
        action = _action_of(event, history)
        if action is not None:
            moves[(event[0], action)] += 1
        if event[3] is not None:
            history.latest[event[3]] = (event[1], event[6])
    for key in sorted(set(actions) | set(moves)):
        user_id, action = key
        if action.startswith(_UNCOUNTED):
            continue
        if action in _IDS_AT_LEAST_MOVES:
            if moves[key] > actions[key]:
                problems.append(
                    f"user #{user_id}: {moves[key]} '{action}' events "
                    f"but only {actions[key]} action ids"
                )
        elif actions[key] != moves[key] and not (
            action in _IDS_AT_MOST_MOVES and actions[key] < moves[key]
        ):
            problems.append(
                f"user #{user_id}: {actions[key]} '{action}' action ids "
                f"but {moves[key]} moves applied"
            )
    return problems


def _mob_losses(ids: list[int]) -> dict[int, tuple]:
    """A mob scene's settled test (challenge id) → its target's losses in the
    scene's state: the test's own and each other attacker's bid, which the
    scene records on the test (services.mob)."""
    scene_of = {
        challenge_id: data["mob"]
        for challenge_id, data in Event.objects.filter(
            challenge_id__in=ids, kind="opened", data__has_key="mob"
        ).values_list("challenge_id", "data")
    }
    if not scene_of:
        return {}
    scenes = {
        row.pk: MobScene.from_dict(row.state)
        for row in MobSceneRow.objects.filter(pk__in=set(scene_of.values()))
    }
    defenders = dict(
        Challenge.objects.filter(pk__in=list(scene_of)).values_list("pk", "defender_id")
    )
    found = {}
    for challenge_id, mob_id in scene_of.items():
        scene = scenes.get(mob_id)
        for target in scene.targets if scene is not None else ():
            if target.defender == defenders[challenge_id] and target.outcome is not None:
                found[challenge_id] = target.losses
    return found


def find_inconsistencies(session_id: int | None = None) -> list[str]:
    """Check every challenge (of one session if ``session_id`` is given) and
    return one line per broken invariant; an empty list means consistent.

    Invariants: a challenge's stage, outcome and kind agree with its ``state``;
    its Test rows equal ``state["tests"]``; its lost Traits are what its
    history explains (a resolved challenge's ``state["losses"]``, a mob
    scene's test its target's, plus the copies a narrator took away on it;
    a copy missing only where a narrator gave one of that Trait back that
    session); its history has one "opened", one "threw" per throw in its
    state, and one "resolved" if and only if it is resolved; a character
    wounded N times in a session is N levels down (as far as the history
    tells); and, over the whole database, every client action id matches
    one applied move (``ClientAction``, :func:`_check_client_actions`).
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
    taken: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    given_back: Counter = Counter()
    for challenge_id, session, kind, data in Event.objects.filter(
        challenge_id__in=ids, kind__in=("trait_taken", "trait_given_back")
    ).values_list("challenge_id", "session_id", "kind", "data"):
        if kind == "trait_taken":
            taken[challenge_id].append((data["character"], data["trait_id"], data["trait"]))
        else:
            given_back[(session, data["character"], data["trait_id"])] += 1
    mob_losses = _mob_losses(ids)
    problems: list[str] = []
    missing: dict = {}
    wounds: Counter[tuple[int, int]] = Counter()
    for challenge in challenges:
        problems += _check_challenge(
            challenge,
            tests[challenge.pk],
            losses[challenge.pk],
            kinds[challenge.pk],
            taken[challenge.pk],
            mob_losses.get(challenge.pk),
            missing,
        )
        if challenge.stage == Stage.RESOLVED:
            for character_id in challenge.state.get("wounds", []):
                wounds[(challenge.session_id, character_id)] += 1
    problems += _check_given_back(missing, given_back)
    problems += _check_health(wounds)
    if session_id is None:
        problems += _check_client_actions()
    return problems
