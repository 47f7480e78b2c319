"""Researcher pages for LLM generation runs and prompt templates."""

from django.urls import path

from . import views

urlpatterns = [
    path("campaigns/<slug:slug>/generations/", views.list_generations, name="campaigns-list-generations"),
    path("campaigns/<slug:slug>/generations/new/", views.create_generation, name="campaigns-create-generation"),
    path("campaigns/<slug:slug>/generations/<int:pk>/", views.show_generation, name="campaigns-show-generation"),
    path(
        "campaigns/<slug:slug>/generations/<int:pk>/cancel/",
        views.cancel_generation,
        name="campaigns-cancel-generation",
    ),
    path(
        "campaigns/<slug:slug>/generations/<int:pk>/resume/",
        views.resume_generation,
        name="campaigns-resume-generation",
    ),
    path("campaigns/<slug:slug>/templates/new/", views.edit_template, name="campaigns-create-template"),
    path("campaigns/<slug:slug>/templates/<int:pk>/edit/", views.edit_template, name="campaigns-edit-template"),
    path("campaigns/<slug:slug>/templates/preview/", views.preview_template, name="campaigns-preview-template"),
]
