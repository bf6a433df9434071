"""ASGI entry point: HTTP through Django, websockets under /ws/ through Channels."""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "narrator.settings")
# Django must be set up before the routing (and so the models) is imported.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from narrator.routing import websocket_urlpatterns  # noqa: E402
from narrator.wsauth import DeferredAuthMiddlewareStack  # noqa: E402
from narrator.wsorigin import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Host allowed (ALLOWED_HOSTS), then Origin of this very site (wsorigin);
        # the consumer looks the user up after accept (wsauth).
        "websocket": AllowedHostsOriginValidator(
            SameOriginValidator(DeferredAuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)

# Everything loaded so far (Django, the apps, their modules) lives as long as
# the worker: moved out of the cyclic collector's generations, so the
# collections that a burst of frames sets off never walk it again. And
# collect less often (settings.GC_THRESHOLDS): a full collection walks every
# socket's objects and stops the worker for hundreds of milliseconds.
gc.set_threshold(*settings.GC_THRESHOLDS)
gc.freeze()
