from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        # campaigns sits below annotation: it learns the task types from here.
        from django.core import checks

        from campaigns import models as campaign_models

        from .checks import training_files_check
        from .tasktypes.registry import DEFAULT_TASK_TYPE, get_task_type, task_type_names

        campaign_models.TASK_TYPE_CHOICES[:] = [(name, get_task_type(name).title) for name in task_type_names()]
        campaign_models.DEFAULT_TASK_TYPE = DEFAULT_TASK_TYPE
        # Asked when a campaign gets its default training trial: the registry as it is then.
        campaign_models.training_file_of = lambda name: get_task_type(name).training_file
        checks.register(training_files_check)
