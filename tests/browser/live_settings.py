"""Settings for the Daphne process the browser tests drive: the real settings,
with static files served by WhiteNoise straight from the finders (no
collectstatic) and fast password hashing."""

from narrator.settings import *  # noqa: F403

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STATIC_ROOT = None  # nothing is collected; WhiteNoise serves from the finders
