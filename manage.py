#!/usr/bin/env python
import os
import sys

# The demo is a local development run (127.0.0.1): it turns DEBUG on for itself
# and for the processes it starts, unless DJANGO_DEBUG says otherwise.
DEMO_COMMANDS = {"rundemo"}


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
    if len(sys.argv) > 1 and sys.argv[1] in DEMO_COMMANDS:
        os.environ.setdefault("DJANGO_DEBUG", "true")
    from django.core.management import execute_from_command_line

    from parasol.startup import settings_or_exit

    settings_or_exit()

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
