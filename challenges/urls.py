from django.urls import path

from challenges import views

urlpatterns = [
    path("", views.home, name="home"),
    path("play/<int:character_id>/", views.play, name="play"),
    path("play/<int:character_id>/opponents/", views.opponents, name="opponents"),
    path("narrate/", views.narrate_index, name="narrate_index"),
    path("narrate/<int:session_id>/", views.narrate, name="narrate"),
    path(
        "narrate/<int:session_id>/character/<int:character_id>/",
        views.narrate_character,
        name="narrate_character",
    ),
]
