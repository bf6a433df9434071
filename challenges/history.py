"""The evening's history (s11): every challenge, test with both throws,
declaration, retest, ruling, Trait loss, pool spent and wound of a session,
read from its append-only ``Event`` rows (written in the same transaction as
each change, ``challenges.services``), as plain entries a narrator filters,
pages and downloads (CSV, JSON) and a player reads for her own challenges.

Nothing here shows a hidden throw: the engine's "threw" event names the side
only, and both throws travel in "revealed", written when the second throw is
in (``challenges/audit.py``). The narrator's difficulty of a static challenge
is in no "opened" event; a prepared static's difficulty, which its player
never sees (``PreparedStatic``), is in her history as the card words it:
"its difficulty" (:func:`_without_difficulty`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q

from challenges.models import Challenge, Event
from challenges.rules import Stage
from characters.models import Character, GameSession

#: Entry groups a narrator filters by ("kind" in the filter form), in order.
GROUPS = (
    ("challenge", "Challenges and results"),
    ("test", "Tests and throws"),
    ("declaration", "Declarations"),
    ("retest", "Retests"),
    ("ruling", "Rulings and calls"),
    ("loss", "Traits lost"),
    ("pool", "Pools spent"),
    ("wound", "Wounds"),
    ("session", "Session"),
    ("roll", "Dice rolls"),
)
GROUP_NAMES = dict(GROUPS)

_GROUP_OF = {
    "opened": "challenge",
    "bid": "challenge",
    "responded": "challenge",
    "relented": "challenge",
    "accepted": "challenge",
    "resolved": "challenge",
    "threw": "test",
    "revealed": "test",
    "tied": "test",
    "tie_lost": "test",
    "tie_won": "test",
    "compared": "test",
    "declared": "declaration",
    "negative_named": "declaration",
    "retest_open": "retest",
    "retest_called": "retest",
    "retest_answered": "retest",
    "retest": "retest",
    "voided": "ruling",
    "settled": "ruling",
    "narrator_retest": "ruling",
    "trait_given_back": "ruling",
    "trait_taken": "ruling",
    "narrator_called": "ruling",
    "call_dismissed": "ruling",
    "blood_spent": "pool",
    "preempted": "pool",
}
_OUTCOMES = {
    "challenger_wins": "{c} wins",
    "defender_wins": "{d} wins",
    "draw": "a draw: both lose their bids",
    "void": "void",
}


@dataclass(frozen=True)
class Entry:
    """One line of the history: ``at`` (aware datetime), ``challenge_id``
    (None for the session's own events), ``group`` (a key of
    :data:`GROUPS`), ``kind`` (the Event's), ``text`` (a sentence in the
    games' words), ``actor`` (the user who made the change, "" for none),
    ``characters`` (ids concerned), ``data`` (the Event's data)."""

    at: datetime
    event_id: int
    challenge_id: int | None
    group: str
    kind: str
    text: str
    actor: str
    characters: tuple[int, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self, names: dict[int, str]) -> dict[str, Any]:
        """The entry for JSON: times as ISO 8601, characters by id and name."""
        return {
            "at": self.at.isoformat(),
            "event": self.event_id,
            "challenge": self.challenge_id,
            "group": self.group,
            "kind": self.kind,
            "text": self.text,
            "actor": self.actor,
            "characters": [{"id": c, "name": names.get(c, "")} for c in self.characters],
            "data": self.data,
        }


@dataclass
class History:
    """Entries (oldest first) and the names of the characters they mention."""

    entries: list[Entry]
    names: dict[int, str]


def _actor(event: Event) -> str:
    user = event.actor
    if user is None:
        return ""
    return user.get_full_name() or user.get_username()


#: Where a prepared static's events carry the object's Trait count (its
#: difficulty): per event kind, the keys that hold it whichever side acted,
#: and those that hold it when the object's side acted (a declaration, an
#: overbid called or answered by the object; ``challenges.rules.engine``).
_DIFFICULTY_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "declared": ((), ("count",)),
    "compared": (("defender",), ()),
    "retest_called": ((), ("count",)),
    "retest_answered": (("compared",), ("count",)),
}
#: The difficulty in a player's words, as her card says it.
_HIDDEN_DIFFICULTY = "its difficulty"


def _without_difficulty(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` of a prepared static's event of ``kind`` as its player may
    read it: without the keys of :data:`_DIFFICULTY_KEYS` that hold the
    object's Trait count (a copy; ``data`` unchanged)."""
    always, objects = _DIFFICULTY_KEYS.get(kind, ((), ()))
    hidden = always + (objects if data.get("side") == "defender" else ())
    return {k: v for k, v in data.items() if k not in hidden}


def _entries(
    event: Event,
    challenge: Challenge | None,
    names: dict[int, str],
    *,
    for_player: bool = False,
) -> list[Entry]:
    """The entries one Event makes (a result makes one per loss and wound).
    A prepared static names its object (as its card does) and, ``for_player``,
    says "its difficulty" for the object's Trait count, in the text and the
    data (:func:`_without_difficulty`)."""
    data = event.data if isinstance(event.data, dict) else {}
    kind = event.kind
    ch = challenge.challenger_id if challenge else None
    de = challenge.defender_id if challenge else None
    c_name = names.get(ch, "?") if ch else "?"
    d_name = names.get(de, "the narrator") if de else "the narrator"
    prepared = challenge is not None and challenge.prepared_id is not None
    if prepared and not de and challenge.stakes:
        d_name = challenge.stakes  # the object's name, as on the card
    secret = prepared and for_player
    if secret:
        data = _without_difficulty(kind, data)
    both = tuple(x for x in (ch, de) if x)

    def side(value: Any) -> str:
        return c_name if value == "challenger" else d_name

    def side_id(value: Any) -> tuple[int, ...]:
        pick = ch if value == "challenger" else de
        return (pick,) if pick else ()

    def entry(group: str, text: str, who: tuple[int, ...] = both) -> Entry:
        return Entry(
            event.created_at,
            event.pk,
            event.challenge_id,
            group,
            kind,
            text,
            _actor(event),
            who,
            data,
        )

    def traits(value: Any) -> str:
        return ", ".join(str(t) for t in value) if isinstance(value, list) else ""

    reason = str(data.get("reason", ""))
    if challenge is not None and challenge.pooled:
        pooled = _pooled_entries(kind, data, entry, side, side_id, names)
        if pooled is not None:
            return pooled
    if kind == "opened":
        category = str(data.get("category") or "").capitalize()
        what = {
            "opposed": f"{c_name} challenges {d_name} ({category}"
            + (", attack" if data.get("is_attack") else "")
            + ")",
            "static": f"Static {category} challenge for {c_name}",
            "simple": f"Simple test for {c_name}",
        }.get(str(data.get("kind")), f"Challenge opened by {c_name}")
        stakes = f" — “{data['stakes']}”" if data.get("stakes") else ""
        return [entry("challenge", what + stakes)]
    if kind in ("bid", "responded"):
        more = " more" if data.get("added") else ""
        stakes = f" — if she wins: “{data['stakes']}”" if data.get("stakes") else ""
        text = f"{side(data.get('side'))} bids{more} {traits(data.get('traits'))}{stakes}"
        return [entry("challenge", text, side_id(data.get("side")))]
    if kind == "relented":
        return [entry("challenge", f"{side(data.get('side'))} relents")]
    if kind == "accepted":
        return [entry("challenge", f"{side(data.get('side'))} accepts the result")]
    if kind == "threw":
        return [entry("test", f"{side(data.get('side'))} throws", side_id(data.get("side")))]
    if kind == "revealed":
        winner = data.get("winner")
        result = "a tie" if data.get("tie") else f"{side(winner)} wins the test"
        text = (
            f"Test {data.get('test')}: {c_name} {data.get('challenger_throw')}, "
            f"{d_name} {data.get('defender_throw')} — {result}"
        )
        return [entry("test", text)]
    if kind == "tied":
        return [entry("test", f"Test {data.get('test')} tied: the sides declare their Traits")]
    if kind in ("tie_lost", "tie_won"):
        verb = "loses" if kind == "tie_lost" else "wins"
        return [entry("test", f"{side(data.get('side'))} {verb} the tie ({data.get('reason')})")]
    if kind == "compared":
        theirs = _HIDDEN_DIFFICULTY if secret else data.get("defender")
        text = f"Traits compared: {c_name} {data.get('challenger')}, {d_name} {theirs}"
        return [entry("test", text)]
    if kind == "declared":
        if secret and data.get("side") == "defender":
            text = f"{d_name} declares {_HIDDEN_DIFFICULTY}"
        else:
            text = f"{side(data.get('side'))} declares {data.get('count')} Traits"
        return [entry("declaration", text, side_id(data.get("side")))]
    if kind == "retest_open":
        return [entry("retest", f"{side(data.get('side'))} may retest")]
    if kind == "retest_called":
        what = str(data.get("kind", "")).replace("_", " ")
        extra = f" with {data['name']}" if data.get("name") else ""
        out = [entry("retest", f"{side(data.get('side'))} calls a {what} retest{extra}")]
        if data.get("kind") == "willpower":
            out.append(
                entry("pool", f"{side(data.get('side'))} spends 1 Willpower", side_id(data["side"]))
            )
        return out
    if kind == "retest_answered":
        granted = "granted" if data.get("granted") else "refused"
        return [entry("retest", f"{side(data.get('side'))} answers the retest: {granted}")]
    if kind == "retest":
        what = str(data.get("kind", "")).replace("_", " ")
        return [entry("retest", f"Test {data.get('test')} held ({what})")]
    if kind == "blood_spent":
        text = f"{side(data.get('side'))} spends {data.get('amount')} Blood"
        return [entry("pool", text, side_id(data.get("side")))]
    if kind == "preempted":
        text = f"{d_name} spends 1 Rage to pre-empt with {data.get('gift')}"
        return [entry("pool", text, side_id("defender"))]
    if kind == "negative_named":
        right = "correctly" if data.get("correct") else "wrongly"
        text = f"{side(data.get('side'))} names the Negative Trait {data.get('name')} ({right})"
        return [entry("declaration", text)]
    if kind == "voided":
        # Voided without an actor: the session ended with the challenge open.
        who = "Narrator ruling: voided" if event.actor_id else "Voided"
        return [entry("ruling", f"{who} — {reason}")]
    if kind == "settled":
        winner = side(data.get("winner"))
        return [entry("ruling", f"Narrator ruling: settled for {winner} — {reason}")]
    if kind == "narrator_retest":
        return [entry("ruling", f"Narrator ruling: a retest is forced — {reason}")]
    if kind in ("trait_given_back", "trait_taken"):
        who = int(data.get("character") or 0)
        name = names.get(who, "?")
        what = "given back to" if kind == "trait_given_back" else "taken away from"
        text = f"Narrator ruling: {data.get('trait')} {what} {name} — {reason}"
        out = [entry("ruling", text, (who,))]
        if kind == "trait_taken":
            out.append(entry("loss", f"{name} loses {data.get('trait')} (ruling)", (who,)))
        return out
    if kind == "narrator_called":
        why = f" — “{reason}”" if reason else ""
        return [entry("ruling", f"{side(data.get('side'))} calls a narrator{why}")]
    if kind == "call_dismissed":
        return [entry("ruling", "A narrator dismisses the call")]
    if kind == "resolved":
        outcome = _OUTCOMES.get(str(data.get("outcome")), str(data.get("outcome")))
        out = [entry("challenge", "Result: " + outcome.format(c=c_name, d=d_name))]
        for loss in data.get("losses") or []:
            who, trait = int(loss[0]), loss[1]
            out.append(entry("loss", f"{names.get(who, '?')} loses {trait}", (who,)))
        for who in data.get("wounds") or []:
            out.append(entry("wound", f"{names.get(who, '?')} loses a health level", (who,)))
        for immune in data.get("immunity") or []:
            who, attacker, power = int(immune[0]), int(immune[1]), immune[2]
            text = f"{names.get(who, '?')} is immune to {names.get(attacker, '?')}'s {power}"
            out.append(entry("challenge", text, (who, attacker)))
        return out
    if kind in ("time_out", "resume", "session_started", "session_ended", "presence_set"):
        text = {
            "time_out": "Time out",
            "resume": "Resume",
            "session_started": "The session starts",
            "session_ended": "The session ends",
        }.get(kind, "")
        who: tuple[int, ...] = ()
        if kind == "presence_set":
            who = (int(data.get("character") or 0),)
            text = f"{names.get(who[0], '?')} marked {data.get('status')}"
        return [entry("session", text, who)]
    if kind.startswith("combat_"):
        return [entry("session", _combat_text(kind, data, names), _combat_who(data))]
    if kind.startswith("roll_"):
        who = tuple(int(data[k]) for k in ("character", "opponent") if isinstance(data.get(k), int))
        return [entry("roll", _roll_text(kind, data, names), who)]
    if kind.startswith(("fight_", "track_")):
        who = (*_combat_who(data), *((int(data["character"]),) if data.get("character") else ()))
        return [entry("session", _fight_text(kind, data, names), who)]
    text = kind.replace("_", " ").capitalize()
    return [entry(_GROUP_OF.get(kind, "challenge" if challenge else "session"), text)]


_PAID = {"willpower": "1 Willpower", "focus": "her focus", "assist": "an ally's assist"}
_RESULTS = {
    "success": "success",
    "exceptional": "exceptional success",
    "failure": "failure",
    "void": "void",
}


def _pooled_entries(kind, data, entry, side, side_id, names) -> list[Entry] | None:
    """The entries of an Event of a challenge of test pools (issue 12,
    ``challenges.rules.bns``): attack and maneuvers, both pools, both throws
    of each test, Willpower spent, the result in the seed's words, damage
    and effects. None: an event read as the MET ones are (threw, voided,
    settled)."""
    c_name, d_name = side("challenger"), side("defender")
    if kind == "opened":
        what = str(data.get("attack") or "").replace("_", " ")
        power = f": {data['power']}" if data.get("power") else ""
        moves = ", ".join(
            f"{str(m).replace('_', ' ').title()} ({_PAID.get(paid, paid)})"
            for m, paid in data.get("maneuvers") or []
        )
        text = f"{c_name} attacks {d_name} ({what}{power}{'; ' + moves if moves else ''})"
        if data.get("escape"):  # seeds/002 Grapple
            text = f"{c_name} tries to escape {d_name}'s grapple ({what})"
        out = [entry("challenge", text)]
        if data.get("willpower_spent"):
            spent = f"{c_name} spends {data['willpower_spent']} Willpower (maneuver)"
            out.append(entry("pool", spent, side_id("challenger")))
        return out
    if kind == "missed":
        return [entry("test", f"{c_name}'s attack misses ({data.get('reason', '')})")]
    if kind == "pools":
        defence = str(data.get("defence") or "")
        text = (
            f"Pools: {c_name} {data.get('attacker_pool')}, "
            f"{d_name} {data.get('defender_pool')} ({defence})"
        )
        return [entry("test", text)]
    if kind == "revealed":
        winner = side(data.get("winner"))
        tie = "a tie: " if data.get("tie") else ""
        text = (
            f"Test {data.get('test')}: {c_name} {data.get('attacker_throw')}, "
            f"{d_name} {data.get('defender_throw')} — {tie}{winner} wins the test "
            f"(pools {data.get('attacker_pool')} vs {data.get('defender_pool')})"
        )
        return [entry("test", text)]
    if kind == "retest":
        who = data.get("by")
        return [
            entry("retest", f"{side(who)} retests"),
            entry("pool", f"{side(who)} spends {data.get('willpower', 1)} Willpower", side_id(who)),
        ]
    if kind == "resolved":
        result = _RESULTS.get(str(data.get("result")), str(data.get("result")))
        out = [entry("challenge", f"Result: {result}")]
        if data.get("damage"):
            out.append(
                entry("wound", f"{d_name} takes {data['damage']} damage", side_id("defender"))
            )
        if data.get("immune_until") and data.get("power"):
            minutes = round(float(data.get("immune_seconds") or 600) / 60)
            text = f"{d_name} is immune to {c_name}'s {data['power']} for {minutes} minutes"
            out.append(entry("challenge", text, side_id("defender")))
        return out
    if kind == "effect":
        who = int(data.get("character") or 0)
        seconds = data.get("seconds")
        lasts = f" ({round(seconds / 60)} minutes)" if seconds else ""
        return [entry("wound", f"{names.get(who, '?')} is {data.get('label')}{lasts}", (who,))]
    return None


_ROLL_OUTCOMES = {
    "dramatic_failure": "dramatic failure",
    "failure": "failure",
    "success": "success",
    "exceptional_success": "exceptional success",
}


def _roll_text(kind: str, data: dict, names: dict[int, str]) -> str:
    """A ``roll_*`` event (issue 13, ``challenges.services.rolls``) in words:
    "Iris Vale rolls Dexterity + Stealth: 10, 3, 8 · 2 successes
    (success)", "Iris Vale against Marcus Hale (Wits + Stealth): 2 to 1,
    Iris Vale wins"; the faces in the order rolled, rerolls included."""
    who = names.get(data.get("character"), "") or "The narrator"
    label = data.get("label", "")
    if kind == "roll_called":
        return f"A roll of {label} is called for from {who}"
    if kind == "roll_contest_opened":
        return f"{who} contests {names.get(data.get('opponent'), '?')}: {label}"
    if kind == "roll_extended_started":
        return f"{who} begins an extended action ({label}): {data.get('target')} successes needed"
    if kind == "roll_contested":
        other = names.get(data.get("opponent"), "?")
        mine, theirs = (list(data.get("successes") or []) + [0, 0])[:2]
        winner = names.get(data.get("winner"), "") if data.get("winner") else ""
        verdict = f"{winner} wins" if winner else "a tie: things stay as they are"
        return f"{who} against {other} ({label}): {mine} to {theirs}, {verdict}"
    faces = ", ".join(str(f) for f in data.get("faces") or []) or "no dice"
    count = int(data.get("successes") or 0)
    outcome = _ROLL_OUTCOMES.get(str(data.get("outcome")), str(data.get("outcome")))
    text = f"{who} rolls {label}: {faces} · {count} success{'es' if count != 1 else ''} ({outcome})"
    if kind == "roll_extended_rolled" and data.get("summary"):
        text += f"; {data['summary']}"
    return text


def _combat_who(data: dict) -> tuple[int, ...]:
    """The characters a ``combat_*`` event names (issue 12)."""
    keys = ("fighter", "attacker", "target", "helper", "by")
    return tuple(int(data[k]) for k in keys if isinstance(data.get(k), int))


def _combat_text(kind: str, data: dict, names: dict[int, str]) -> str:
    """A ``combat_*`` event (issue 12, ``challenges.services.combat``) in words:
    "Combat #3 starts: Ines, Helen, Grady", "Helen moves 3 steps (simple
    action)", "Turn 2 · Rage round 1 begins", "Helen's maneuver: Grady is prone";
    other kinds by their name."""
    combat = f"Combat #{data.get('combat', '?')}"

    def name(key: str) -> str:
        return names.get(data.get(key), "?")

    if kind == "combat_started":
        order = ", ".join(names.get(i, "?") for i in data.get("order") or [])
        return f"{combat} starts: {order}"
    if kind == "combat_ended":
        return f"{combat} ends" + (f" ({data['reason']})" if data.get("reason") else "")
    if kind == "combat_round_started":
        rage = data.get("rage_round") or 0
        what = f"Rage round {rage}" if rage else "Everyman round"
        return f"{combat}: Turn {data.get('turn')} · {what} begins"
    if kind == "combat_initiative_over":
        return f"{combat}: {name('fighter')}'s initiative ends"
    if kind == "combat_action":
        steps = data.get("steps") or 0
        did = f"moves {steps} step{'s' if steps != 1 else ''}" if steps else "acts"
        return f"{combat}: {name('fighter')} {did} ({data.get('kind')} action)"
    if kind == "combat_attacked":
        power = f" ({data['power']})" if data.get("power") else ""
        what = f"{data.get('category')}{power}"
        return f"{combat}: {name('attacker')} challenges {name('target')}, {what}"
    if kind == "combat_inflicted":
        effect = str(data.get("effect") or "").replace("_", " ")
        return f"{combat}: {name('by')}'s maneuver: {name('fighter')} is {effect}"
    if kind == "combat_grapple_released":
        return f"{combat}: {name('fighter')} is free of the grapple"
    if kind == "combat_fighter_removed":
        why = f" ({data['reason']})" if data.get("reason") else ""
        return f"{combat}: {name('fighter')} is out of the combat{why}"
    return f"{combat}: " + kind.removeprefix("combat_").replace("_", " ")


def _fight_text(kind: str, data: dict, names: dict[int, str]) -> str:
    """A ``fight_*`` or ``track_*`` event (issue 13,
    ``challenges.services.story_combat``) in words: "Fight #2 starts: Cleo,
    Bram, Ada", "Fight #2: Cleo attacks Bram: 3 successes, 3 lethal (track
    XXX···)", "Ada's track: 2 lethal (fire): ······ → XX····"; other kinds
    by their name."""
    fight = f"Fight #{data.get('fight', '?')}"

    def name(key: str) -> str:
        return names.get(data.get(key), "?")

    if kind == "fight_started":
        rolled = {int(i): total for i, _, total in data.get("initiative") or []}
        order = ", ".join(f"{names.get(i, '?')} ({rolled.get(i)})" for i in data.get("order") or [])
        return f"{fight} starts, Initiative rolled: {order}"
    if kind == "fight_ended":
        return f"{fight} ends" + (f" ({data['reason']})" if data.get("reason") else "")
    if kind == "fight_turn_started":
        return f"{fight}: Turn {data.get('turn')} begins"
    if kind == "fight_rolled":
        successes = (data.get("roll") or {}).get("successes", 0)
        hurt = (
            f"{data.get('damage')} {data.get('damage_type')}" if data.get("damage") else "no damage"
        )
        return (
            f"{fight}: {name('by')} attacks {name('target')} (Defense {data.get('defense')}):"
            f" {successes} successes, {hurt} (track {data.get('track')})"
        )
    if kind == "fight_acted" and data.get("action") != "attack":
        return f"{fight}: {name('fighter')} " + str(data.get("action", "")).replace("_", " ")
    if kind in ("fight_dodged", "fight_yielded", "fight_removed", "fight_joined"):
        what = kind.removeprefix("fight_")
        extra = f" ({data['until'].replace('_', ' ')})" if data.get("until") else ""
        return f"{fight}: {name('fighter')} {what}{extra}"
    if kind in ("track_mark", "track_heal"):
        what = (
            f"{data.get('points')} {data.get('damage_type')}"
            if kind == "track_mark"
            else f"{data.get('points')} healed"
        )
        return (
            f"{name('character')}'s track: {what} ({data.get('reason')}):"
            f" {data.get('before')} → {data.get('after')}"
        )
    if kind == "track_healed":
        return f"{name('character')} heals: track {data.get('after')}"
    return f"{fight}: " + kind.removeprefix("fight_").replace("_", " ")


def session_history(
    session: GameSession,
    *,
    character_id: int | None = None,
    group: str = "",
    state: str = "",
    own_only: bool = False,
) -> History:
    """The history of ``session``, oldest first, filtered: ``character_id``
    (her challenges and the events naming her), ``group`` (a key of
    :data:`GROUPS`; "" for all), ``state`` ("open" or "settled": entries of
    challenges in that state only). ``own_only`` (a player's view): only her
    challenges' entries, never the session's own, and no prepared static's
    difficulty (:func:`_entries`). Four queries."""
    events = Event.objects.filter(session=session).select_related("actor").order_by("id")
    if character_id is not None:
        mine = Q(challenge__challenger_id=character_id) | Q(challenge__defender_id=character_id)
        if not own_only:
            mine |= Q(challenge__isnull=True, data__character=character_id)
        events = events.filter(mine)
    if own_only or state:
        events = events.filter(challenge__isnull=False)
    if state == "open":
        events = events.exclude(challenge__stage=Stage.RESOLVED)
    elif state == "settled":
        events = events.filter(challenge__stage=Stage.RESOLVED)
    events = list(events)
    challenges = {
        c.pk: c
        for c in Challenge.objects.filter(pk__in={e.challenge_id for e in events} - {None}).only(
            "pk", "challenger_id", "defender_id", "stage", "kind", "prepared_id", "stakes"
        )
    }
    names = dict(Character.objects.filter(chronicle=session.chronicle_id).values_list("pk", "name"))
    entries: list[Entry] = []
    for event in events:
        found = _entries(event, challenges.get(event.challenge_id or 0), names, for_player=own_only)
        entries.extend(e for e in found if not group or e.group == group)
    if character_id is not None and own_only:
        entries = [e for e in entries if e.challenge_id is not None]
    return History(entries, names)


_CSV_FIELDS = ("at", "event", "challenge", "group", "kind", "text", "actor", "characters", "data")


def _cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet will not run as a formula: text a player
    or narrator typed (a reason, a Trait name) that starts with = + - @ or a
    tab gets a leading apostrophe (OWASP "CSV injection")."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def history_csv(history: History) -> str:
    """The history as CSV text: one row per entry, the columns of
    :data:`_CSV_FIELDS` (characters as "id:name" separated by "; ", data as
    JSON), each text cell through :func:`_cell`."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(_CSV_FIELDS)
    for entry in history.entries:
        writer.writerow(
            _cell(value)
            for value in [
                entry.at.isoformat(),
                entry.event_id,
                "" if entry.challenge_id is None else entry.challenge_id,
                entry.group,
                entry.kind,
                entry.text,
                entry.actor,
                "; ".join(f"{c}:{history.names.get(c, '')}" for c in entry.characters),
                json.dumps(entry.data, ensure_ascii=False, sort_keys=True),
            ]
        )
    return out.getvalue()


def history_json(history: History, session: GameSession) -> str:
    """The history as a JSON document: ``{"session": {...}, "entries": [...]}``."""
    return json.dumps(
        {
            "session": {
                "id": session.pk,
                "chronicle": str(session.chronicle),
                "label": session.label,
            },
            "entries": [e.as_dict(history.names) for e in history.entries],
        },
        ensure_ascii=False,
        indent=1,
    )


def characters_of(entries: Iterable[Entry]) -> set[int]:
    """Every character id the entries mention."""
    return {c for e in entries for c in e.characters}
