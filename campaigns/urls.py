from django.urls import include, path

from . import views

urlpatterns = [
    path("", views.list_campaigns, name="campaigns-list-campaigns"),
    path("account/api-key/", views.api_key, name="campaigns-api-key"),
    path("trash/", views.trash, name="campaigns-trash"),
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
    path("campaigns/<slug:slug>/export/pairs.csv", views.export_pairs, name="campaigns-export-pairs"),
    path("campaigns/<slug:slug>/export/signatures.txt", views.export_signatures, name="campaigns-export-signatures"),
    path("campaigns/<slug:slug>/export/judgments.csv", views.export_judgments, name="campaigns-export-judgments"),
    path("", include("campaigns.generation_urls")),
]
