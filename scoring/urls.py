from django.urls import path

from . import views

urlpatterns = [
    path("campaigns/<slug:slug>/scoring/", views.show_progress, name="scoring-show-progress"),
    path("operations/queues/", views.show_queues, name="scoring-show-queues"),
]
