from django.urls import path
from django.views.generic import RedirectView

from . import views

urlpatterns = [
    path("", views.list_campaigns, name="campaigns-list-campaigns"),
    path("account/api-key/", views.api_key, name="campaigns-show-api-key"),
    # The campaign pages live under /campaigns/<slug>/: their parent is the list, not a 404.
    path("campaigns/", RedirectView.as_view(pattern_name="campaigns-list-campaigns")),
    path("trash/", views.trash, name="campaigns-show-trash"),
    path("campaigns/new/", views.create_campaign, name="campaigns-create-campaign"),
    path("campaigns/<slug:slug>/toggle/", views.toggle_open, name="campaigns-toggle-open"),
]
