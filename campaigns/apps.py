from django.apps import AppConfig


class CampaignsConfig(AppConfig):
    name = "campaigns"

    def ready(self):
        from django.core import checks

        from .task_types import task_types_check

        checks.register(task_types_check)
