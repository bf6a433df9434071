"""HTTP entry points: CSRF on login and logout, cookies, redirects and headers."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from sesame.utils import get_token

pytestmark = pytest.mark.django_db


def test_login_and_logout_refuse_a_post_without_its_csrf_token(world):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "helen", "password": "pw-helen"})
    assert response.status_code == 403
    client.force_login(world["helen_player"])
    assert client.post(reverse("logout")).status_code == 403
    assert client.get(reverse("logout")).status_code == 405  # never by a mere link
    assert client.get(reverse("home")).status_code == 302  # still logged in


def test_login_works_with_its_csrf_token_and_rotates_the_session(world):
    client = Client(enforce_csrf_checks=True)
    page = client.get(reverse("login"))
    token = page.cookies["csrftoken"].value
    client.cookies["sessionid"] = "planted-by-someone-else"
    response = client.post(
        reverse("login"),
        {"username": "helen", "password": "pw-helen", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert client.cookies["sessionid"].value != "planted-by-someone-else"


def test_the_session_cookie_is_http_only_and_same_site(world):
    client = Client()
    response = client.get(reverse("join"), {"token": get_token(world["helen_player"], "join")})
    cookie = response.cookies["sessionid"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"


def test_a_join_link_never_redirects_to_another_site(world):
    token = get_token(world["helen_player"], scope="join")
    for target in ("https://evil.example/", "//evil.example/", "/\\evil.example"):
        response = Client().get(reverse("join"), {"token": token, "next": target})
        assert response.status_code == 302
        assert response["Location"] == reverse("home"), target
    response = Client().get(reverse("join"), {"token": token, "next": "/narrate/"})
    assert response["Location"] == "/narrate/"


def test_pages_keep_join_tokens_out_of_the_referer_and_out_of_frames(world):
    response = Client().get(reverse("login"))
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_the_https_redirect_spares_the_load_balancers_health_check(settings):
    settings.SECURE_SSL_REDIRECT = True
    assert Client().get(reverse("healthz")).status_code == 200
    response = Client().get(reverse("login"))
    assert response.status_code == 301 and response["Location"].startswith("https://")
