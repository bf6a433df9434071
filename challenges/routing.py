from django.urls import path

from challenges import consumers

websocket_urlpatterns = [
    path("ws/play/<int:character_id>/", consumers.PlayConsumer.as_asgi()),
    path("ws/narrate/<int:session_id>/", consumers.NarrateConsumer.as_asgi()),
]
