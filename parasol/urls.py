from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import JsonResponse
from django.urls import include, path
from django.views.defaults import page_not_found
from drf_spectacular.views import SpectacularAPIView


def not_found(request, exception):
    """An unknown address under /api/ answers JSON, as the API's own 404s do (its schema says so)."""
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


handler404 = not_found

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
