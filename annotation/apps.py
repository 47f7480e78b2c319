from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        # campaigns sits below annotation: it learns the task types from here.
        from campaigns import models as campaign_models

        from .tasktypes.registry import DEFAULT_TASK_TYPE, get_task_type, task_type_names

        campaign_models.TASK_TYPE_CHOICES[:] = [(name, get_task_type(name).title) for name in task_type_names()]
        campaign_models.DEFAULT_TASK_TYPE = DEFAULT_TASK_TYPE
