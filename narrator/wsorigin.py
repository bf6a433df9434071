"""Websocket origin check: a handshake must come from a page of this very site.

Channels' ``AllowedHostsOriginValidator`` compares the Origin with
``ALLOWED_HOSTS``; a LAN install sets ``ALLOWED_HOSTS=*`` (its address is not
known in advance), which lets any web page open a socket with a player's cookie
(cross-site websocket hijacking). Here the Origin must name the same scheme,
host and port as the socket itself (its ``Host`` header, and ``ws``/``wss`` as
``http``/``https``; behind a TLS proxy, ``SECURE_PROXY_SSL_HEADER``'s forwarded
proto, as ``request.scheme`` reads it), or be listed in ``CSRF_TRUSTED_ORIGINS``
(the same rule Django's CSRF check applies to a form POST): an ``http://`` page
cannot open a socket to the HTTPS site. A port left out is its scheme's default.
A cross-site or ``null`` Origin is refused before ``accept``: the handshake
fails with HTTP 403.

A handshake without an Origin header passes: every browser sends one, and only a
browser attaches a victim's cookies by itself, so a client without Origin is not
hijacking anyone's session.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port

DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443"}
# A socket's scheme as the scheme of the page that may open it.
PAGE_SCHEMES = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


def _origin_netloc(origin: str) -> tuple[str, str, str] | None:
    """``(scheme, host, port)`` of an Origin (port "" when default); None if malformed."""
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    port_text = "" if port is None or str(port) == DEFAULT_PORTS[parts.scheme] else str(port)
    return parts.scheme, parts.hostname, port_text


def _trusted(origin: str) -> bool:
    """True if ``origin`` matches ``CSRF_TRUSTED_ORIGINS`` as Django's CSRF check
    matches it: exactly, or by a ``scheme://*.domain`` wildcard."""
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        trusted = trusted.lower()
        if origin == trusted:
            return True
        if "*" in trusted:
            scheme, _, host = trusted.partition("://")
            parsed = urlsplit(origin)
            if (
                parsed.scheme == scheme
                and parsed.netloc
                and is_same_domain(parsed.netloc, host.replace("*", "", 1))
            ):
                return True
    return False


def socket_scheme(scope: dict) -> str:
    """ "http" or "https": the scheme of a page of the site that serves the socket
    in ``scope``, as Django's ``HttpRequest.scheme`` works it out: the proxy's
    header (``SECURE_PROXY_SSL_HEADER``) when set and sent, else the socket's
    own ``scope["scheme"]`` ("ws" when absent, as ASGI says)."""
    if settings.SECURE_PROXY_SSL_HEADER:
        meta_name, secure_value = settings.SECURE_PROXY_SSL_HEADER
        name = meta_name.removeprefix("HTTP_").replace("_", "-").lower().encode("latin1")
        forwarded = _header(scope, name)
        if forwarded is not None:
            return "https" if forwarded.split(",", 1)[0].strip() == secure_value else "http"
    return PAGE_SCHEMES.get(str(scope.get("scheme", "ws")).lower(), "http")


def origin_allowed(scope: dict) -> bool:
    """True if the websocket handshake in ``scope`` may proceed (see module doc)."""
    origin = _header(scope, b"origin")
    if origin is None:
        return True
    parsed = _origin_netloc(origin)
    if parsed is None:  # "null", a file: page, garbage
        return False
    scheme, origin_host, origin_port = parsed
    if _trusted(origin.strip().lower().rstrip("/")):
        return True
    host_header = _header(scope, b"host")
    if not host_header:
        return False
    own_scheme = socket_scheme(scope)
    host, port = split_domain_port(host_header.lower())
    if port == DEFAULT_PORTS[own_scheme]:
        port = ""
    return (
        bool(host)
        and PAGE_SCHEMES[scheme] == own_scheme
        and host == origin_host
        and port == origin_port
    )


class SameOriginValidator:
    """ASGI middleware: refuse websocket handshakes whose Origin is not this site."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
