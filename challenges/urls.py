from django.urls import path

from challenges import views
from challenges.views import find, statics
from challenges.views import history as history_views

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
    path("narrate/<int:session_id>/find/", find.narrate_find, name="narrate_find"),
    path("s/<str:token>/", statics.static_scan, name="static_scan"),
    path(
        "narrate/chronicle/<int:chronicle_id>/statics/",
        statics.prepared_statics,
        name="prepared_statics",
    ),
    path(
        "narrate/chronicle/<int:chronicle_id>/statics/print/",
        statics.statics_sheet,
        name="statics_sheet",
    ),
    path(
        "narrate/chronicle/<int:chronicle_id>/join/print/",
        statics.join_sheet,
        name="join_sheet",
    ),
    # issue 13: printable sheets of a chronicle with dice pools (storytelling)
    path(
        "narrate/chronicle/<int:chronicle_id>/sheets/print/",
        statics.story_sheets_print,
        name="story_sheets_print",
    ),
    path(
        "play/<int:character_id>/sheet/print/", statics.story_sheet_print, name="story_sheet_print"
    ),
    # s11 rulings: the "Rule…" dialog and the evening's history
    path(
        "narrate/<int:session_id>/challenge/<int:challenge_id>/rule/",
        history_views.narrate_rule,
        name="narrate_rule",
    ),
    path(
        "narrate/<int:session_id>/history/", history_views.narrate_history, name="narrate_history"
    ),
    path(
        "narrate/<int:session_id>/history.<str:fmt>",
        history_views.narrate_history_download,
        name="narrate_history_download",
    ),
    path("play/<int:character_id>/history/", history_views.play_history, name="play_history"),
]
