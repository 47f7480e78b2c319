"""The task types a campaign can be created with, as (name, title) choices.

`annotation` owns the task types and registers their names here when Django starts
(`AnnotationConfig.ready`): `campaigns`, below it, cannot import its registry, yet the
creation form, the API and `import_pairs --task` must offer and check the names.
"""

_TITLES = {}


def register(name, title):
    _TITLES[name] = title


def choices():
    return [(name, str(title)) for name, title in _TITLES.items()]


def unknown_task_message(name):
    """A message naming the known task types when `name` is not one, else None."""
    if name in _TITLES:
        return None
    return f"unknown task type {name!r}; known task types: {', '.join(_TITLES)}"
