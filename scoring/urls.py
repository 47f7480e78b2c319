from django.urls import path

from . import views

urlpatterns = [
    path("campaigns/<slug:slug>/scoring/", views.show_progress, name="scoring-show-progress"),
]
