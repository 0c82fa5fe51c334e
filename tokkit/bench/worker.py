"""A benchmark worker process: set a task up once, then time it each time the parent asks.

The parent (`tokkit.bench.harness.Worker`) speaks JSON lines over stdin/stdout:

- first line: ``{"setup": "package.module:function", "kwargs": {...}}``; the worker imports the
  function and calls it; it must return a zero-argument callable, the work to time (when the
  callable has a `prepare` attribute, that is called before each run, outside the timer);
- then ``run`` lines: the worker calls the work once and answers ``{"seconds": wall}``;
- ``quit`` (or end of input) ends it.

Timing happens here, around the call only (perf_counter), so setup costs (imports, loading a
vocabulary, reading the text) stay outside the measurement, while the parent samples the peak RSS
of this process from outside.

>>> import json, subprocess, sys
>>> p = subprocess.run([sys.executable, "-m", "tokkit.bench.worker"], text=True, capture_output=True,
...     input=json.dumps({"setup": "tokkit.bench.worker:noop", "kwargs": {}}) + "\\nrun\\nquit\\n")
>>> [sorted(json.loads(line)) for line in p.stdout.splitlines()]
[['ready'], ['seconds']]
"""
from __future__ import annotations

import importlib
import json
import sys
import time
import traceback


def noop():
    """A task that does nothing (used by tests and the doctest above)."""
    return lambda: None


def sleeper(seconds: float = 0.01, megabytes: int = 0):
    """A task that holds `megabytes` of memory and sleeps `seconds` per run (tests)."""
    hold = bytearray(megabytes * 1_000_000)
    for i in range(0, len(hold), 4096):  # touch the pages so they count as resident
        hold[i] = 1

    def run():
        time.sleep(seconds)
        return len(hold)
    return run


def failing(message: str = "boom"):
    """A task whose setup raises (tests)."""
    raise RuntimeError(message)


def _load(spec: str):
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def _say(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    first = sys.stdin.readline()
    if not first:
        return 1
    try:
        request = json.loads(first)
        work = _load(request["setup"])(**request.get("kwargs", {}))
    except BaseException as exc:  # report anything, including ImportError, to the parent
        _say({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]})
        return 1
    _say({"ready": True})
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        if command != "run":
            continue
        try:
            prepare = getattr(work, "prepare", None)
            if prepare is not None:  # e.g. fresh copies of inputs a contender modifies in place
                prepare()
            start = time.perf_counter()
            work()
            seconds = time.perf_counter() - start
        except BaseException as exc:
            _say({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]})
            return 1
        _say({"seconds": seconds})
    return 0


if __name__ == "__main__":
    sys.exit(main())
