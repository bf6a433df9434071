"""Prepared statics (issue 11, section 1): a narrator prepares static
challenges for objects and places (``narrate_statics.html``), prints their QR
codes and the players' join links as cards (``print_sheet.html``) and, in a
chronicle with dice pools (issue 13), the character sheets
(``print_story_sheets.html``), and a
player who scans one lands on ``static_scan.html``, which opens the challenge
(``services.prepared_static_open``) and sends her to her phone's play page,
where she bids and throws as in any static challenge. The difficulty appears
on no page a player sees."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import qrcode
import qrcode.image.svg
from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.cache import never_cache
from sesame.utils import get_query_string

from challenges.models import Challenge, PreparedStatic
from challenges.rules import RulesError, Stage
from characters.models import Character, Chronicle
from characters.story_sheets import story_sheets


def qr_svg(data: str) -> SafeString:
    """``data`` as an inline SVG QR code (``qrcode``'s path image: one
    ``<path>``, sized in mm, no XML declaration), safe to embed in HTML."""
    image = qrcode.make(
        data,
        image_factory=qrcode.image.svg.SvgPathImage,
        error_correction=qrcode.constants.ERROR_CORRECT_M,
        border=2,
    )
    return mark_safe(image.to_string(encoding="unicode"))  # made by qrcode, no user markup


@dataclass(frozen=True)
class PrintCard:
    """One card of a printable sheet: a title, a line under it, the link and
    its QR code (SVG)."""

    title: str
    line: str
    link: str
    qr: SafeString


def public_url(request: HttpRequest) -> str:
    """Where players' phones reach Narrator, "scheme://host[:port]" with no
    trailing slash: ``settings.PUBLIC_URL`` when set, else the address and
    port the request itself reached this server at (its socket's, as the
    ASGI server reports it). Never the request's Host header: anyone may
    forge that while ``ALLOWED_HOSTS`` is "*", and printed links would then
    send players elsewhere."""
    if settings.PUBLIC_URL:
        return settings.PUBLIC_URL
    host, port = request.META["SERVER_NAME"], str(request.META["SERVER_PORT"])
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    default = "443" if request.scheme == "https" else "80"
    return f"{request.scheme}://{host}" + ("" if port == default else f":{port}")


def _narrated(request: HttpRequest, chronicle_id: int) -> Chronicle:
    chronicle = get_object_or_404(Chronicle, pk=chronicle_id)
    if not chronicle.is_narrator(request.user):
        raise PermissionDenied("You do not narrate this chronicle.")
    return chronicle


class PreparedStaticForm(forms.ModelForm):
    """A narrator's form for one prepared static (the dashboard's page)."""

    class Meta:
        model = PreparedStatic
        fields = [
            "name",
            "hint",
            "category",
            "difficulty",
            "reveal",
            "may_overbid",
            "may_retest",
            "available_from",
            "available_until",
            "session",
            "active",
        ]
        widgets = {
            "available_from": forms.DateTimeInput(
                attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"
            ),
            "available_until": forms.DateTimeInput(
                attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"
            ),
            "reveal": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args, chronicle: Chronicle, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["session"].queryset = chronicle.sessions.all()
        self.fields["available_from"].input_formats = ["%Y-%m-%dT%H:%M"]
        self.fields["available_until"].input_formats = ["%Y-%m-%dT%H:%M"]


@login_required
def prepared_statics(request: HttpRequest, chronicle_id: int) -> HttpResponse:
    """A narrator's list of her chronicle's prepared statics with a form:
    create (POST), edit (``?edit=<id>``, POST ``id``), retire or bring back
    (POST ``retire=<id>`` / ``restore=<id>``). 403 unless she narrates it."""
    chronicle = _narrated(request, chronicle_id)
    statics = chronicle.prepared_statics.annotate(tries=Count("attempts"))
    instance = None
    if edit := request.POST.get("id") or request.GET.get("edit"):
        instance = get_object_or_404(statics, pk=edit)
    if request.method == "POST":
        for flag, active in (("retire", False), ("restore", True)):
            if pk := request.POST.get(flag):
                statics.filter(pk=pk).update(active=active)
                return redirect("prepared_statics", chronicle_id=chronicle.pk)
        form = PreparedStaticForm(request.POST, instance=instance, chronicle=chronicle)
        if form.is_valid():
            form.instance.chronicle = chronicle
            form.save()
            return redirect("prepared_statics", chronicle_id=chronicle.pk)
    else:
        form = PreparedStaticForm(instance=instance, chronicle=chronicle)
    session = chronicle.open_session() or chronicle.latest_session()
    return render(
        request,
        "challenges/narrate_statics.html",
        {
            "chronicle": chronicle,
            "statics": statics,
            "form": form,
            "editing": instance,
            "session": session,
        },
    )


@login_required
def statics_sheet(request: HttpRequest, chronicle_id: int) -> HttpResponse:
    """The printable sheet of QR cards, one per active prepared static of the
    chronicle (name, hint, QR code of its absolute link). A4, print CSS."""
    chronicle = _narrated(request, chronicle_id)
    base = public_url(request)
    cards = []
    for static in chronicle.prepared_statics.filter(active=True):
        link = base + reverse("static_scan", args=[static.token])
        cards.append(PrintCard(static.name, static.hint, link, qr_svg(link)))
    return render(
        request,
        "challenges/print_sheet.html",
        {
            "chronicle": chronicle,
            "cards": cards,
            "title": "Static challenges",
            "how": "Scan with your phone's camera to try it.",
            "base": base,
            "configured": bool(settings.PUBLIC_URL),
        },
    )


@never_cache  # live login links: no copy in a browser's or a proxy's cache
@login_required
def join_sheet(request: HttpRequest, chronicle_id: int) -> HttpResponse:
    """The printable sheet of join cards: one per player character of the
    chronicle, her name and the QR code of her player's one-tap join link
    (django-sesame, scope "join", as ``manage.py joinlinks``), landing on
    that character's phone page."""
    chronicle = _narrated(request, chronicle_id)
    base = public_url(request)
    cards = []
    characters = Character.objects.filter(chronicle=chronicle, player__isnull=False)
    for character in characters.select_related("player").order_by("name"):
        link = (
            base
            + reverse("join")
            + get_query_string(character.player, scope="join")
            + "&next="
            + reverse("play", args=[character.pk])
        )
        cards.append(PrintCard(character.name, character.player.get_username(), link, qr_svg(link)))
    return render(
        request,
        "challenges/print_sheet.html",
        {
            "chronicle": chronicle,
            "cards": cards,
            "title": "Join links",
            "how": "Scan with your phone's camera to sign in. Keep this card to yourself.",
            "base": base,
            "configured": bool(settings.PUBLIC_URL),
        },
    )


def _story_sheets_page(
    request: HttpRequest, chronicle: Chronicle, characters: list[Character]
) -> HttpResponse:
    """The printable sheets of ``characters`` of a chronicle with dice pools
    (``Ruleset.dice_pools``), as they stand between sessions (nothing spent,
    no box marked); 404 for another ruleset's chronicle."""
    if not chronicle.has_dice_pools:
        raise Http404("This chronicle's sheets have no printable form.")
    sheets = story_sheets(characters, None)
    return render(
        request,
        "challenges/print_story_sheets.html",
        {"chronicle": chronicle, "sheets": [(c, sheets[c.pk]) for c in characters]},
    )


@login_required
def story_sheets_print(request: HttpRequest, chronicle_id: int) -> HttpResponse:
    """Issue 13: a narrator's printable character sheets of a chronicle with
    dice pools, one a page: every character, or one (``?character=<id>``)."""
    chronicle = _narrated(request, chronicle_id)
    characters = Character.objects.filter(chronicle=chronicle).order_by("name")
    chosen = request.GET.get("character", "")
    if chosen.isdigit():
        characters = characters.filter(pk=chosen)
    return _story_sheets_page(request, chronicle, list(characters))


@login_required
def story_sheet_print(request: HttpRequest, character_id: int) -> HttpResponse:
    """Issue 13: a player's printable sheet of her own character (a
    chronicle with dice pools)."""
    character = get_object_or_404(
        Character.objects.select_related("chronicle"), pk=character_id, player=request.user
    )
    return _story_sheets_page(request, character.chronicle, [character])


def static_scan(request: HttpRequest, token: str) -> HttpResponse:
    """Where a prepared static's QR code lands. Not signed in: a page that
    says to open her join link first. Signed in: the static's name and hint
    and a button per character of hers in the chronicle ("Try it as …");
    the POST opens the challenge (``services.prepared_static_open``) and
    sends her to that character's play page; a refusal is shown here and
    changes nothing. An attempt still in play is resumed, not reopened."""
    static = get_object_or_404(PreparedStatic.objects.select_related("chronicle"), token=token)
    context: dict = {"static": static, "error": ""}
    if not request.user.is_authenticated:
        return render(request, "challenges/static_scan.html", {**context, "signed_out": True})
    characters = list(
        Character.objects.filter(player=request.user, chronicle=static.chronicle_id).order_by(
            "name"
        )
    )
    context["characters"] = characters
    if request.method == "POST":
        from challenges.services import ActionRefused, AlreadyDone, prepared_static_open

        character = next(
            (c for c in characters if str(c.pk) == request.POST.get("character")), None
        )
        if character is None:
            context["error"] = "Choose one of your characters."
        else:
            open_attempt = Challenge.objects.filter(
                prepared=static, challenger=character, session__ended_at__isnull=True
            ).exclude(stage=Stage.RESOLVED)
            if open_attempt.exists():
                return redirect("play", character_id=character.pk)
            try:
                prepared_static_open(
                    prepared=static,
                    character=character,
                    user=request.user,
                    msg_id=str(request.POST.get("msg_id", ""))[:64],
                )
            except AlreadyDone:
                pass
            except (ActionRefused, RulesError) as refused:
                context["error"] = str(refused)
            if not context["error"]:
                return redirect("play", character_id=character.pk)
    context["msg_id"] = uuid.uuid4().hex
    context["refusal"] = static.refusal(static.chronicle.open_session())
    return render(request, "challenges/static_scan.html", context)
