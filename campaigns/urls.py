from django.urls import path

from . import views

urlpatterns = [
    path("", views.list_campaigns, name="campaigns-list-campaigns"),
    path("account/api-key/", views.api_key, name="campaigns-show-api-key"),
    path("trash/", views.trash, name="campaigns-show-trash"),
    path("campaigns/new/", views.create_campaign, name="campaigns-create-campaign"),
    path("campaigns/<slug:slug>/toggle/", views.toggle_open, name="campaigns-toggle-open"),
]
