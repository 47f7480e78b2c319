from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
