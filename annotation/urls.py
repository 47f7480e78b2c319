from django.urls import path

from . import views

urlpatterns = [
    path("<slug:slug>/", views.welcome, name="annotation-show-welcome"),
    path("<slug:slug>/<str:token>/", views.show_item, name="annotation-show-item"),
    path("<slug:slug>/<str:token>/resume/", views.adopt, name="annotation-adopt-judge"),
    path("<slug:slug>/<str:token>/level/", views.english_level, name="annotation-ask-english-level"),
    path("<slug:slug>/<str:token>/guidelines/", views.guidelines, name="annotation-show-guidelines"),
    path("<slug:slug>/<str:token>/answer/", views.answer, name="annotation-record-answer"),
    path("<slug:slug>/<str:token>/questions/", views.questionnaire, name="annotation-show-questionnaire"),
    path("<slug:slug>/<str:token>/thanks/", views.thanks, name="annotation-show-thanks"),
]
