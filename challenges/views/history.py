"""s11 rulings: the narrator's "Rule…" dialog and the evening's history — a
narrator's history page (filters, pages, htmx) with its CSV and JSON
downloads, and a player's history of her own challenges. Templates:
``challenges/_rule_form.html``, ``narrate_history.html`` with
``_history_table.html``, ``play_history.html``. History entries come from
:mod:`challenges.history`."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from challenges.history import GROUP_NAMES, GROUPS, history_csv, history_json, session_history
from challenges.models import POOLS_KIND, Challenge, TraitLoss
from challenges.views.seats import player_seat
from challenges.views.shared import challenge_view
from characters.models import Character, GameSession, Trait

HISTORY_PAGE = 50  # entries per page


def _narrated(request: HttpRequest, session_id: int) -> GameSession:
    """The session if the user narrates its chronicle: 404 without it, 403 for
    anyone else."""
    session = get_object_or_404(GameSession.objects.select_related("chronicle"), pk=session_id)
    if not session.chronicle.is_narrator(request.user):
        raise PermissionDenied("You do not narrate this chronicle.")
    return session


@dataclass(frozen=True)
class RuledTrait:
    """A Trait in the "Rule…" dialog: its id, name, category, copies held and lost tonight."""

    pk: int
    name: str
    category: str
    held: int
    lost: int


@login_required
def narrate_rule(request: HttpRequest, session_id: int, challenge_id: int) -> HttpResponse:
    """The body of the "Rule…" dialog for one challenge: settle for either
    side, void, force a retest (when the engine allows each), give back or take
    away a Trait of either character. 403 unless a narrator of the chronicle."""
    session = _narrated(request, session_id)
    # A challenge of test pools (issue 12) is voided or settled from its own row.
    challenge = get_object_or_404(
        Challenge.objects.exclude(kind=POOLS_KIND), pk=challenge_id, session=session
    )
    row = challenge_view(challenge, None)
    ids = [pk for pk in (challenge.challenger_id, challenge.defender_id) if pk]
    lost = dict(
        TraitLoss.objects.filter(session=session, character_id__in=ids)
        .values("trait_id")
        .annotate(n=Count("id"))
        .values_list("trait_id", "n")
    )
    people = []
    for character in Character.objects.filter(pk__in=ids).order_by("name"):
        traits = [
            RuledTrait(t.pk, t.name, t.get_category_display(), t.count, lost.get(t.pk, 0))
            for t in Trait.objects.filter(character=character, negative=False)
        ]
        people.append({"character": character, "traits": traits})
    return render(
        request,
        "challenges/_rule_form.html",
        {"row": row, "people": people, "session": session},
    )


def _filters(request: HttpRequest, names: dict[int, str]) -> dict:
    """The history filters from the query string, checked: ``character`` (an
    id of the chronicle), ``kind`` (a group of :data:`GROUPS`), ``state``."""
    try:
        character = int(request.GET.get("character") or 0) or None
    except ValueError:
        character = None
    if character not in names:
        character = None
    kind = request.GET.get("kind", "")
    state = request.GET.get("state", "")
    return {
        "character": character,
        "kind": kind if kind in GROUP_NAMES else "",
        "state": state if state in ("open", "settled") else "",
    }


def _names(session: GameSession) -> dict[int, str]:
    return dict(
        Character.objects.filter(chronicle=session.chronicle_id)
        .order_by("name")
        .values_list("pk", "name")
    )


@login_required
def narrate_history(request: HttpRequest, session_id: int) -> HttpResponse:
    """The session's history for its narrators, filtered by ``?character=``,
    ``?kind=`` (a group), ``?state=`` (open/settled), :data:`HISTORY_PAGE`
    entries a page (``?page=``); the table alone for htmx."""
    session = _narrated(request, session_id)
    names = _names(session)
    chosen = _filters(request, names)
    history = session_history(
        session, character_id=chosen["character"], group=chosen["kind"], state=chosen["state"]
    )
    page = Paginator(history.entries, HISTORY_PAGE).get_page(request.GET.get("page"))
    query = "&".join(f"{k}={v}" for k, v in chosen.items() if v)
    context = {
        "session": session,
        "page": page,
        "names": history.names,
        "characters": list(names.items()),
        "groups": GROUPS,
        "chosen": chosen,
        "query": query,
    }
    if request.headers.get("HX-Request"):
        return render(request, "challenges/_history_table.html", context)
    return render(request, "challenges/narrate_history.html", context)


@login_required
def narrate_history_download(request: HttpRequest, session_id: int, fmt: str) -> HttpResponse:
    """The session's whole history (the same filters) as ``csv`` or ``json``,
    an attachment named ``session-<id>-history.<fmt>``. Narrators of its
    chronicle only (403)."""
    session = _narrated(request, session_id)
    chosen = _filters(request, _names(session))
    history = session_history(
        session, character_id=chosen["character"], group=chosen["kind"], state=chosen["state"]
    )
    if fmt == "csv":
        response = HttpResponse(history_csv(history), content_type="text/csv; charset=utf-8")
    elif fmt == "json":
        response = HttpResponse(history_json(history, session), content_type="application/json")
    else:
        raise Http404("No such format.")
    response["Content-Disposition"] = f'attachment; filename="session-{session.pk}-history.{fmt}"'
    return response


@login_required
def play_history(request: HttpRequest, character_id: int) -> HttpResponse:
    """A player's history of her own challenges tonight (her chronicle's open
    session): 404 unless the character is hers; nobody else's challenges."""
    seat = player_seat(request.user, character_id)
    if seat is None:
        raise Http404("No such character of yours.")
    character, session = seat
    page = None
    if session is not None:
        history = session_history(session, character_id=character.pk, own_only=True)
        page = Paginator(history.entries[::-1], HISTORY_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "challenges/play_history.html",
        {"character": character, "session": session, "page": page},
    )
