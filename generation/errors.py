"""The one error generation raises for bad input; its message says what to change."""


class GenerationError(ValueError):
    """A run that cannot be created or carried on; the message says what to change."""
