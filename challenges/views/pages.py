"""The HTTP pages: where a login lands, a player's phone, the narrator's entry
and dashboard, a character's panel, and the opponent search. Each renders the
same templates as the websocket consumers, from the view-models of
:mod:`~challenges.views.phone` and :mod:`~challenges.views.dashboard`; pages
are ``challenges/home.html``, ``play.html``, ``narrate.html``,
``narrate_start.html``, ``_character_panel.html`` and ``_opponent_chips.html``."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from challenges.rules import Category
from challenges.services import clocks
from challenges.views.dashboard import ON_ROSTER, character_panel_context, dashboard_context
from challenges.views.phone import (
    OPPONENT_QUERY_MAX,
    OPPONENT_RESULTS,
    play_context,
    present_opponents,
)
from challenges.views.seats import npc_seat, player_seat
from characters.models import Character, Chronicle, GameSession


# Pages ---------------------------------------------------------------------
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Where a login lands: straight to the only character, or to the narrator's
    entry (``narrate_index``) for a narrator of one chronicle who plays no
    character; else a list."""
    characters = list(
        Character.objects.filter(player=request.user).select_related("chronicle").order_by("name")
    )
    chronicles = [
        c for c in Chronicle.objects.prefetch_related("narrators") if c.is_narrator(request.user)
    ]
    if len(characters) == 1 and not chronicles:
        return redirect("play", character_id=characters[0].pk)
    if len(chronicles) == 1 and not characters:
        return redirect("narrate_index")
    sessions = [(c, c.open_session()) for c in chronicles]
    return render(request, "challenges/home.html", {"characters": characters, "sessions": sessions})


@login_required
def play(request: HttpRequest, character_id: int) -> HttpResponse:
    """A player's phone screen for one of her characters."""
    seat = player_seat(request.user, character_id)
    if seat is None:
        raise Http404("No such character of yours.")
    character, session = seat
    if session is not None:
        clocks.clocks_tick(session.pk)  # s11: health clocks due now (one query when none)
    return render(request, "challenges/play.html", play_context(character, session))


@login_required
def narrate_index(request: HttpRequest) -> HttpResponse:
    """The narrator's entry: her chronicle's open session, else its latest (ended,
    with "Start session N" on it), or a list if she narrates several chronicles
    with a session. A chronicle with no session at all gets a page with "Start
    session 1"; that button POSTs ``chronicle`` here, which starts it
    (``services.session_start``) and goes to its dashboard."""
    chronicles = [
        c for c in Chronicle.objects.prefetch_related("narrators") if c.is_narrator(request.user)
    ]
    if request.method == "POST":
        return _start_first_session(request, chronicles)
    if not chronicles:
        raise PermissionDenied("You narrate no chronicle.")
    sessions = [(c, c.open_session() or c.latest_session()) for c in chronicles]
    with_session = [(c, s) for c, s in sessions if s is not None]
    if len(with_session) == 1:
        return redirect("narrate", session_id=with_session[0][1].pk)
    if not with_session and len(chronicles) == 1:
        return render(request, "challenges/narrate_start.html", {"chronicle": chronicles[0]})
    return render(request, "challenges/home.html", {"characters": [], "sessions": sessions})


def _start_first_session(request: HttpRequest, chronicles: list[Chronicle]) -> HttpResponse:
    from challenges.services import ActionRefused, session_start

    chronicle = next((c for c in chronicles if str(c.pk) == request.POST.get("chronicle")), None)
    if chronicle is None:
        raise PermissionDenied("You do not narrate this chronicle.")
    try:
        session = session_start(chronicle=chronicle, user=request.user, number=1)
    except ActionRefused:  # started meanwhile (another tablet): go to it
        session = chronicle.open_session() or chronicle.latest_session()
    return redirect("narrate", session_id=session.pk)


def dashboard_url(session_id: int) -> str:
    """The address of a session's dashboard."""
    return reverse("narrate", args=[session_id])


@login_required
def narrate(request: HttpRequest, session_id: int) -> HttpResponse:
    """The narrator's live dashboard of one session."""
    session = get_object_or_404(GameSession.objects.select_related("chronicle"), pk=session_id)
    if not session.chronicle.is_narrator(request.user):
        raise PermissionDenied("You do not narrate this chronicle.")
    clocks.clocks_tick(session.pk)  # s11: health clocks due now (one query when none)
    context = {**dashboard_context(session), "npcs_away": npcs_away(session)}
    return render(request, "challenges/narrate.html", context)


def npcs_away(session: GameSession) -> list[Character]:
    """Issue 11 section 4: the chronicle's characters with no player (NPCs)
    not on tonight's roster, by name; a narrator's Play opens one's phone
    screen, which brings it in. One query."""
    here = Character.objects.filter(presences__session=session, presences__status__in=ON_ROSTER)
    return list(
        Character.objects.filter(chronicle=session.chronicle_id, player__isnull=True)
        .exclude(pk__in=here.values("pk"))
        .order_by("name")
        .only("name", "auto_answer")
    )


@login_required
def narrate_character(request: HttpRequest, session_id: int, character_id: int) -> HttpResponse:
    """One character's sheet tonight on a narrator's dashboard, with "Static
    challenge" and "Simple test" for her: the panel alone for htmx (a tap on
    the roster), else the whole dashboard with the panel open. 403 unless the
    user narrates the chronicle, 404 if there is no such session or character."""
    session = get_object_or_404(GameSession.objects.select_related("chronicle"), pk=session_id)
    if not session.chronicle.is_narrator(request.user):
        raise PermissionDenied("You do not narrate this chronicle.")
    panel = character_panel_context(session, character_id)
    if panel is None:
        raise Http404("No such character in this chronicle.")
    if request.headers.get("HX-Request"):
        context = {"panel": panel, "session": session, "categories": list(Category)}
        return render(request, "challenges/_character_panel.html", context)
    return render(
        request, "challenges/narrate.html", {**dashboard_context(session), "panel": panel}
    )


@login_required
def opponents(request: HttpRequest, character_id: int) -> HttpResponse:
    """The radio chips of present characters whose name contains ``?q=`` (the
    "Challenge someone" search box's results, at most :data:`OPPONENT_RESULTS`).
    404 unless the character is the user's; nothing is marked present here."""
    character = Character.objects.select_related("chronicle").filter(pk=character_id).first()
    if character is None or not (
        character.player_id == request.user.pk
        or (character.player_id is None and npc_seat(request.user, character_id) is not None)
    ):
        raise Http404("No such character of yours.")
    session = character.chronicle.open_session()
    query = request.GET.get("q", "").strip()[:OPPONENT_QUERY_MAX]
    found: list[Character] = []
    if session is not None:
        found = present_opponents(session, character, query, limit=OPPONENT_RESULTS + 1)
    return render(
        request,
        "challenges/_opponent_chips.html",
        {
            "opponents": found[:OPPONENT_RESULTS],
            "more": len(found) > OPPONENT_RESULTS,
            "query": query,
            "character": character,
        },
    )
