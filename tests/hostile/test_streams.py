"""Standard streams that fail: a closed stdin or stdout, a full disk, a reader that goes away.

Each is one `tokkit: error:` line with exit code 2, never a traceback; a closed pipe ends the run
silently with exit code 141, as SIGPIPE ends other Unix tools. Every command that reads stdin or
writes stdout is run as a real process, with its descriptors set up by the test.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tokkit

from .conftest import TEXT, one_error_line

ROOT = str(Path(tokkit.__file__).resolve().parents[1])  # the checkout under test, whatever the install


def tokkit_process(args, cwd, *, close=(), **kwargs):
    """`python -m tokkit ARGS` with the file descriptors in `close` closed in the child."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def close_fds():
        for fd in close:
            os.close(fd)

    return subprocess.Popen([sys.executable, "-m", "tokkit", *args], cwd=cwd, env=env, preexec_fn=close_fds,
                            **kwargs)


@pytest.fixture
def work(tmp_path, wp_dir, wp):
    (tmp_path / "in.txt").write_text(TEXT * 30)
    (tmp_path / "ids.txt").write_text("".join(" ".join(map(str, wp.encode(line))) + "\n"
                                              for line in (TEXT * 30).splitlines()))
    return tmp_path


def readers(wp_dir):
    t = ["-t", str(wp_dir)]
    return {"encode": ["encode", *t], "encode -": ["encode", *t, "-"], "decode": ["decode", *t],
            "train -": ["train", "-", "-o", "out", "-q", "--vocab-size", "60"], "stats -": ["stats", *t, "-"],
            "compare --corpus -": ["compare", str(wp_dir), "--corpus", "-"],
            "compare --train -": ["compare", "--train", "wordpiece", "-"]}


def writers(wp_dir):
    t = ["-t", str(wp_dir)]
    return {"encode": ["encode", *t, "in.txt"], "encode --template": ["encode", *t, "--template", "in.txt"],
            "decode": ["decode", *t, "ids.txt"], "stats": ["stats", *t, "in.txt"],
            "compare": ["compare", str(wp_dir), str(wp_dir), "--corpus", "in.txt"],
            "--help": ["encode", "--help"], "--version": ["--version"]}


@pytest.mark.parametrize("name", list(readers("TOK")))
def test_a_closed_stdin_is_one_error_line(work, wp_dir, name):
    proc = tokkit_process(readers(wp_dir)[name], work, close=(0,), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == b""
    assert "standard input is closed" in one_error_line(err.decode())
    assert not (work / "out").exists()


@pytest.mark.parametrize("name", list(writers("TOK")))
def test_a_closed_stdout_is_one_error_line(work, wp_dir, name):
    proc = tokkit_process(writers(wp_dir)[name], work, close=(1,), stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert "cannot write to standard output: it is closed" in one_error_line(err.decode())


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("name", list(writers("TOK")))
def test_a_full_disk_is_one_error_line(work, wp_dir, name):
    with open("/dev/full", "w") as full:
        proc = tokkit_process(writers(wp_dir)[name], work, stdout=full, stderr=subprocess.PIPE)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert "cannot write to standard output (No space left on device)" in one_error_line(err.decode())


@pytest.mark.parametrize("name", list(writers("TOK")))
def test_a_reader_that_goes_away_ends_the_run_silently(work, wp_dir, name):
    """The reader closes the pipe before the first write: exit 141 and nothing on stderr."""
    proc = tokkit_process(writers(wp_dir)[name], work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 141 and err == b"", err.decode()


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_head_takes_one_line_and_the_rest_is_dropped_silently(work, wp_dir, command):
    """`tokkit encode ... | head -1`: the first line arrives, then a silent exit 141."""
    source = "in.txt" if command == "encode" else "ids.txt"
    proc = tokkit_process([command, "-t", str(wp_dir), source], work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = subprocess.Popen(["head", "-1"], stdin=proc.stdout, stdout=subprocess.PIPE)
    proc.stdout.close()
    first, _ = head.communicate(timeout=120)
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert first.count(b"\n") == 1 and first.strip()
    assert proc.returncode == 141 and err == b"", err.decode()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_an_unwritable_stderr_keeps_the_exit_code(work, wp_dir):
    with open("/dev/full", "w") as full:
        proc = tokkit_process(["encode", "-t", str(wp_dir), "missing.txt"], work, stdout=subprocess.PIPE, stderr=full)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == b""


def test_a_closed_stdout_does_not_stop_output_to_a_file(work, wp_dir, wp):
    """With -o, stdout is not needed; its descriptor is held on /dev/null, so no file opened later
    takes its number and receives what was meant for stdout."""
    proc = tokkit_process(["encode", "-t", str(wp_dir), "in.txt", "-o", "ids.out"], work, close=(1,),
                          stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == b""
    assert (work / "ids.out").read_text() == (work / "ids.txt").read_text()


@pytest.mark.parametrize("close", [True, False])
def test_a_closed_or_full_stderr_does_not_fail_a_run(work, close):
    """Messages and the summary are lost; the run and its exit code are not."""
    if not close and not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full (Linux)")
    args = ["train", "in.txt", "-o", "tok", "--vocab-size", "60"]
    with open("/dev/full" if not close else os.devnull, "w") as sink:
        proc = tokkit_process(args, work, close=(2,) if close else (), stdout=subprocess.PIPE,
                              stderr=None if close else sink)
        out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0 and out == b""
    assert (work / "tok" / "vocab.txt").is_file()


@pytest.mark.parametrize("args", [["encode", "-t", "TOK", "in.txt", "--format", "npz", "-o", "stdout"],
                                  ["stats", "-t", "TOK", "in.txt", "-o", "stdout"]])
def test_a_closed_pipe_behind_a_link_to_stdout_is_silent_too(work, wp_dir, args):
    """-o /dev/stdout is opened by name, not through sys.stdout: a reader that goes away is still a
    silent exit 141, and the link stays a link. (The test's own link to /proc/self/fd/1 stands in
    for /dev/stdout, so that a regression cannot replace the machine's /dev/stdout.)"""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd (Linux)")
    os.symlink("/proc/self/fd/1", work / "stdout")
    proc = tokkit_process([str(wp_dir) if a == "TOK" else a for a in args], work, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 141 and err == b"", err.decode()
    assert (work / "stdout").is_symlink()
