"""``storytelling`` rule options as data: where seeds/003 is silent, the app
decides, and each such point is a field of :class:`StorytellingOptions` with
its default and its source. :data:`STORYTELLING` is the preset; a chronicle
changes one point with ``dataclasses.replace(STORYTELLING, ...)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any


class ContestedTie(StrEnum):
    """What equal successes in a contested action mean. seeds/003 "Actions"
    says only "the person with the most successes wins".

    ``status_quo`` (default): neither wins; whatever the acting side tried
    does not happen (the resisting side keeps things as they are).
    ``roll_again``: both sides roll again, as often as it takes (every roll
    is kept).
    """

    STATUS_QUO = "status_quo"
    ROLL_AGAIN = "roll_again"


class ExtendedDramatic(StrEnum):
    """What a dramatic failure (a 1 on a chance die) does to an extended
    action; seeds/003 "Chance Die" and "Actions" are silent.

    ``ends`` (default): the extended action ends at once, failed, with the
    successes gathered so far recorded but not reached. ``no_successes``:
    the roll adds nothing and the action goes on.
    """

    ENDS = "ends"
    NO_SUCCESSES = "no_successes"


class InitiativeTie(StrEnum):
    """Who acts first when two Initiative results are equal; seeds/003
    "Combat" is silent.

    ``higher_modifier`` (default): the higher Initiative modifier first, then
    the narrator's order. ``narrator``: the narrator's order alone.
    """

    HIGHER_MODIFIER = "higher_modifier"
    NARRATOR = "narrator"


class FullTrack(StrEnum):
    """What new bashing or lethal damage does to a full track that holds no
    bashing wound to upgrade. seeds/003 "Additional Damage" upgrades only a
    bashing wound ("make the leftmost / into an X") and is silent here.

    ``unmarked`` (default): nothing more can be marked; the points are
    reported as unmarked so the narrator can rule. ``lethal_to_aggravated``:
    each point upgrades the leftmost lethal wound to aggravated.
    """

    UNMARKED = "unmarked"
    LETHAL_TO_AGGRAVATED = "lethal_to_aggravated"


@dataclass(frozen=True)
class StorytellingOptions:
    """The ``storytelling`` rule points seeds/003 leaves open.

    ``contested_tie``: :class:`ContestedTie` (seeds/003 "Actions").
    ``extended_dramatic``: :class:`ExtendedDramatic` (seeds/003 "Chance Die",
    "Actions"). ``initiative_tie``: :class:`InitiativeTie` (seeds/003
    "Combat"). ``full_track``: :class:`FullTrack` (seeds/003 "Additional
    Damage"). ``extended_interval_seconds``: the time one roll of an
    extended action stands for when the action names none, 600 (seeds/003
    "Actions": "usually 10 minutes"). ``most_contest_rolls``: under
    ``roll_again``, how many tied rolls in a row end the contest in the
    status quo after all (a guard: chance die against chance die ties
    four times in five), 20.
    """

    contested_tie: ContestedTie = ContestedTie.STATUS_QUO
    extended_dramatic: ExtendedDramatic = ExtendedDramatic.ENDS
    initiative_tie: InitiativeTie = InitiativeTie.HIGHER_MODIFIER
    full_track: FullTrack = FullTrack.UNMARKED
    extended_interval_seconds: float = 600.0
    most_contest_rolls: int = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "contested_tie", ContestedTie(self.contested_tie))
        object.__setattr__(self, "extended_dramatic", ExtendedDramatic(self.extended_dramatic))
        object.__setattr__(self, "initiative_tie", InitiativeTie(self.initiative_tie))
        object.__setattr__(self, "full_track", FullTrack(self.full_track))
        if self.extended_interval_seconds <= 0 or self.most_contest_rolls < 1:
            raise ValueError("Intervals and roll limits must be positive.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form: {field: value}, enums as their values."""
        return {k: (v.value if isinstance(v, StrEnum) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StorytellingOptions:
        """Inverse of :meth:`to_dict`; missing keys take the defaults."""
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


STORYTELLING = StorytellingOptions()
"""The ``storytelling`` preset: every default above."""
