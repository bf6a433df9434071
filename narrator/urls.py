from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from sesame.views import LoginView as JoinView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/join/", JoinView.as_view(scope="join"), name="join"),
    path("", include("characters.urls")),
    path("", include("challenges.urls")),
]
