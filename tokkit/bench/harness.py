"""Run contenders side by side: each in its own subprocess, timed whole, peak RSS of its process tree.

Contenders alternate (a warm-up round first, then `repeat` rounds), so a slow spell on a shared
machine hits all of them alike; we report min / median / max and ratios of medians.

>>> r = measure_command([sys.executable, "-c", "pass"], repeat=1, warmup=False)
>>> r.median > 0 and r.peak_rss_mb > 0
True
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time

from tokkit.bench.timing import Result, turn_label, turns
from tokkit.errors import TokkitError

try:
    import psutil
except ImportError:  # the bench extra is not installed: require_psutil says so in one line
    psutil = None


def require_psutil() -> None:
    """The harness samples memory with psutil: without it, fail at once with one line."""
    if psutil is None:
        raise TokkitError("tokkit bench needs psutil to measure memory: pip install 'tokkit[bench]'")


def tree_rss(proc) -> int:
    """Resident memory of a psutil.Process and all its descendants, in bytes."""
    total = 0
    try:
        procs = [proc] + proc.children(recursive=True)
    except psutil.Error:
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def run_once(cmd: list[str], *, env: dict | None = None, cwd: str | None = None, timeout: float = 3600.0,
             interval: float = 0.02) -> tuple[float, float]:
    """Run `cmd`; return (wall seconds, peak RSS of the process tree in MB). Raises on failure."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ps = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(ps))
        if time.perf_counter() - start > timeout:
            proc.kill()
            raise TimeoutError(f"{cmd[0]} ran longer than {timeout} s")
        time.sleep(interval)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode != 0:
        last = next((line for line in reversed(err.splitlines()) if line.strip()), "no message")
        raise RuntimeError(f"exit code {proc.returncode}: {last.strip()[:300]}")
    return wall, peak / 1e6


def measure_command(cmd, *, repeat=3, warmup=True, env=None, name="", cwd=None) -> Result:
    """Warm up once (optional), then run `repeat` times."""
    result = Result(name or os.path.basename(cmd[0]))
    if warmup:
        run_once(cmd, env=env, cwd=cwd)
    for _ in range(repeat):
        wall, rss = run_once(cmd, env=env, cwd=cwd)
        result.times.append(wall)
        result.rss_mb.append(rss)
    return result


def measure_alternating(commands: dict[str, list[str]], *, repeat=3, env=None, cwd=None, log=None,
                        warmup: bool = True) -> dict[str, Result]:
    """Warm every command up once (unless `warmup` is false), then run them in turn `repeat` times."""
    results = {name: Result(name) for name in commands}
    for rnd, name, timed in turns(commands, rounds=repeat, warmup=int(warmup)):
        if results[name].note:
            continue
        try:
            wall, rss = run_once(commands[name], env=env, cwd=cwd)
        except (RuntimeError, TimeoutError) as exc:
            results[name].note = f"failed: {str(exc).splitlines()[0]}"
            continue
        if timed:
            results[name].times.append(wall)
            results[name].rss_mb.append(rss)
        if log:
            log(f"  {turn_label(rnd)}: {name}: {wall:.2f} s, {rss:.0f} MB")
    return results


class Worker:
    """A long-lived `tokkit.bench.worker` process running one task; `run()` times it once.

    While a run is under way the parent samples the peak RSS of the worker's process tree
    every `interval` seconds; a run longer than `timeout` kills the worker. `setup_s` is how long
    the task's setup took; `last` holds the worker's answer to the latest run (seconds, CPU
    seconds, and the task's summary when it gives one).
    """

    def __init__(self, setup: str, kwargs: dict, *, env: dict | None = None, timeout: float = 1800.0,
                 interval: float = 0.02):
        self.timeout, self.interval, self.peak = timeout, interval, 0
        self.setup_s, self.last = None, {}
        self._err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "tokkit.bench.worker"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                     text=True, bufsize=1)
        self._ps = psutil.Process(self.proc.pid)
        try:
            self.proc.stdin.write(json.dumps({"setup": setup, "kwargs": kwargs}) + "\n")
            self.proc.stdin.flush()
            self.setup_s = self._answer().get("setup_seconds")
        except BaseException:
            self.close()
            raise

    def _answer(self) -> dict:
        """Wait for the worker's next line, sampling RSS meanwhile; raise on error or timeout."""
        start = time.perf_counter()
        fd = self.proc.stdout
        while True:
            ready, _, _ = select.select([fd], [], [], self.interval)
            self.peak = max(self.peak, tree_rss(self._ps))
            if ready:
                line = fd.readline()
                if not line:
                    raise RuntimeError(f"worker exited ({self.proc.wait()}): {self.stderr_tail()}")
                answer = json.loads(line)
                if "error" in answer:
                    raise RuntimeError(answer["error"])
                return answer
            if time.perf_counter() - start > self.timeout:
                self.proc.kill()  # it is busy: asking it to quit would wait for the run to end
                self.close()
                raise TimeoutError(f"timed out after {self.timeout:.0f} s")

    def run(self) -> float:
        """Time the task once (seconds, measured inside the worker)."""
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        self.last = self._answer()
        return self.last["seconds"]

    def stderr_tail(self) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace").strip()[-500:]

    def close(self) -> None:
        if self._err.closed:
            return
        if self.proc.poll() is not None:
            self.proc.wait()
        else:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self._err.close()


def measure_tasks(tasks: dict[str, tuple[str, dict]], *, repeat: int = 5, warmup: int = 1,
                  env: dict | None = None, envs: dict[str, dict] | None = None, timeout: float = 1800.0,
                  log=None, block: int = 1, block_warmup: int = 0, rotate: bool = False) -> dict[str, Result]:
    """Time in-process tasks side by side: one worker per contender, runs alternating.

    `tasks` maps a contender's name to (setup "module:function", kwargs). Every worker is set up
    first; then `warmup` rounds and `repeat` timed rounds run the contenders in turn. A contender
    whose setup or run fails keeps a note and drops out; the others go on.

    In each round a contender's turn is a block: `block_warmup` untimed runs, then `block` runs
    (all untimed in a warm-up round). Blocks suit work that is slower right after another
    contender ran (cold caches): the untimed runs absorb that. With `rotate` a different
    contender leads each round.
    """
    results = {name: Result(name) for name in tasks}
    workers: dict[str, Worker] = {}
    try:
        for name, (setup, kwargs) in tasks.items():
            try:
                workers[name] = Worker(setup, kwargs, env=(envs or {}).get(name, env), timeout=timeout)
                results[name].setup_s = workers[name].setup_s
            except (RuntimeError, TimeoutError) as exc:
                results[name].note = f"failed: {str(exc).splitlines()[0]}"
        order = "rotate" if rotate else "same"
        for rnd, name, timed in turns(list(workers), rounds=repeat, warmup=warmup, block=block,
                                      block_warmup=block_warmup, order=order):
            worker = workers.get(name)
            if worker is None:  # it failed earlier in this block or round
                continue
            try:
                seconds = worker.run()
            except (RuntimeError, TimeoutError) as exc:
                results[name].note = f"failed: {str(exc).splitlines()[0]}"
                worker.close()
                del workers[name]
                continue
            _keep(results[name], worker, seconds, timed)
            if log:
                log(f"  {turn_label(rnd if timed else 0)}: {name}: {seconds:.3f} s, {worker.peak / 1e6:.0f} MB")
    finally:
        for worker in workers.values():
            worker.close()
    return results


def _keep(res: Result, worker: Worker, seconds: float, timed: bool) -> None:
    """Record one worker run in its Result: times and memory when timed, the task's summary always."""
    if timed:
        res.times.append(seconds)
        res.rss_mb.append(worker.peak / 1e6)
        if "cpu_seconds" in worker.last:
            res.cpu_times.append(worker.last["cpu_seconds"])
    if "summary" in worker.last:
        res.summary = worker.last["summary"]


def python_cmd(code: str) -> list[str]:
    """A command running `code` in a fresh interpreter (the same one running the harness)."""
    return [sys.executable, "-c", code]
