"""A benchmark worker process: set a task up once, then time it each time the parent asks.

The parent (`tokkit.bench.harness.Worker`) speaks JSON lines over stdin/stdout:

- first line: ``{"setup": "package.module:function", "kwargs": {...}}``; the worker imports the
  function's module, then calls the function and answers ``{"ready": true, "setup_seconds": s}``
  (the call's wall time, the module import left out); it must return a zero-argument callable,
  the work to time;
- then ``run`` lines: the worker calls the work once and answers ``{"seconds": wall,
  "cpu_seconds": cpu}`` (CPU time of all threads of this process);
- ``quit`` (or end of input) ends it.

Optional attributes of the work: `prepare()` is called before each run, outside the timer (e.g.
fresh copies of inputs a contender modifies in place); `summary()` is called after each run, outside
the timer, and its JSON-able value comes back as ``"summary"`` (e.g. how many words were counted);
`close()` is called once at the end (e.g. to stop a cluster the task started).

Timing happens here, around the call only (perf_counter and process_time), so setup costs
(imports, loading a vocabulary, reading the text) stay outside the measurement, while the parent
samples the peak RSS of this process tree from outside.

>>> import json, subprocess, sys
>>> p = subprocess.run([sys.executable, "-m", "tokkit.bench.worker"], text=True, capture_output=True,
...     input=json.dumps({"setup": "tokkit.bench.worker:noop", "kwargs": {}}) + "\\nrun\\nquit\\n")
>>> [sorted(json.loads(line)) for line in p.stdout.splitlines()]
[['ready', 'setup_seconds'], ['cpu_seconds', 'seconds']]
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


def busy(n: int = 1_000_000):
    """A task that keeps the CPU busy (a sum over `n` numbers per run) and counts its runs (tests)."""
    runs = []

    def run():
        runs.append(sum(range(n)))
    run.summary = lambda: {"runs": len(runs)}
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
        setup = _load(request["setup"])
        start = time.perf_counter()
        work = setup(**request.get("kwargs", {}))
        setup_seconds = time.perf_counter() - start
    except BaseException as exc:  # report anything, including ImportError, to the parent
        _say({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]})
        return 1
    _say({"ready": True, "setup_seconds": setup_seconds})
    try:
        return _serve(work)
    finally:
        close = getattr(work, "close", None)
        if close is not None:
            close()


def _serve(work) -> int:
    """Answer `run` lines until `quit` or the end of input."""
    prepare, summary = getattr(work, "prepare", None), getattr(work, "summary", None)
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        if command != "run":
            continue
        try:
            if prepare is not None:
                prepare()
            start, cpu = time.perf_counter(), time.process_time()
            work()
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            answer = {"seconds": seconds, "cpu_seconds": cpu}
            if summary is not None:
                answer["summary"] = summary()
        except BaseException as exc:
            _say({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]})
            return 1
        _say(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
