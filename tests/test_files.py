"""tokkit._files: atomic files and folders, replacement that is safe at every instant, recovery."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokkit import _files
from tokkit._files import atomic_dir, atomic_open, dump_json, recover_interrupted

MARKERS = {"a.txt"}


def write_output(dest, text):
    with atomic_dir(dest, marker_files=MARKERS) as tmp:
        with open(os.path.join(tmp, "a.txt"), "w") as f:
            f.write(text)


def read_output(dest):
    with open(os.path.join(dest, "a.txt")) as f:
        return f.read()


def leftovers(folder):
    return sorted(n for n in os.listdir(folder) if n.startswith("."))


def test_replacement_swaps_in_one_step_and_leaves_nothing(tmp_path):
    dest = tmp_path / "out"
    write_output(dest, "old")
    write_output(dest, "new")
    assert read_output(dest) == "new"
    assert leftovers(tmp_path) == []


def test_an_error_inside_keeps_the_old_output(tmp_path):
    dest = tmp_path / "out"
    write_output(dest, "old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_dir(dest, marker_files=MARKERS) as tmp:
            open(os.path.join(tmp, "a.txt"), "w").write("half")
            raise KeyboardInterrupt
    assert read_output(dest) == "old"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failing_rename", [1, 2])
def test_two_step_fallback_interrupted_at_each_rename_is_recovered(tmp_path, monkeypatch, failing_rename):
    """Without an atomic exchange, a stop between the renames leaves `.out.old-*`; the next run restores it."""
    dest = tmp_path / "out"
    write_output(dest, "old")
    monkeypatch.setattr(_files, "_exchange", lambda a, b: False)
    calls = []
    real_rename = os.rename

    def rename(a, b):
        calls.append((a, b))
        if len(calls) == failing_rename:
            raise KeyboardInterrupt
        real_rename(a, b)

    monkeypatch.setattr(_files.os, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        write_output(dest, "new")
    monkeypatch.setattr(_files.os, "rename", real_rename)
    if failing_rename == 2:
        assert not dest.exists() and any(".out.old-" in n for n in leftovers(tmp_path))
        # the interrupted run was this process, which is alive: pretend it died
        old = next(n for n in leftovers(tmp_path) if ".out.old-" in n)
        os.rename(tmp_path / old, tmp_path / ".out.old-999999999-x")
    notes = []
    recover_interrupted(dest, say=notes.append)
    assert read_output(dest) == "old"
    assert leftovers(tmp_path) == []
    assert (failing_rename == 2) == any(n.startswith("restored") for n in notes)


def test_a_killed_run_is_recovered_by_the_next_one(tmp_path):
    """SIGKILL between the fallback's two renames: the next atomic_dir puts the old output back first."""
    dest = tmp_path / "out"
    write_output(dest, "old")
    flag = tmp_path / "renamed-once"
    code = f"""
import os, time
from tokkit import _files
_files._exchange = lambda a, b: False
real = os.rename
def rename(a, b):
    real(a, b)
    open({str(flag)!r}, "w").close()
    time.sleep(60)
_files.os.rename = rename
with _files.atomic_dir({str(dest)!r}, marker_files={{"a.txt"}}) as tmp:
    open(os.path.join(tmp, "a.txt"), "w").write("new")
"""
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 60
    while not flag.exists() and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not dest.exists()
    write_output(dest, "newer")  # recovers first, then replaces
    assert read_output(dest) == "newer"
    assert leftovers(tmp_path) == []


def test_sigterm_stops_the_cli_like_ctrl_c(tmp_path):
    """tokkit train under SIGTERM exits 130 with one line and leaves no temporary folder."""
    # The corpus is a pipe that stays open, so the run is surely still reading when the signal comes.
    proc = subprocess.Popen([sys.executable, "-m", "tokkit", "train", "--algo", "wordpiece", "-q",
                             "-o", str(tmp_path / "tok"), "-"], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(b"some words here and there\n" * 1000)
    proc.stdin.flush()
    time.sleep(3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["tokkit: interrupted"]
    assert leftovers(tmp_path) == []


def test_atomic_open_leaves_the_old_file_on_error(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_open(path) as f:
            f.write("new")
            raise RuntimeError("stop")
    assert path.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_the_cli_restores_the_sigterm_handler_it_installs():
    """main() run in-process leaves SIGTERM as it found it (forked pool workers must still die on it)."""
    from helpers.cli import run_cli

    before = signal.getsignal(signal.SIGTERM)
    assert run_cli(["--version"]) == 0
    assert signal.getsignal(signal.SIGTERM) is before


JSON_KEYS = st.text(max_size=5)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda inner: (st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(JSON_KEYS, inner, max_size=4)
                   | st.dictionaries(st.integers(), inner, max_size=2)),
    max_leaves=20)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES)
def test_dump_json_is_json_dumps_with_indent(value):
    # dump_json formats containers itself: its text must be json.dumps(indent=2)'s, byte for byte
    assert dump_json(value) == json.dumps(value, ensure_ascii=False, indent=2) + "\n"
