"""A minimal progress bar on stderr, silent when stderr is not a terminal or when disabled.

>>> with Progress(total=3, desc="merging", enabled=False) as bar:
...     bar.update(2); bar.set(3)
>>> bar.n
3
"""
import sys
import time


class Progress:
    """Count towards `total` (or open-ended when total is None) and redraw at most 10 times a second."""

    def __init__(self, total=None, *, desc="", unit="", enabled=None, scale=1.0):
        self.total = total
        self.desc = desc
        self.unit = unit
        self.scale = scale  # e.g. 1e-6 to show bytes as MB
        self.n = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._start = time.perf_counter()
        self._last = 0.0
        self.postfix = ""

    def update(self, n=1, *, postfix=None):
        self.n += n
        if postfix is not None:
            self.postfix = postfix
        if self.enabled:
            now = time.perf_counter()
            if now - self._last >= 0.1:
                self._last = now
                self._draw(now)

    def set(self, n, *, postfix=None):
        """Move the bar to an absolute position."""
        self.update(n - self.n, postfix=postfix)

    def _draw(self, now):
        elapsed = now - self._start
        done = self.n * self.scale
        rate = done / elapsed if elapsed > 0 else 0.0
        if self.total:
            frac = min(1.0, self.n / self.total)
            bar = "#" * int(frac * 20)
            text = f"{self.desc} [{bar:<20}] {done:,.1f}/{self.total * self.scale:,.1f}{self.unit}"
        else:
            text = f"{self.desc} {done:,.1f}{self.unit}"
        text += f" {rate:,.1f}{self.unit}/s {elapsed:.0f}s {self.postfix}"
        sys.stderr.write("\r" + text[:119].ljust(119))
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            self._draw(time.perf_counter())
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
