"""Narrator settings: one module, driven by environment variables.

With nothing set, Narrator runs on SQLite and the in-memory channel layer, so a
fresh clone works with one command. Set ``DATABASE_URL`` (PostgreSQL) and
``REDIS_URL`` (channels-redis) for a real deployment; every variable is listed in
``.env.example``.
"""

import os
import secrets
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: str) -> bool:
    """Read a boolean environment variable ("True"/"False", any case)."""
    return os.getenv(name, default).strip().lower() in ("1", "true", "yes", "on")


def envint(name: str, default: str) -> int:
    """Read an integer environment variable."""
    return int(os.getenv(name, default))


def envlist(name: str, default: str) -> list[str]:
    """Read a comma-separated environment variable into a list of non-empty items."""
    return [item.strip() for item in os.getenv(name, default).split(",") if item.strip()]


def gc_thresholds(value: str) -> tuple[int, int, int]:
    """Read ``GC_THRESHOLDS``: three whole numbers ≥ 1, comma-separated, for
    ``gc.set_threshold`` (allocations before a young collection, then young
    collections before each older one). Raises ImproperlyConfigured otherwise."""
    from django.core.exceptions import ImproperlyConfigured

    parts = [part.strip() for part in value.split(",")]
    if len(parts) != 3 or not all(part.isdecimal() and int(part) >= 1 for part in parts):
        raise ImproperlyConfigured(
            f"GC_THRESHOLDS must be three whole numbers of at least 1, e.g. 50000,20,10: {value!r}"
        )
    first, second, third = (int(part) for part in parts)
    return first, second, third


DATA_DIR = Path(os.getenv("DATA_DIR", str(BASE_DIR / "var")))


def _secret_key() -> str:
    """Use SECRET_KEY if set; otherwise keep a random one in DATA_DIR so that
    sessions and one-tap links survive a restart of a LAN install."""
    if key := os.getenv("SECRET_KEY"):
        return key
    path = DATA_DIR / "secret_key"
    if not path.exists():
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = envbool("DEBUG", "False")
# A LAN install is reached by an address we cannot know in advance.
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "*")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")
# The address players' phones reach Narrator at ("https://narrator.example.org",
# no path): printed join cards link there, never to a request's Host header,
# which anyone may forge while ALLOWED_HOSTS is "*". Unset: the first of
# CSRF_TRUSTED_ORIGINS; unset too, `manage.py evening` serves with its LAN
# address, any other server with the address a request reached its socket at
# (challenges.views.statics.public_url).
PUBLIC_URL = os.getenv("PUBLIC_URL", "").strip().rstrip("/") or next(
    (origin for origin in CSRF_TRUSTED_ORIGINS if "*" not in origin), ""
)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "characters",
    "challenges",
    "bench",  # manage.py bench: the load bench, apart from the product
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "narrator.urls"
ASGI_APPLICATION = "narrator.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'narrator.sqlite3'}",
        # Keep the connection between trips to the database thread: with 0 every
        # trip of a consumer (several per move) opened it anew, ~0.65 ms more on
        # SQLite each (issue 14; docs/performance.md "Issue 14").
        conn_max_age=envint("DB_CONN_MAX_AGE", "60"),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several phones write at once; wait for the lock instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # WAL: readers never wait for the writer. synchronous=NORMAL (issue 14): a
    # commit is written to the WAL without waiting for the disk (fsync only at
    # checkpoints), so a killed or restarted server loses nothing and the
    # database is never corrupted; only a power cut or an OS crash may undo the
    # last moves. FULL kept the one database thread waiting ~0.3 ms per commit.
    DATABASES["default"]["OPTIONS"]["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def redis_layer_host(url: str) -> dict:
    """channels-redis host options for ``url``.

    redis-py 8 reads with a 5 s socket timeout by default, the same 5 s that
    channels-redis blocks in BZPOPMIN, so an idle receive fails every 5 s; read
    for longer than that. Retry a command once: the first command on a pooled
    connection that Redis dropped (a restart) fails, the retry reconnects.
    """
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    return {
        "address": url,
        "socket_timeout": envint("REDIS_SOCKET_TIMEOUT", "15"),  # seconds
        # redis-py's pool stops at 100 connections: "Too many connections"
        # kills consumers in a burst of a few hundred challenges.
        "max_connections": envint("REDIS_MAX_CONNECTIONS", "2000"),
        "retry": Retry(NoBackoff(), 1),
    }


if REDIS_URL := os.getenv("REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [redis_layer_host(REDIS_URL)],
                # Defaults (capacity 100) silently drop group messages in a burst.
                # With Redis the capacity bounds a worker's whole inbox (every
                # socket of the process shares one key): 5,000 dropped 89 of 750
                # burst results on one worker holding 1,500 phones.
                "capacity": envint("CHANNEL_CAPACITY", "100000"),
                "expiry": 60,
                # Keys in Redis start with this; deployments sharing one Redis differ here.
                "prefix": os.getenv("REDIS_PREFIX", "asgi"),
            },
        }
    }
else:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "narrator.layers.InMemoryChannelLayer",
            "CONFIG": {"capacity": envint("CHANNEL_CAPACITY", "100000")},
        }
    }

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    # django-sesame's backend plus revocation by a narrator (characters.backends).
    "characters.backends.JoinLinkBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# One-tap join links (django-sesame): single-purpose, expiring.
SESAME_MAX_AGE = envint("JOIN_LINK_MAX_AGE", str(24 * 3600))  # seconds
SESAME_TOKEN_NAME = "token"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.getenv("TIME_ZONE", "UTC")
# Narrator has no translations: without the machinery, each number a template
# prints skips get_language() (an asgiref Local behind a lock), ~6% of a whole
# dashboard at 1,500 characters (issue 14). English is the games' language.
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.getenv("STATIC_ROOT", str(DATA_DIR / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Behind a TLS-terminating proxy (docker-compose's Caddy), trust its header.
if envbool("BEHIND_TLS_PROXY", "False"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", "False")
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "False")
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "0")
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", "False")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", "False")
# The load balancer's liveness probe speaks plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
# A join link's token must not leak to another site through the Referer header.
SECURE_REFERRER_POLICY = "same-origin"

# Websocket hardening: the largest frame a client may send, in bytes.
WS_MAX_MESSAGE_BYTES = envint("WS_MAX_MESSAGE_BYTES", "4096")
# The largest frame the server sends, in bytes: what the ASGI servers accept
# (Daphne applies its --websocket-max-message-size to the frames it sends too,
# and `make run` starts it with this value; Uvicorn limits only what it
# receives). A larger frame is never sent: the consumer logs it and sends an
# error frame instead (challenges.consumers.base.BaseConsumer.send).
WS_MAX_FRAME_BYTES = envint("WS_MAX_FRAME_BYTES", "1048576")
# Per-connection rate limit (challenges.ratelimit.Limiter), in tokens: an action
# costs 1, a heartbeat 0.25. WS_RATE tokens a second sustained, WS_BURST at once;
# a frame beyond them is refused with an error (nothing changes). The socket is
# closed (4429) only when it sent more than the rate allows even if the server
# read its frames WS_LATE_SECONDS late (an overload reads them late and bunched).
WS_RATE = float(os.getenv("WS_RATE", "10"))
WS_BURST = float(os.getenv("WS_BURST", "20"))
WS_LATE_SECONDS = float(os.getenv("WS_LATE_SECONDS", "60"))
# Failed websocket logins per client address (challenges.ratelimit.FailedLogins):
# WS_LOGIN_FAILURES_BURST at once, then WS_LOGIN_FAILURES_RATE a second; beyond
# them a handshake from that address is refused before it reaches the database.
# Successful logins cost nothing, so a venue's phones behind one address are
# never held back by their own reconnects.
WS_LOGIN_FAILURES_RATE = float(os.getenv("WS_LOGIN_FAILURES_RATE", "0.5"))
WS_LOGIN_FAILURES_BURST = float(os.getenv("WS_LOGIN_FAILURES_BURST", "20"))
# Issue 14: a dashboard's changed challenge and roster rows are gathered this
# long (seconds) per session and worker, then sent as one frame per dashboard
# (challenges.consumers.feed). Time out, a session's end and arrivals do not wait.
DASHBOARD_TICK_SECONDS = float(os.getenv("DASHBOARD_TICK_SECONDS", "0.1"))
# Seconds before a ping that found the database ahead of what its socket last
# sent is checked again, behind the broadcasts already on their way (issue 14).
HEARTBEAT_RECHECK_SECONDS = float(os.getenv("HEARTBEAT_RECHECK_SECONDS", "0.25"))
# Looks at most, each twice as late as the one before, before such a ping gets
# the whole view (0.25 + 0.5 + 1 s: a busy worker's broadcasts can wait seconds).
HEARTBEAT_RECHECKS = int(os.getenv("HEARTBEAT_RECHECKS", "3"))
# The cyclic garbage collector's thresholds in a worker (narrator/asgi.py;
# Python's default is 700,10,10). Issue 14: at 1,500 phones a worker holds a
# few million objects, and each full collection stopped it for 200-400 ms
# (twelve in a minute of play: the open's p99 124-189 ms); after 50,000
# allocations rather than 700, none ran in that minute (docs/performance.md).
GC_THRESHOLDS = gc_thresholds(os.getenv("GC_THRESHOLDS", "50000,20,10"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "WARNING")},
    # A 403 or 404 is an expected refusal: one line, no traceback (narrator.logs).
    "filters": {"refusals": {"()": "narrator.logs.OneLineRefusals"}},
    "loggers": {"django.request": {"filters": ["refusals"]}},
}
