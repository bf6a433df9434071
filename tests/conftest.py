"""Shared test setup: plain static storage (no collectstatic needed), fast hashing.

The rules tests need no Django at all; they also run with ``-p no:django``.
"""

import pytest


@pytest.fixture(autouse=True)
def _test_settings(request):
    if not request.config.pluginmanager.hasplugin("django"):
        return
    settings = request.getfixturevalue("settings")
    settings.STORAGES = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
