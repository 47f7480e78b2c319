from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        # campaigns offers the task types at creation but cannot import them: tell it their names.
        from campaigns import tasknames

        from .tasktypes.registry import get_task_type, task_type_names

        for name in task_type_names():
            tasknames.register(name, get_task_type(name).title)
