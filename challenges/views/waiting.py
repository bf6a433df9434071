"""What waits on a player, pinned at the top of her phone as one bar
(``templates/challenges/_waiting_bar.html``, ``#waiting-bar``): being
challenged, her throw, her answer to a retest, her initiative in a combat,
her turn in a fight, her roll, her move in a mob scene. The bar is drawn
with every whole view (``play.html``, ``play_live.html``) and, out of band,
with each frame that changes one of those things
(``challenges.consumers.play``: :class:`WaitingBar`), so it never lags
behind the cards it points at. ``static/narrator/alerts.js`` vibrates,
beeps and keeps the screen awake from what it shows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.safestring import SafeString

from challenges.rules import Side, Stage, bns

#: What her move is, by stage of a MET challenge (``{}``: her opponent's name).
_MET_WORDS = {
    Stage.BID: "Your static challenge: bid",
    Stage.RESPONSE: "{} challenges you: answer",
    Stage.THROWS: "Challenge with {}: your throw",
    Stage.DECLARE_CHALLENGER: "Tie with {}: declare your Traits",
    Stage.DECLARE_DEFENDER: "Tie with {}: declare your Traits",
    Stage.RETEST: "Challenge with {}: retest or accept",
    Stage.RETEST_ANSWER: "{} calls a retest: answer",
}
_OWED_WORDS = "Challenge with {}: bid one more Trait"
#: The same for a challenge of test pools (``bns``).
_BNS_WORDS = {
    bns.BnsStage.ANSWER: "{} attacks you: choose a defence",
    bns.BnsStage.THROWS: "Attack with {}: your throw",
    bns.BnsStage.RETEST: "Attack with {}: retest or accept",
}


@dataclass(frozen=True)
class Waiting:
    """One thing waiting on her: ``key`` names the thing (``"card-12"``,
    ``"combat-3"``, ``"fight-2"``, ``"roll-7"``, ``"mob-4"``), ``step`` her
    move in it (``"response"``, ``"turn"``: a new step is a new alert),
    ``html`` the bar's words (safe HTML, names in ``<bdi>``: "Mara
    challenges you: answer"), ``target`` a CSS selector of the card a tap
    on the bar scrolls to."""

    key: str
    step: str
    html: SafeString
    target: str

    @property
    def signature(self) -> str:
        """``key.step``: what ``alerts.js`` compares between frames."""
        return f"{self.key}.{self.step}"


def _words(template: str, name: str) -> SafeString:
    return format_html(template.replace("{}", "<bdi>{}</bdi>"), name)


def challenge_waiting(view) -> Waiting | None:
    """What a challenge card of hers (a ``ChallengeView``, or a
    ``BnsCardView`` when ``view.pooled``) waits on her for, None if
    nothing (her opponent's move, or over). No query."""
    if not view.waiting_on_me:
        return None
    opponent = view.defender_name if view.side is Side.CHALLENGER else view.challenger_name
    stage = view.state.stage
    if view.pooled:
        words = _BNS_WORDS.get(stage, "Attack with {}: your move")
    elif stage is Stage.THROWS and view.state.of(view.side, "owed"):
        words = _OWED_WORDS
    else:
        words = _MET_WORDS.get(stage, "Challenge with {}: your move")
    key = f"card-{view.pk}"
    return Waiting(key, stage.value, _words(words, opponent), f"#{key}")


def combat_waiting(combat) -> Waiting | None:
    """Her initiative in a ``bns`` combat (``CombatView.my_turn``)."""
    if not combat.my_turn or combat.ended:
        return None
    target = f'[data-combat="{combat.pk}"]'
    return Waiting(f"combat-{combat.pk}", "turn", format_html("Combat: your initiative"), target)


def fight_waiting(fight) -> Waiting | None:
    """Her turn in a Storytelling fight (``FightView.my_turn``)."""
    if not fight.my_turn or fight.ended:
        return None
    target = f'[data-fight="{fight.pk}"]'
    return Waiting(f"fight-{fight.pk}", "turn", format_html("Fight: your turn"), target)


def roll_waiting(card) -> Waiting | None:
    """Her roll to make or to resist (``RollCard.can_roll``, ``can_resist``)."""
    if card.over or not (card.can_roll or card.can_resist):
        return None
    if card.can_resist:
        step, html = "resist", format_html("<bdi>{}</bdi>: roll to resist", card.title)
    else:
        step, html = "roll", format_html("Your roll: {}", card.to_roll or card.title)
    return Waiting(f"roll-{card.pk}", step, html, f"#roll-{card.pk}")


def mob_waiting(mob) -> Waiting | None:
    """Her move in a mob scene: her target, her leader, or her bid."""
    for flag, step, words in (
        ("can_choose", "choose", "Mob scene: choose your target"),
        ("can_lead", "lead", "Mob scene: pick your leader"),
        ("can_bid", "bid", "Mob scene: your bid"),
    ):
        if getattr(mob, flag):
            target = f'[data-mob="{mob.pk}"]'
            return Waiting(f"mob-{mob.pk}", f"{step}{mob.current}", format_html(words), target)
    return None


def waiting_on_her(
    *, challenges: Iterable = (), combats=(), fights=(), rolls=(), mobs=()
) -> list[Waiting]:
    """Everything on her phone that waits on her, in screen order: her
    challenges (as listed: open ones oldest first), combats, fights, rolls,
    mob scenes. No query."""
    found = [
        *map(challenge_waiting, challenges),
        *map(combat_waiting, combats),
        *map(fight_waiting, fights),
        *map(roll_waiting, rolls),
        *map(mob_waiting, mobs),
    ]
    return [w for w in found if w is not None]


def bar_html(waits: list[Waiting], *, oob: bool) -> str:
    """The bar (``_waiting_bar.html``) showing ``waits``."""
    return render_to_string("challenges/_waiting_bar.html", {"waits": waits, "oob": oob})


class WaitingBar:
    """What one phone's bar shows, kept by its consumer between frames:
    each frame that changes a card, a combat, a fight, a roll or a mob
    scene updates its entries (:meth:`put`, :meth:`replace`), then
    :meth:`frame` gives the bar out of band if it changed."""

    def __init__(self, waits: list[Waiting], *, shown: bool = True) -> None:
        """``waits``: what waits on her now; ``shown``: her screen's bar
        already shows them (a whole view drew it)."""
        self.waits = {w.key: w for w in waits}
        self.sent: tuple[Waiting, ...] | None = tuple(waits) if shown else None

    def put(self, key: str, waiting: Waiting | None) -> None:
        """The entry of ``key`` is now ``waiting`` (None: nothing waits there).
        A thing already listed keeps its place; a new one goes last."""
        if waiting is None:
            self.waits.pop(key, None)
        else:
            self.waits[key] = waiting

    def replace(self, kind: str, waits: Iterable[Waiting | None]) -> None:
        """All entries of ``kind`` (``"combat"``, ``"roll"``…) are now ``waits``."""
        fresh = {w.key: w for w in waits if w is not None}
        kept = {k: w for k, w in self.waits.items() if not k.startswith(f"{kind}-") or k in fresh}
        kept.update(fresh)
        self.waits = kept

    def keep(self, kind: str, keys: set[str]) -> None:
        """Drop the entries of ``kind`` whose key is not in ``keys`` (cards
        pushed off her screen)."""
        self.waits = {
            k: w for k, w in self.waits.items() if not k.startswith(f"{kind}-") or k in keys
        }

    def frame(self) -> str:
        """The bar, out of band, if it changed since last sent; else ""."""
        now = tuple(self.waits.values())
        if now == self.sent:
            return ""
        self.sent = now
        return bar_html(list(now), oob=True)
