from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from django.core import checks

        from .checks import training_files_check

        checks.register(training_files_check)
