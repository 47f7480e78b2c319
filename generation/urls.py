"""Researcher pages for LLM generation runs and prompt templates."""

from django.urls import path

from . import views

urlpatterns = [
    path("campaigns/<slug:slug>/generations/", views.list_generations, name="generation-list-runs"),
    path("campaigns/<slug:slug>/generations/new/", views.create_generation, name="generation-create-run"),
    path("campaigns/<slug:slug>/generations/<int:pk>/", views.show_generation, name="generation-show-run"),
    path(
        "campaigns/<slug:slug>/generations/<int:pk>/cancel/",
        views.cancel_generation,
        name="generation-cancel-run",
    ),
    path(
        "campaigns/<slug:slug>/generations/<int:pk>/resume/",
        views.resume_generation,
        name="generation-resume-run",
    ),
    path(
        "campaigns/<slug:slug>/generations/<int:pk>/select/",
        views.select_generation,
        name="generation-select-run",
    ),
    path("campaigns/<slug:slug>/templates/new/", views.edit_template, name="generation-create-template"),
    path("campaigns/<slug:slug>/templates/<int:pk>/edit/", views.edit_template, name="generation-edit-template"),
    path("campaigns/<slug:slug>/templates/preview/", views.preview_template, name="generation-preview-template"),
]
