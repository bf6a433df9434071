"""Shared test setup.

- Plain static storage (no collectstatic needed) and fast password hashing.
- Every test runs on the in-memory channel layer, except tests marked
  ``redis``, which run on channels-redis at ``REDIS_URL`` (skipped when unset).
- The rules tests need no Django at all; they also run with ``-p no:django``.
"""

import os
import uuid

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
    if request.node.get_closest_marker("redis"):
        from narrator.settings import redis_layer_host

        url = os.getenv("REDIS_URL")
        if not url:
            pytest.skip("REDIS_URL is not set")
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {
                    "hosts": [redis_layer_host(url)],
                    "prefix": f"test-{uuid.uuid4().hex[:8]}",
                },
            }
        }
    else:
        settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
