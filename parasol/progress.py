"""A plain text progress bar for every app's management commands (no extra dependency), and time left in words."""

import sys


class ProgressBar:
    """`done/total` with a bar; with `unit="MiB"` the counts are bytes, shown in MiB."""

    def __init__(self, total, label="", stream=None, width=30, unit=""):
        self.total, self.label, self.width, self.unit = max(total, 0), label, width, unit
        self.stream = stream or sys.stderr
        self.done = 0

    def update(self, n=1):
        self.done = min(self.total, self.done + n)
        self.draw()

    def set(self, done):
        self.done = min(self.total, done)
        self.draw()

    def draw(self):
        share = self.done / self.total if self.total else 1.0
        filled = int(round(share * self.width))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label:<22} [{bar}] {self._count(self.done)}/{self._count(self.total)}")
        self.stream.flush()

    def _count(self, n):
        return f"{n / 2**20:.1f} {self.unit}" if self.unit == "MiB" else str(n)

    def close(self):
        self.draw()
        self.stream.write("\n")


def duration_words(seconds):
    """A time left in words a researcher reads at a glance: 40 s, 12 min, 3 h 05 min."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


def time_left(remaining, rate):
    """`remaining` units at `rate` per second, in words; None when the rate is zero or unknown (never a finite
    time beside no progress) or nothing remains."""
    if not rate or rate <= 0 or remaining <= 0:
        return None
    return duration_words(remaining / rate)
