"""A plain text progress bar for every app's management commands (no extra dependency)."""

import sys


class ProgressBar:
    def __init__(self, total, label="", stream=None, width=30):
        self.total, self.label, self.width = max(total, 0), label, width
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
        self.stream.write(f"\r{self.label:<22} [{bar}] {self.done}/{self.total}")
        self.stream.flush()

    def close(self):
        self.draw()
        self.stream.write("\n")
