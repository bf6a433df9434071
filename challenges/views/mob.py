"""Mob scenes on the screens (issue 11, section 2): :class:`MobView`, one
scene as one viewer may see it (a player: her own choice only until the
choosing closes; a narrator: who has chosen, never whom, until then), with
the moves open to that viewer. Rendered by ``_mob_scenes.html`` (phone) and
``_mob_dashboard.html`` (dashboard)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Case, Value, When

from challenges.heartbeat import MOBS_SHOWN
from challenges.models import MobScene as MobSceneRow
from challenges.rules import (
    ChallengeState,
    MobOutcome,
    MobScene,
    MobStage,
    Side,
    defender_must_bid,
)
from challenges.views.seats import sql_column, sql_table

RECENT_MOBS = MOBS_SHOWN
"""Mob scenes a screen shows, the newest first (the heartbeat's ``mob`` part counts them)."""

STAGE_WORDS = {
    MobStage.CHOOSING: "Choosing targets",
    MobStage.LEADER: "Attackers pick a leader",
    MobStage.BIDS: "Bidding",
    MobStage.TEST: "The test",
    MobStage.HURT: "The defender chooses whom to hurt",
    MobStage.SETTLED: "Settled",
}

OUTCOME_WORDS = {
    MobOutcome.ATTACKERS_WIN: "The attackers win",
    MobOutcome.DEFENDER_WINS: "The defender wins",
    MobOutcome.DRAW: "A draw: everyone loses what she bid",
    MobOutcome.DEFENDER_GAVE_UP: "The defender could not bid and lost at once",
    MobOutcome.VOID: "Void",
}


@dataclass
class TargetView:
    """One target as shown: names, her leader, how she was settled."""

    defender: str
    attackers: list[str]
    dropped: list[str]
    leader: str
    outcome: str
    current: bool
    losses: list[str] = field(default_factory=list)
    wounds: list[str] = field(default_factory=list)
    bid_in: list[str] = field(default_factory=list)
    effect: str = ""


@dataclass
class MobView:
    """One mob scene for one viewer (``me``: her character id; None: a narrator)."""

    pk: int
    version: int
    stage: str
    stage_words: str
    category: str
    is_attack: bool
    people: list[tuple[int, str]]
    chosen: int
    choosing: bool
    settled: bool
    waiting_on: list[str]
    targets: list[TargetView]
    choices: list[tuple[str, str]]
    challenge_id: int | None
    my_choice: str | None = None
    can_choose: bool = False
    choose_options: list[tuple[int, str]] = field(default_factory=list)
    can_lead: bool = False
    lead_options: list[tuple[int, str]] = field(default_factory=list)
    can_bid: bool = False
    bid_count: int = 0
    is_defender: bool = False
    can_hurt: bool = False
    hurt_options: list[tuple[int, str]] = field(default_factory=list)
    #: ``(Trait name, box label)``, one per copy she may bid (:func:`phone_mobs`).
    bid_choices: list[tuple[str, str]] = field(default_factory=list)
    #: Index of the current target: with ``pk``, the id of a form kept across redraws.
    current: int = 0


def mob_view(row: MobSceneRow, me: int | None) -> MobView:
    """The view of ``row`` for character ``me`` (None: a narrator). No query
    when ``row.challenge`` (the current test, whose move it is) is loaded."""
    scene = MobScene.from_dict(row.state)
    names = {c.character_id: c.name for c in scene.participants}
    choices = dict(scene.choices)
    revealed = scene.stage is not MobStage.CHOOSING
    target = scene.target
    targets = []
    for i, t in enumerate(scene.targets):
        targets.append(
            TargetView(
                defender=names[t.defender],
                attackers=[names[a] for a in t.attackers],
                dropped=[names[a] for a in t.dropped],
                leader=names[t.leader] if t.leader is not None else "",
                outcome=OUTCOME_WORDS[t.outcome] if t.outcome else "",
                current=target is not None and i == scene.current,
                losses=[f"{names[x.character_id]}: {x.trait}" for x in t.losses],
                wounds=[names[w] for w in t.wounds],
                bid_in=[names[b.character_id] for b in t.bids]
                + ([names[t.defender]] if t.defender_bid_in else []),
                effect=t.effect,
            )
        )
    view = MobView(
        pk=row.pk,
        version=row.version,
        stage=scene.stage.value,
        stage_words=STAGE_WORDS[scene.stage],
        category=scene.category.label,
        is_attack=scene.is_attack,
        people=list(names.items()),
        chosen=len(scene.choices),
        choosing=not revealed,
        settled=scene.stage is MobStage.SETTLED,
        waiting_on=[names[w] for w in scene.waiting_on],
        targets=targets,
        choices=[(names[c], names[t] if t is not None else "nobody") for c, t in scene.choices]
        if revealed
        else [],
        challenge_id=row.challenge_id if scene.stage is MobStage.TEST else None,
        current=scene.current,
    )
    test = row.challenge if scene.stage is MobStage.TEST and me is None else None
    if test is not None and target is not None:
        # Whose move in the test, on the dashboard (which each move of it
        # redraws): its row is newer than the scene's copy. Phones show the
        # test on the leader's and the defender's cards.
        waiting = ChallengeState.from_dict(test.state).waiting_on
        sides = waiting if isinstance(waiting, tuple) else (waiting,) if waiting else ()
        who = {Side.CHALLENGER: target.leader, Side.DEFENDER: target.defender}
        view.waiting_on = [names[who[side]] for side in sides if who[side] is not None]
    if me is None or me not in names:
        return view
    if me in choices:
        view.my_choice = names[choices[me]] if choices[me] is not None else "nobody"
    view.can_choose = not revealed and me not in choices
    view.choose_options = [(pk, n) for pk, n in names.items() if pk != me]
    if target is not None and me in scene.waiting_on:
        if scene.stage is MobStage.LEADER:
            view.can_lead = True
            view.lead_options = [(a, names[a]) for a in target.attackers]
        elif scene.stage is MobStage.BIDS:
            view.can_bid = True
            view.is_defender = me == target.defender
            view.bid_count = defender_must_bid(scene, target) if view.is_defender else 1
        elif scene.stage is MobStage.HURT:
            view.can_hurt = True
            view.hurt_options = [(a, names[a]) for a in target.attackers]
    return view


@functools.cache
def _any_mob_sql(for_player: bool) -> str:
    """Plain SQL: is there a mob scene in session %s (``for_player``: with
    character %s in it)? Column names from the models; plain SQL because the
    ORM's query building cost ~2 ms per phone view, most of a view's cost, for
    an answer that is nearly always no."""
    through = MobSceneRow.participants.through._meta
    mob = MobSceneRow._meta
    col, table = sql_column, sql_table
    if not for_player:
        return f"SELECT 1 FROM {table(mob)} WHERE {col(mob, 'session')} = %s LIMIT 1"
    return (
        f"SELECT 1 FROM {table(through)} p JOIN {table(mob)} m "
        f"ON m.{col(mob, 'id')} = p.{col(through, 'mobscene')} "
        f"WHERE m.{col(mob, 'session')} = %s AND p.{col(through, 'character')} = %s LIMIT 1"
    )


def mob_views(session, me: int | None) -> list[MobView]:
    """The mob scenes of ``session`` a screen shows (her own for a player, all
    for a narrator): those going on first, then the latest settled, each
    newest first (``heartbeat.MOB_ORDER``), at most :data:`RECENT_MOBS`. First a
    plain-SQL check that there is one (for a player: one she is in), so one
    query when there is none, the usual case, two when there is."""
    with connection.cursor() as cursor:
        cursor.execute(
            _any_mob_sql(me is not None), [session.pk] if me is None else [session.pk, me]
        )
        if cursor.fetchone() is None:
            return []
    rows = MobSceneRow.objects.filter(session=session)
    if me is not None:
        rows = rows.filter(participants=me)
    # heartbeat.MOB_ORDER: going on first, then the latest settled.
    settled = Case(When(stage=MobStage.SETTLED, then=Value(1)), default=Value(0))
    rows = rows.select_related("challenge").order_by(settled, "-created_at", "-pk")
    return [mob_view(row, me) for row in rows[:RECENT_MOBS]]


def phone_mobs(character, session, sheet) -> list[MobView]:
    """:func:`mob_views` for her phone, each with ``bid_choices``: the Traits
    of the scene's category she may bid now (from ``sheet``, a
    ``characters.services`` sheet of tonight). [] without a session."""
    if session is None:
        return []
    views = mob_views(session, character.pk)
    add_bid_choices(views, sheet)
    return views


def add_bid_choices(views: list[MobView], sheet) -> None:
    """Fill ``bid_choices`` of the ``views`` where she may bid now (``can_bid``)
    from ``sheet`` (her sheet of tonight, read after the views)."""
    free = {c.category.label: [t for t in c.traits if t.free > 0] for c in sheet.categories}
    for view in views:
        if not view.can_bid:
            continue
        # One box per copy she may bid (a defender may bid one Trait several times).
        for line in free.get(view.category, []):
            label = f"{line.name} ×{line.free}" if line.free > 1 else line.name
            view.bid_choices.append((line.name, label))
            for copy in range(2, min(line.free, view.bid_count) + 1):
                view.bid_choices.append((line.name, f"{line.name} (copy {copy})"))
