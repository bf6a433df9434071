"""A narrator finds any challenge of the evening from her dashboard, which
lists only a window of them (``views.dashboard.DASHBOARD_LIMIT``): by either
side's name, by category, by state (open, waiting on a narrator, resolved) and
by age, each filter's choices counted under the others. Template:
``challenges/_find_challenges.html`` (htmx swaps it into ``#found``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from challenges.models import Challenge
from challenges.rules import Category, Stage
from challenges.views.history import _narrated
from challenges.views.shared import challenge_view

#: Challenges a search shows at most, the oldest waiting first; a narrower
#: search finds the others.
FOUND_AT_MOST = 30

#: The state filter's choices: (value, words, condition).
STATES = (
    ("open", "Open", ~Q(stage=Stage.RESOLVED)),
    ("called", "Waiting on a narrator", Q(called_at__isnull=False)),
    ("resolved", "Resolved", Q(stage=Stage.RESOLVED)),
)
#: The age filter's choices: (value, words, minutes in their stage at least).
AGES = (
    ("5", "5 minutes or more", 5),
    ("15", "15 minutes or more", 15),
    ("60", "an hour or more", 60),
)


@dataclass(frozen=True)
class Choice:
    """One choice of a filter: its value, words, how many challenges it would
    find with the other filters as they are, and whether it is chosen."""

    value: str
    words: str
    count: int
    chosen: bool


def _filters(request: HttpRequest) -> dict[str, str]:
    """The filters asked for, each "" when not (unknown values are ignored)."""
    get = request.GET
    category = get.get("category", "")
    state = get.get("state", "")
    age = get.get("age", "")
    return {
        "q": " ".join(get.get("q", "").split())[:100],
        "category": category if category in {c.value for c in Category} else "",
        "state": state if state in {s[0] for s in STATES} else "",
        "age": age if age in {a[0] for a in AGES} else "",
    }


def _condition(name: str, value: str) -> Q:
    """The Q of filter ``name`` at ``value`` ("" matches everything)."""
    if not value:
        return Q()
    if name == "q":
        return Q(challenger__name__icontains=value) | Q(defender__name__icontains=value)
    if name == "category":
        return Q(category=value)
    if name == "state":
        return next(condition for v, _, condition in STATES if v == value)
    minutes = next(m for v, _, m in AGES if v == value)
    return Q(stage_since__lte=timezone.now() - timedelta(minutes=minutes))


def _counted(session_challenges: QuerySet, chosen: dict[str, str]) -> dict[str, list[Choice]]:
    """Each filter's choices with their counts under the other filters (one
    aggregate query per filter)."""
    options = {
        "category": [(c.value, c.value.title(), Q(category=c.value)) for c in Category],
        "state": list(STATES),
        "age": [(v, words, _condition("age", v)) for v, words, _ in AGES],
    }
    out = {}
    for name, choices in options.items():
        others = Q()
        for other, value in chosen.items():
            if other != name:
                others &= _condition(other, value)
        counts = session_challenges.filter(others).aggregate(
            **{f"c{i}": Count("pk", filter=cond) for i, (_, _, cond) in enumerate(choices)}
        )
        out[name] = [
            Choice(value, words, counts[f"c{i}"], chosen[name] == value)
            for i, (value, words, _) in enumerate(choices)
        ]
    return out


@login_required
def narrate_find(request: HttpRequest, session_id: int) -> HttpResponse:
    """The challenges of the session matching ``?q=`` (a side's name, any
    case), ``?category=``, ``?state=`` (open, called, resolved) and ``?age=``
    (minutes in their stage: 5, 15, 60): the :data:`FOUND_AT_MOST` longest
    waiting in their stage, each with its Rule…, and every choice counted.
    403 unless the user narrates the chronicle, 404 without the session."""
    session = _narrated(request, session_id)
    chosen = _filters(request)
    everything = Challenge.objects.filter(session=session)
    found = everything
    for name, value in chosen.items():
        found = found.filter(_condition(name, value))
    total = found.count()
    challenges = found.select_related("challenger", "defender").order_by("stage_since", "-id")
    rows = [challenge_view(c, None) for c in challenges[:FOUND_AT_MOST]]
    counted = _counted(everything, chosen)
    return render(
        request,
        "challenges/_find_challenges.html",
        {
            "session": session,
            "rows": rows,
            "total": total,
            "chosen": chosen,
            "filters": [
                (name, label, counted[name])
                for name, label in (
                    ("state", "State"),
                    ("category", "Category"),
                    ("age", "Waiting"),
                )
            ],
            "at_most": FOUND_AT_MOST,
        },
    )
