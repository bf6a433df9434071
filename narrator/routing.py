"""All websocket routes, joined from each app's ``routing.py``."""

from challenges.routing import websocket_urlpatterns as challenge_patterns

websocket_urlpatterns = [*challenge_patterns]
