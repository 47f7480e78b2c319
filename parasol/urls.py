from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("reports.api_urls")),
    path("api/", include("parasol.api_urls")),
    path("j/", include("annotation.urls")),
    path("", include("reports.urls")),
    path("", include("scoring.urls")),
    path("", include("campaigns.urls")),
    path("", include("generation.urls")),
    path("", include("annotation.researcher_urls")),
]
