"""Narrator as an installable web app: its manifest (``/manifest.webmanifest``)
and its service worker (``/sw.js``, ``templates/narrator/sw.js``), served
from the site's root so the worker's scope is the whole site. The worker
answers from the network first; offline, a page comes from the copy of it
``static/narrator/phone.js`` keeps as last seen."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.templatetags.static import static

#: The manifest's colours: the favicon's (narrator.css ``--accent``, ``--paper``).
THEME_COLOUR = "#7a1e2c"
BACKGROUND_COLOUR = "#f7f4ee"


def manifest(request: HttpRequest) -> JsonResponse:
    """The web app manifest (W3C "Web Application Manifest"): name, start
    page, colours and icons (``static/narrator/icon-*.png``, drawn by
    ``scripts/make_icons.py``), at their static addresses."""
    icons = [
        {"src": static("narrator/icon-192.png"), "sizes": "192x192", "type": "image/png"},
        {"src": static("narrator/icon-512.png"), "sizes": "512x512", "type": "image/png"},
        {
            "src": static("narrator/icon-maskable-512.png"),
            "sizes": "512x512",
            "type": "image/png",
            "purpose": "maskable",
        },
    ]
    data = {
        "name": "Narrator",
        "short_name": "Narrator",
        "description": "Mind's Eye Theatre challenges, refereed on your phone.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "orientation": "portrait",
        "theme_color": THEME_COLOUR,
        "background_color": BACKGROUND_COLOUR,
        "icons": icons,
    }
    response = JsonResponse(data, content_type="application/manifest+json")
    response["Cache-Control"] = "public, max-age=3600"
    return response


def service_worker(request: HttpRequest) -> HttpResponse:
    """The service worker's script. Never cached by the browser's HTTP cache
    (``no-cache``: a new version is picked up on the next visit); scope the
    whole site (``Service-Worker-Allowed``)."""
    script = render_to_string("narrator/sw.js", {"static_url": settings.STATIC_URL})
    response = HttpResponse(script, content_type="text/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    response["Cache-Control"] = "no-cache"
    return response
