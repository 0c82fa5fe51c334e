"""SIGTERM, SIGINT and SIGKILL at each step of replacing a `tokkit train -o DEST` output folder.

Each run goes under strace, which holds one chosen rename (or the first delete after the swap)
for a moment; the test sends the signal while it is held. SIGKILL stops the process before that
call, SIGTERM and SIGINT act right after it. Afterwards DEST holds the complete old or the
complete new output (with renameat2's exchange at every instant; without it, after SIGKILL
between the two renames, the next run puts the old one back), and the next run removes what
was left and says so.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HOLD_US = 200_000  # how long strace holds the chosen call: time enough to send the signal
ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no .pyc renames of its own in the trace
TRACED = "rename,renameat,renameat2,unlinkat"


def _strace_works() -> str | None:
    """Why strace cannot run here, or None when it can trace a child."""
    if shutil.which("strace") is None:
        return "strace is not installed"
    proc = subprocess.run(["strace", "-f", "-o", os.devnull, "-e", f"trace={TRACED}", "-e",
                           "inject=rename:delay_enter=1", "true"], capture_output=True, check=False)
    return None if proc.returncode == 0 else f"strace cannot trace or delay calls here: {proc.stderr.decode()[:200]}"


WHY_NOT = _strace_works()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


def train(dest: Path, corpus: Path, strace_args=(), log: Path | None = None, **popen):
    cmd = [sys.executable, "-m", "tokkit.cli", "train", "--algo", "bpe", "--vocab-size", "120", "-q",
           str(corpus), "-o", str(dest)]
    if log is not None:
        cmd = ["strace", "-f", "-o", str(log), "-e", f"trace={TRACED}", *strace_args, *cmd]
    # SIGINT as a terminal gives it: a shell that started the test run in the background ignores it,
    # and children inherit an ignored signal
    return subprocess.Popen(cmd, cwd=dest.parent, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_default_sigint, **popen)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def snapshot(folder: Path) -> dict | None:
    if not folder.is_dir():
        return None
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """Two corpora, the old and the new output, and the calls a plain replacement makes."""
    root = tmp_path_factory.mktemp("swap")
    old_corpus, new_corpus = root / "old.txt", root / "new.txt"
    old_corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 5)
    new_corpus.write_text("a quick brown fox jumps over a lazy dog\nquick quick fox\n" * 5)
    traces = {}
    for way, extra in (("exchange", ()), ("two renames", ("-e", "inject=renameat2:error=EINVAL"))):
        dest = root / way.replace(" ", "-")
        assert train(dest, old_corpus).wait(60) == 0
        old = snapshot(dest)
        assert train(dest, new_corpus, extra, log=root / "trace.log").wait(60) == 0
        traces[way] = calls((root / "trace.log").read_text())
        new = snapshot(dest)
    assert old != new
    return {"old": old, "new": new, "old_corpus": old_corpus, "new_corpus": new_corpus, "traces": traces}


def calls(log: str) -> list[tuple[str, str]]:
    """(syscall, arguments) of every traced call, in order."""
    return re.findall(rf"^\d+\s+({TRACED.replace(',', '|')})\((.*)", log, flags=re.MULTILINE)


def points(trace: list[tuple[str, str]], dest_name: str) -> dict[str, tuple[str, int]]:
    """The steps to interrupt, as (syscall, its 1-based count in the run): the last file renamed
    into the temporary folder, each rename that moves DEST or puts the new folder there, and the
    first delete after them. A call strace made fail on purpose is not a step."""
    swaps = [k for k, (name, args) in enumerate(trace) if name.startswith("rename") and
             f'/{dest_name}"' in args and "(INJECTED)" not in args]
    last_file = max(k for k in range(swaps[0]) if trace[k][0] == "rename")
    first_delete = next(k for k in range(swaps[-1] + 1, len(trace)) if trace[k][0] == "unlinkat")
    chosen = {"last file": last_file, **{f"swap {i + 1}": k for i, k in enumerate(swaps)}, "delete": first_delete}

    def nth(k):
        name = trace[k][0]
        return name, sum(1 for n, _ in trace[: k + 1] if n == name)

    return {label: nth(k) for label, k in chosen.items()}


CASES = [(way, step, sig) for way, steps in (("exchange", ("last file", "swap 1", "delete")),
                                             ("two renames", ("last file", "swap 1", "swap 2", "delete")))
         for step in steps for sig in ("SIGTERM", "SIGINT", "SIGKILL")]


@pytest.mark.parametrize("way, step, sig", CASES)
def test_a_signal_at_each_step_leaves_old_or_new(outputs, tmp_path, way, step, sig):
    dest = tmp_path / "dest"
    dest.mkdir()
    for name, data in outputs["old"].items():
        (dest / name).write_bytes(data)
    syscall, nth = points(outputs["traces"][way], way.replace(" ", "-"))[step]
    hold = ["-e", f"inject={syscall}:delay_enter={HOLD_US}:when={nth}"]
    if way == "two renames":
        hold += ["-e", "inject=renameat2:error=EINVAL"]  # as on a file system without the exchange
    log = tmp_path / "trace.log"
    proc = train(dest, outputs["new_corpus"], hold, log=log)
    os.kill(wait_for_call(log, syscall, nth, proc), getattr(signal, sig))
    _, err = proc.communicate(timeout=60)

    state = snapshot(dest)
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".dest."))
    if sig == "SIGKILL":
        if way == "two renames" and step == "swap 2":  # killed between the two renames
            assert state is None and leftovers[0].startswith(".dest.old-")
        else:
            assert state in (outputs["old"], outputs["new"])
    else:  # the run finishes the step it is in, cleans up, and stops
        # (click starts a fresh line first, as after a ^C echoed by the terminal)
        assert proc.returncode == 130 and err.decode().split("\n") == ["", "tokkit: interrupted", ""]
        assert state in (outputs["old"], outputs["new"]) and leftovers == []

    again = train(dest, outputs["new_corpus"])
    _, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    said = err.decode().splitlines()
    assert len(said) == len(leftovers) and all(name in line for name, line in zip(leftovers, said)), said
    assert snapshot(dest) == outputs["new"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".dest.")] == []


def wait_for_call(log: Path, syscall: str, nth: int, proc) -> int:
    """The process id once the `nth` call of `syscall` has started (strace writes its line on entry)."""
    deadline = time.monotonic() + 60
    pattern = re.compile(rf"^(\d+)\s+{syscall}\(", re.MULTILINE)
    while time.monotonic() < deadline:
        found = pattern.findall(log.read_text()) if log.exists() else []
        if len(found) >= nth:
            return int(found[nth - 1])
        assert proc.poll() is None, proc.communicate()[1].decode()
        time.sleep(0.002)
    raise AssertionError(f"{syscall} #{nth} never started")
