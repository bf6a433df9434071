"""Health clocks (seeds/000 "Health", "Battle Scars", "Healing", "Aggravated
Wounds"): applying what is due, and a narrator's controls.

No timer lives in memory. Each presence stores its clock
(``Presence.clock_*``, ``aid_given``, ``rest_start``, ``form``,
``aggravated``; instants are *play* instants, epoch seconds minus the
session's Time out, see ``challenges.rules.clocks.Pause``) and, in the indexed
``clock_due``, the play instant of its next effect. :func:`clocks_apply`
applies every effect due at ``now`` (a Physical Trait lost at each ten-minute
mark, death, a healed level, the end of ten minutes out), idempotently:
each presence is updated only if it still holds what was read (compare and
set), so two workers running it at once apply each effect once. It is called
by :func:`clocks_tick` from the consumers' heartbeat (every phone's and
dashboard's ping), by the pages and the narrator's controls; nothing due costs
one indexed query. A restart loses nothing: everything is recomputed from
the stored instants.

Narrator controls (allowed during a Time out; each ``<entity>_<action>(…,
user, msg_id)``): :func:`clock_aid` ("medical aid given": stops the Mortally
Wounded clock), :func:`clock_rest` (a Garou rests still, in a form),
:func:`clock_heal` (one level healed), :func:`clock_aggravated` (how many
levels are aggravated). A new session heals what a night heals
(:func:`night_presence`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace

from django.db import connection, transaction
from django.db.models import Count, F, OuterRef, Q, Subquery, Sum, Value

from challenges.models import Event, TraitLoss
from challenges.realtime import (
    CHARACTER_UPDATED,
    CLOCK_ALERT,
    broadcast_on_commit,
    character_group,
    narrators_group,
)
from challenges.rules import Category, HealthLevel, get_ruleset
from challenges.rules.clocks import (
    PERMANENT_INJURIES,
    Clock,
    Effect,
    EffectKind,
    Form,
    Pause,
    Scar,
    advance,
    battle_scar,
    next_effect,
    night_rest,
    wounded,
)
from challenges.rules.options import MetOptions
from challenges.services._core import ActionRefused, _claim, _ensure_narrator, _now
from characters.models import Character, GameSession, Presence, Trait

log = logging.getLogger(__name__)

MORTAL_REASON = "Mortally Wounded: ten minutes without medical aid"
"""``TraitLoss.reason`` of a Physical Trait the Mortally Wounded clock took."""

TICK_SECONDS = 1.0
"""A worker checks one session's clocks at most this often from heartbeats."""

_last_tick: dict[int, float] = {}  # session id -> monotonic time of the last check (a throttle)

_PRESENCE = Presence._meta.db_table
_SESSION = GameSession._meta.db_table
_DUE_SQL = (
    f"SELECT p.id FROM {_PRESENCE} p JOIN {_SESSION} s ON s.id = p.session_id "
    f"WHERE p.session_id = %s AND (p.clock_due <= %s - s.time_out_seconds "
    f"OR (p.clock_start IS NULL AND p.health >= {int(HealthLevel.INCAPACITATED)})) "
    f"AND s.time_out = %s AND s.ended_at IS NULL"
)


def pause_of(session: GameSession) -> Pause:
    """The session's Time out so far as a :class:`Pause`."""
    since = session.time_out_since
    running = since.timestamp() if session.time_out and since is not None else None
    if session.time_out and running is None:
        running = _now()  # a Time out with no start recorded: from now on
    return Pause(float(session.time_out_seconds), running)


def _options(session: GameSession) -> MetOptions:
    return get_ruleset(session.chronicle.ruleset).options


def _physical_held(session_id: int, character_id: int) -> int:
    """Physical Trait copies she still holds tonight (two queries)."""
    total = (
        Trait.objects.filter(
            character_id=character_id, category=Category.PHYSICAL.value, negative=False
        ).aggregate(n=Sum("count"))["n"]
        or 0
    )
    lost = TraitLoss.objects.filter(
        session_id=session_id,
        character_id=character_id,
        trait__category=Category.PHYSICAL.value,
    ).count()
    return max(0, total - lost)


def clock_of(presence: Presence, physical: int, start: float | None = None) -> Clock:
    """The engine's :class:`Clock` of a presence row; ``start`` when its
    ``clock_start`` is empty (else 0)."""
    if presence.clock_start is not None:
        start = presence.clock_start
    return Clock(
        health=HealthLevel(presence.health),
        start=float(start or 0.0),
        physical=physical,
        lost=presence.clock_lost,
        aid=presence.aid_given,
        awake=presence.clock_awake,
        garou=presence.character.garou,
        form=Form(presence.form) if presence.form else None,
        rest_start=presence.rest_start,
        aggravated=presence.aggravated,
    )


def _due_of(clock: Clock, options: MetOptions) -> float | None:
    effect = next_effect(clock, options)
    return effect.at if effect is not None else None


def _store(presence: Presence, clock: Clock, options: MetOptions) -> bool:
    """Write ``clock`` to ``presence`` if the row still holds what was read
    (its health, clock start and count, ``clock_due``): True if written. The
    guard makes two concurrent appliers write once."""
    guard = Q(pk=presence.pk, health=presence.health, clock_lost=presence.clock_lost)
    guard &= Q(clock_due=presence.clock_due) if presence.clock_due is not None else Q()
    values = {
        "health": int(clock.health),
        "clock_start": clock.start,
        "clock_due": _due_of(clock, options),
        "clock_lost": clock.lost,
        "clock_awake": clock.awake,
        "aid_given": clock.aid,
        "aggravated": clock.aggravated,
    }
    if not Presence.objects.filter(guard).update(**values):
        return False
    for name, value in values.items():
        setattr(presence, name, value)
    return True


def _lose_physical(presence: Presence) -> str | None:
    """Record one Physical Trait copy lost to the Mortally Wounded clock: the
    one she holds most copies of (by name on a tie). Returns its name, None
    when she holds none."""
    lost = dict(
        TraitLoss.objects.filter(session_id=presence.session_id, character_id=presence.character_id)
        .values("trait_id")
        .annotate(n=Count("id"))
        .values_list("trait_id", "n")
    )
    held = [
        (t.count - lost.get(t.pk, 0), t)
        for t in Trait.objects.filter(
            character_id=presence.character_id, category=Category.PHYSICAL.value, negative=False
        ).order_by("name")
    ]
    held = [(n, t) for n, t in held if n > 0]
    if not held:
        return None
    _, trait = max(held, key=lambda pair: pair[0])
    TraitLoss.objects.create(
        session_id=presence.session_id,
        character_id=presence.character_id,
        trait=trait,
        challenge=None,
        reason=MORTAL_REASON,
    )
    return trait.name


def _announce(presence: Presence, alerts: list[int]) -> None:
    """After commit: her phone and the dashboards redraw her; each alert
    (an Event id) rings on the session's dashboards."""
    session_id, character_id = presence.session_id, presence.character_id
    broadcast_on_commit(
        [character_group(character_id), narrators_group(session_id)],
        CHARACTER_UPDATED,
        character_id=character_id,
        session_id=session_id,
    )
    for event_id in alerts:
        broadcast_on_commit(
            [narrators_group(session_id)], CLOCK_ALERT, session_id=session_id, event_id=event_id
        )


def _apply_effects(presence: Presence, effects: tuple[Effect, ...], actor=None) -> list[int]:
    """Rows for effects already stored on ``presence``: a TraitLoss per Trait
    lost, an Event per effect (kind ``clock_<effect>``, data ``{"character",
    "at", "health", "trait"?}``). Returns the Event ids to ring as alerts."""
    alerts = []
    for effect in effects:
        data: dict = {
            "character": presence.character_id,
            "at": effect.at,
            "health": int(effect.health),
        }
        if effect.kind is EffectKind.TRAIT_LOST:
            data["trait"] = _lose_physical(presence)
        event = Event.objects.create(
            session_id=presence.session_id,
            kind=f"clock_{effect.kind.value}",
            data=data,
            actor=actor,
        )
        alerts.append(event.pk)
    return alerts


def _advance_presence(presence: Presence, session: GameSession, now: float) -> bool:
    """Apply what ``presence``'s clock has due at ``now`` (epoch seconds);
    True if anything was. Inside a transaction."""
    pause = pause_of(session)
    options = _options(session)
    fresh = presence.clock_due == FRESH
    if presence.clock_start is None:
        presence.clock_start = pause.play(now)
    clock = clock_of(presence, _physical_held(presence.session_id, presence.character_id))
    after, effects = advance(clock, pause.play(now), options)
    if not effects and not fresh and presence.clock_due == _due_of(after, options):
        return False
    if not _store(presence, after, options):
        return False  # another worker applied it first
    alerts = _fresh_alerts(presence) if fresh else []
    _announce(presence, alerts + _apply_effects(presence, effects))
    return bool(effects) or fresh


def clocks_due(session_id: int, now: float | None = None) -> list[int]:
    """Ids of the session's presences with a clock effect due at ``now``
    (epoch seconds; default: now), and those who arrived Incapacitated or
    worse by their sheet (no clock yet: it starts at this check). One query
    on the (session, clock_due) index; [] during a Time out or after the
    session ended."""
    now = _now() if now is None else now
    with connection.cursor() as cursor:
        cursor.execute(_DUE_SQL, [session_id, now, False])
        return [row[0] for row in cursor.fetchall()]


def clocks_apply(session_id: int, now: float | None = None) -> int:
    """Apply every clock effect due in the session at ``now`` (epoch seconds;
    default: now), each once, with its Events, lost Traits and broadcasts.
    Returns how many presences had an effect (or a wound's new level) applied;
    a clock only started or moved is not counted. Costs one query when
    nothing is due."""
    now = _now() if now is None else now
    due = clocks_due(session_id, now)
    if not due:
        return 0
    changed = 0
    with transaction.atomic():
        session = GameSession.objects.select_related("chronicle").get(pk=session_id)
        for presence in (
            Presence.objects.select_for_update().select_related("character").filter(pk__in=due)
        ):
            changed += _advance_presence(presence, session, now)
    return changed


def tick_wanted(session_id: int) -> bool:
    """True (and the throttle reset) if this worker has not checked the
    session's clocks for :data:`TICK_SECONDS`. No query: the consumers ask it
    on every heartbeat before a trip to the database thread."""
    moment = time.monotonic()
    if moment - _last_tick.get(session_id, -TICK_SECONDS) < TICK_SECONDS:
        return False
    _last_tick[session_id] = moment
    return True


def clocks_tick(session_id: int) -> int:
    """:func:`clocks_apply` from a heartbeat (after :func:`tick_wanted`; the
    throttle is only an economy: a restart loses nothing). Never raises: a
    failure is logged and the next heartbeat tries again."""
    try:
        return clocks_apply(session_id)
    except Exception:  # noqa: BLE001 - a heartbeat must not fail on a clock
        log.exception("clocks of session %s failed", session_id)
        return 0


FRESH = 0.0
"""``clock_due`` of a level that just changed (a wound): due at once, so the
next :func:`clocks_apply` computes its clock, counts a battle scar and rings."""


def fresh_level() -> dict:
    """The fields a wound's UPDATE sets beside the new health (no query of its
    own, see ``_writes._wound``): the level's clock starts now (a play
    instant: now minus the session's finished Time outs), is due at once
    (:data:`FRESH`), and forgets the last level's counts."""
    time_out = GameSession.objects.filter(pk=OuterRef("session_id")).values("time_out_seconds")
    return {
        "clock_start": Value(_now()) - Subquery(time_out[:1]),
        "clock_due": Value(FRESH),
        "clock_lost": 0,
        "clock_awake": False,
        "aid_given": False,
    }


def _fresh_alerts(presence: Presence) -> list[int]:
    """A level reached by a wound, seen for the first time: Mortally Wounded
    adds a battle scar to her sheet (Event ``battle_scar`` {"character",
    "number", "scar"}), dead rings as ``clock_died``. Event ids to ring."""
    health = HealthLevel(presence.health)
    data: dict = {"character": presence.character_id, "health": int(health)}
    if health is HealthLevel.MORTALLY_WOUNDED:
        Character.objects.filter(pk=presence.character_id).update(
            battle_scars=F("battle_scars") + 1
        )
        number = presence.character.battle_scars + 1
        data.update(number=number, scar=battle_scar(number).value)
        kind = "battle_scar"
    elif health is HealthLevel.DEAD:
        kind = "clock_died"
    else:
        return []
    return [Event.objects.create(session_id=presence.session_id, kind=kind, data=data).pk]


# Narrator controls -------------------------------------------------------------


@dataclass(frozen=True)
class _Held:
    session: GameSession
    presence: Presence


def _hold(session: GameSession, character: Character, user, msg_id: str, action: str) -> _Held:
    """Claim, read the session and her presence FOR UPDATE, check the narrator,
    and apply what her clock has due first (so a control acts on the present)."""
    _claim(user, msg_id, action)
    session = GameSession.objects.select_related("chronicle").get(pk=session.pk)
    _ensure_narrator(user, session.chronicle)
    if session.ended_at is not None:
        raise ActionRefused("This session is over.")
    presence = (
        Presence.objects.select_for_update()
        .select_related("character")
        .filter(session=session, character_id=character.pk)
        .first()
    )
    if presence is None:
        raise ActionRefused(f"{character.name} is not at this session.")
    _advance_presence(presence, session, _now())
    return _Held(session, presence)


def _control_done(held: _Held, kind: str, data: dict, user, clock: Clock) -> Presence:
    presence = held.presence
    options = _options(held.session)
    Presence.objects.filter(pk=presence.pk).update(
        health=int(clock.health),
        clock_start=clock.start,
        clock_due=_due_of(clock, options),
        clock_lost=clock.lost,
        clock_awake=clock.awake,
        aid_given=clock.aid,
        rest_start=clock.rest_start,
        form=clock.form.value if clock.form else "",
        aggravated=clock.aggravated,
    )
    Event.objects.create(
        session=held.session,
        kind=kind,
        data={"character": presence.character_id, **data},
        actor=user,
    )
    _announce(presence, [])
    presence.refresh_from_db()
    return presence


def _current(held: _Held) -> Clock:
    presence = held.presence
    if presence.clock_start is None:
        presence.clock_start = pause_of(held.session).play(_now())
    return clock_of(presence, _physical_held(presence.session_id, presence.character_id))


def clock_aid(*, session: GameSession, character: Character, user, msg_id: str) -> Presence:
    """A narrator says medical aid was given: the Mortally Wounded clock stops
    (seeds/000 "Health": "without medical assistance"); Traits it took stay
    lost. Event ``clock_aid``. ActionRefused: not a narrator, not Mortally
    Wounded, aid already given."""
    with transaction.atomic():
        held = _hold(session, character, user, msg_id, "clock.aid")
        clock = _current(held)
        if clock.health != HealthLevel.MORTALLY_WOUNDED:
            raise ActionRefused(f"{character.name} is not Mortally Wounded.")
        if clock.aid:
            raise ActionRefused(f"Medical aid was already given to {character.name}.")
        return _control_done(held, "clock_aid", {}, user, replace(clock, aid=True))


def clock_rest(
    *, session: GameSession, character: Character, resting: bool, form: str, user, msg_id: str
) -> Presence:
    """A narrator marks a Garou resting still (or not) in ``form`` (a
    ``Form`` value): out of Homid form she heals one level every five minutes
    from now (seeds/000 "Healing"). Event ``clock_rest`` {"resting", "form"}.
    ActionRefused: not a Garou, an unknown form, not a narrator."""
    try:
        form_ = Form(form)
    except ValueError:
        raise ActionRefused("Choose Homid, Glabro, Crinos, Hispo or Lupus.") from None
    with transaction.atomic():
        held = _hold(session, character, user, msg_id, "clock.rest")
        if not held.presence.character.garou:
            raise ActionRefused(f"{character.name} is not a Garou: only Garou heal by resting.")
        clock = _current(held)
        play = pause_of(held.session).play(_now())
        rest = (clock.rest_start if clock.rest_start is not None else play) if resting else None
        data = {"resting": bool(resting), "form": form_.value}
        return _control_done(
            held, "clock_rest", data, user, replace(clock, form=form_, rest_start=rest)
        )


def clock_heal(*, session: GameSession, character: Character, user, msg_id: str) -> Presence:
    """A narrator heals one level (a Gift, a healer, a night's rest granted):
    her new level's clocks start now. Event ``clock_heal`` {"health"}.
    ActionRefused: healthy, dead, not a narrator."""
    with transaction.atomic():
        held = _hold(session, character, user, msg_id, "clock.heal")
        clock = _current(held)
        if clock.health == HealthLevel.HEALTHY:
            raise ActionRefused(f"{character.name} is not hurt.")
        if clock.health >= HealthLevel.DEAD:
            raise ActionRefused(f"{character.name} is dead.")
        play = pause_of(held.session).play(_now())
        healed = wounded(clock, HealthLevel(clock.health - 1), play)
        return _control_done(held, "clock_heal", {"health": int(healed.health)}, user, healed)


def clock_aggravated(
    *, session: GameSession, character: Character, count: int, user, msg_id: str
) -> Presence:
    """A narrator says how many of her wound levels are aggravated (fire,
    silver, claws and teeth): those heal only by a night's rest, not by a
    Garou's five minutes (seeds/000 "Aggravated Wounds"). Event
    ``clock_aggravated`` {"count"}. ActionRefused: more than her wounds."""
    with transaction.atomic():
        held = _hold(session, character, user, msg_id, "clock.aggravated")
        clock = _current(held)
        wounds = min(int(clock.health), int(HealthLevel.MORTALLY_WOUNDED))
        if not 0 <= count <= wounds:
            raise ActionRefused(f"{character.name} has {wounds} wound level(s) tonight.")
        data = {"count": count}
        return _control_done(held, "clock_aggravated", data, user, replace(clock, aggravated=count))


def injury_choices() -> list[tuple[str, str]]:
    """The permanent injuries a narrator may give, as ``(value, words)``:
    value ``"Injury"`` or ``"Injury:Negative Trait"`` (one per Trait it may add)."""
    out = []
    for injury in PERMANENT_INJURIES:
        if not injury.negative:
            out.append((injury.name, f"{injury.name} ({injury.effect})"))
        for trait in injury.negative:
            words = f"{injury.name}: Negative {injury.category.title()} Trait {trait}"
            out.append((f"{injury.name}:{trait}", words))
    return out


def battle_scar_permanent(character: Character) -> bool:
    """True if her battle scars have reached the permanent ones (no query)."""
    return character.battle_scars > 0 and battle_scar(character.battle_scars) is Scar.PERMANENT


def clock_injury(
    *, session: GameSession, character: Character, injury: str, user, msg_id: str
) -> Trait | None:
    """A narrator gives a character with a permanent battle scar (her sixth
    Mortal Wound episode on) one permanent injury, ``injury`` being a value of
    :func:`injury_choices`: its Negative Trait, if any, is added to her sheet
    (one more copy if she has it). Event ``battle_injury`` {"injury",
    "trait"}. ActionRefused: no permanent scar yet, an unknown injury."""
    choices = dict(injury_choices())
    if injury not in choices:
        raise ActionRefused("Choose one of the permanent injuries.")
    name, _, negative = injury.partition(":")
    found = next(i for i in PERMANENT_INJURIES if i.name == name)
    with transaction.atomic():
        held = _hold(session, character, user, msg_id, "clock.injury")
        if not battle_scar_permanent(held.presence.character):
            raise ActionRefused(
                f"{character.name} has no permanent battle scar yet (the sixth Mortal Wound on)."
            )
        trait = None
        if negative:
            trait, made = Trait.objects.get_or_create(
                character_id=character.pk,
                name=negative,
                category=found.category,
                negative=True,
                defaults={"count": 1},
            )
            if not made:
                Trait.objects.filter(pk=trait.pk).update(count=F("count") + 1)
        Event.objects.create(
            session=held.session,
            kind="battle_injury",
            data={"character": character.pk, "injury": name, "trait": negative or None},
            actor=user,
        )
        _announce(held.presence, [])
    return trait


def night_presence(character: Character, previous: Presence | None, ruleset: str) -> dict:
    """The fields of her presence at a new session of a chronicle playing
    ``ruleset``: her sheet's starting health, or what a night's rest leaves
    of last session's aggravated wounds if worse (seeds/000 "Aggravated
    Wounds": one level a night); the dead stay dead. ``{"health",
    "aggravated", "clock_start", "clock_due"}``: a level with a clock starts
    it with the session (its play instants are epoch seconds: no Time out yet)."""
    health = HealthLevel(character.health)
    aggravated = 0
    if previous is not None:
        rested, aggravated = night_rest(HealthLevel(previous.health), previous.aggravated)
        health = max(health, rested)
        aggravated = min(aggravated, int(health))
    fields: dict = {"health": int(health), "aggravated": aggravated}
    if health >= HealthLevel.INCAPACITATED:
        start = _now()
        options = get_ruleset(ruleset).options
        # physical=1: the due instant is the same whether a Trait or her life is at stake.
        due = _due_of(Clock(health, start, physical=1), options)
        fields.update(clock_start=start, clock_due=due)
    return fields


def clock_view(
    presence: Presence | None, session: GameSession | None, physical: int
) -> dict | None:
    """What a phone or the dashboard shows of her clock, given the Physical
    Traits she holds: None without a presence, else ``{"kind": the next
    effect's EffectKind value ("" when no clock runs), "remaining": seconds
    of play until it, "shown": the same as "m:ss", "frozen": in Time out, "text": words before the
    countdown on her phone, "label": the same for a narrator, "health",
    "aid", "awake", "resting", "form", "garou", "aggravated"}``. No query."""
    if presence is None or session is None:
        return None
    pause = pause_of(session)
    now = _now()
    clock = clock_of(presence, physical, start=pause.play(now))
    effect = next_effect(clock, _options(session))
    view = {
        "health": clock.health,
        "aid": clock.aid,
        "awake": clock.awake,
        "resting": clock.rest_start is not None,
        "form": clock.form.value if clock.form else "",
        "garou": clock.garou,
        "aggravated": clock.aggravated,
        "kind": "",
        "remaining": 0,
        "frozen": bool(session.time_out),
        "text": "",
        "label": "",
        "shown": "",
    }
    if effect is not None:
        remaining = pause.remaining(effect.at, now)
        kind = effect.kind.value
        seconds = int(remaining + 0.999)
        view.update(
            kind=kind,
            remaining=seconds,
            shown=f"{seconds // 60}:{seconds % 60:02d}",
            text=_TEXT[kind],
            label=_LABEL[kind],
        )
    return view


_LABEL = {
    EffectKind.AWAKE.value: "Out of play for",
    EffectKind.TRAIT_LOST.value: "Next Physical Trait lost in",
    EffectKind.DIED.value: "Dies in",
    EffectKind.HEALED.value: "Heals one level in",
}

_TEXT = {
    EffectKind.AWAKE.value: "Out of play: you can act again in",
    EffectKind.TRAIT_LOST.value: "Mortally Wounded: next Physical Trait lost in",
    EffectKind.DIED.value: "Mortally Wounded: death in",
    EffectKind.HEALED.value: "Resting: one level healed in",
}


def clock_views(session: GameSession | None, sheets: dict) -> dict[int, dict | None]:
    """:func:`clock_view` of many characters at once, ``sheets`` being their
    ``characters.services.Sheet`` by id (for the Physical Traits they hold):
    one query in all. Keyed by character id (None: not at the session)."""
    if session is None or not sheets:
        return {pk: None for pk in sheets}
    found = {
        p.character_id: p
        for p in Presence.objects.filter(session=session, character_id__in=list(sheets))
        .select_related("character")
        .only(
            "session_id",
            "character_id",
            "health",
            "clock_start",
            "clock_due",
            "clock_lost",
            "clock_awake",
            "aid_given",
            "rest_start",
            "form",
            "aggravated",
            "character__garou",
        )
    }
    return {
        pk: clock_view(found.get(pk), session, sheet.held(Category.PHYSICAL))
        for pk, sheet in sheets.items()
    }


_ALERTS = {
    "clock_awake": "ten minutes out of play are over; still Incapacitated until healed.",
    "clock_trait_lost": "lost a Physical Trait ({trait}) to the Mortally Wounded clock.",
    "clock_died": "has died.",
    "clock_healed": "healed one level: now {level}.",
    "battle_scar": "is Mortally Wounded: battle scar {number} ({scar}). "
    "Give medical aid to stop the clock.",
}
"""Event kinds that ring the dashboards, and their words."""


def alert_of(session_id: int, event_id: int) -> dict | None:
    """The dashboard alert of clock Event ``event_id`` of the session:
    ``{"pk", "kind", "name", "text"}``, or None if it is no such alert."""
    event = (
        Event.objects.filter(pk=event_id, session_id=session_id, kind__in=list(_ALERTS))
        .values("pk", "kind", "data")
        .first()
    )
    if event is None:
        return None
    data = dict(event["data"] or {})
    name = Character.objects.filter(pk=data.get("character")).values_list("name", flat=True).first()
    level = HealthLevel(int(data.get("health", 0))).label
    words = {"trait": "a Trait", "number": "?", "scar": "?", **data, "level": level}
    text = _ALERTS[event["kind"]].format(**{k: str(v) for k, v in words.items()})
    return {"pk": event["pk"], "kind": event["kind"], "name": name or "?", "text": text}
