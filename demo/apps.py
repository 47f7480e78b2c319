from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo: its campaign and account (`load_demo`) and the whole system on one machine (`rundemo`).

    It sits on top of every other app: `rundemo` starts the workers and scoring's sweep."""

    name = "demo"
    default_auto_field = "django.db.models.BigAutoField"
