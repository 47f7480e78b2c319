from django.urls import path

from . import researcher_views as views

# After campaigns.urls in parasol/urls.py, so that campaigns/new/ is not taken for a slug.
urlpatterns = [
    path("campaigns/<slug:slug>/", views.show_campaign, name="annotation-show-campaign"),
    path("campaigns/<slug:slug>/edit/", views.edit_campaign, name="annotation-edit-campaign"),
    path("campaigns/<slug:slug>/upload/", views.upload_corpus, name="annotation-upload-corpus"),
    path(
        "campaigns/<slug:slug>/judges/<int:judge_id>/exclude/",
        views.toggle_judge_exclusion,
        name="annotation-toggle-judge-exclusion",
    ),
]
