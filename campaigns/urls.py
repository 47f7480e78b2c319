from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.list_campaigns, name="campaigns-list-campaigns"),
    path("campaigns/new/", views.create_campaign, name="campaigns-create-campaign"),
    path("campaigns/<slug:slug>/", views.show_campaign, name="campaigns-show-campaign"),
    path("campaigns/<slug:slug>/edit/", views.edit_campaign, name="campaigns-edit-campaign"),
    path("campaigns/<slug:slug>/upload/", views.upload_corpus, name="campaigns-upload-corpus"),
    path(
        "campaigns/<slug:slug>/judges/<int:judge_id>/exclude/",
        views.toggle_judge_exclusion,
        name="campaigns-toggle-judge-exclusion",
    ),
    path("campaigns/<slug:slug>/toggle/", views.toggle_open, name="campaigns-toggle-open"),
    path("", include("campaigns.generation_urls")),
]
