"""A fine-tuning run holds its output folder and publishes old-or-new: a second run into the same
folder is refused in one line, and a run stopped before it has something to keep leaves OUT as it
was (the earlier run whole, or no folder), never the old model beside the new metrics."""
import json

import pytest

from tokkit._files import FolderLock

from .conftest import one_error_line
from .finetune_kit import ft_work, listing, scratch  # noqa: F401 - a fixture

torch = pytest.importorskip("torch")


def beside(work):
    """What runs left next to the output folders: temporary folders and lock files."""
    return sorted(p.name for p in work.iterdir() if p.name.startswith("."))


def stop_at_step(monkeypatch, n, error):
    """Make the n-th training step raise `error` (after the steps before it ran and logged)."""
    import tokkit.bert.finetune_run as run

    real, seen = run.Finetuning.step, []

    def step(*args, **kwargs):
        seen.append(1)
        if len(seen) == n:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(run.Finetuning, "step", step)


@pytest.mark.parametrize("error, code", [(KeyboardInterrupt(), 130), (__import__("tokkit").TokkitError("boom"), 2)])
def test_a_force_rerun_stopped_in_its_first_epoch_leaves_the_earlier_run_whole(ft_work, cli, monkeypatch,
                                                                               error, code):
    assert cli(*scratch("--eval", "dev.jsonl"))[0] == 0
    before = listing(ft_work / "out")
    assert {"metrics.jsonl", "summary.json", "model.safetensors", "checkpoint"} <= set(before)
    stop_at_step(monkeypatch, 2, error)
    got, _, err = cli(*scratch("--eval", "dev.jsonl", "--force", "--seed", "1", "--log-every", "1"))
    assert got == code, err
    assert listing(ft_work / "out") == before  # not the new run's metrics beside the old model
    assert beside(ft_work) == []


def test_a_first_run_stopped_before_it_kept_anything_leaves_no_folder(ft_work, cli, monkeypatch):
    stop_at_step(monkeypatch, 2, __import__("tokkit").TokkitError("boom"))
    code, _, err = cli(*scratch("--log-every", "1"))
    assert code == 2 and "boom" in one_error_line(err)
    assert not (ft_work / "out").exists() and beside(ft_work) == []


def test_a_force_rerun_that_finishes_replaces_every_file_of_the_earlier_run(ft_work, cli):
    assert cli(*scratch("--eval", "dev.jsonl", "--epochs", "2"))[0] == 0
    (ft_work / "out" / "notes.txt").write_text("the earlier run's")
    assert cli(*scratch("--force", "--seed", "1"))[0] == 0
    summary = json.loads((ft_work / "out" / "summary.json").read_text())
    assert summary["config"]["seed"] == 1 and summary["best_eval"] is None
    records = [json.loads(x) for x in (ft_work / "out" / "metrics.jsonl").read_text().splitlines()]
    assert not any(r["kind"] == "eval" for r in records)  # none of the earlier run's evaluations
    assert not (ft_work / "out" / "notes.txt").exists() and beside(ft_work) == []


@pytest.mark.parametrize("command", ["finetune", "pretrain"])
def test_a_second_run_into_a_folder_in_use_is_one_error_line(ft_work, cli, command):
    lock = FolderLock(ft_work / "out")  # another run holding OUT (a flock: held per open file)
    try:
        before = listing(ft_work)
        args = scratch() if command == "finetune" else \
            ["pretrain", "-t", "tok", "-o", "out", "train.jsonl", "--steps", "1", "-q", "--layers", "1",
             "--hidden", "16", "--heads", "2", "--ffn", "16", "--positions", "64", "--max-length", "32"]
        code, out, err = cli(*args)
        assert code == 2 and "in use by another run" in one_error_line(err)
        assert listing(ft_work) == before
    finally:
        lock.release()
    assert cli(*scratch())[0] == 0  # once it is let go, the folder can be written
    assert beside(ft_work) == []


def test_a_lock_file_left_by_a_killed_run_blocks_nothing(ft_work, cli):
    (ft_work / ".out.lock").write_text("999999999")  # no process holds it
    code, _, err = cli(*scratch())
    assert code == 0, err
    assert beside(ft_work) == []


def test_a_missing_parent_folder_is_created_and_removed_again_when_refused(ft_work, cli):
    code, _, err = cli(*scratch("--max-length", "100000", out="a/b/out"))
    assert code == 2 and not (ft_work / "a").exists()
    assert cli(*scratch(out="a/b/out"))[0] == 0
    assert (ft_work / "a" / "b" / "out" / "summary.json").is_file()


def test_a_pretraining_force_rerun_stopped_before_its_first_checkpoint_leaves_the_earlier_run_whole(
        ft_work, cli, monkeypatch):
    import tokkit.bert.train as train

    (ft_work / "corpus.txt").write_text("The cat sat on the mat. A dog sat on a log.\n\n" * 40, encoding="utf-8")
    args = ["pretrain", "-t", "tok", "-o", "run", "corpus.txt", "--steps", "2", "--batch-size", "4", "--max-length",
            "32", "-q", "--layers", "1", "--hidden", "16", "--heads", "2", "--ffn", "16", "--positions", "64",
            "--threads", "1", "--log-every", "1"]
    assert cli(*args)[0] == 0
    before = listing(ft_work / "run")
    real, seen = train.Pretraining.step, []

    def step(self, run):
        seen.append(run.step)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return real(self, run)

    monkeypatch.setattr(train.Pretraining, "step", step)
    code, _, err = cli(*args[:6], "--steps", "3", *args[8:], "--force", "--seed", "1")
    assert code == 130, err
    assert listing(ft_work / "run") == before and beside(ft_work) == []


def test_a_run_in_another_process_holds_the_folder_until_it_is_killed(ft_work, cli):
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    import tokkit

    root = str(Path(tokkit.__file__).resolve().parents[1])
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from tokkit._files import FolderLock; FolderLock('out'); "
                               "print('held', flush=True); time.sleep(60)"],
        cwd=ft_work, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": root})
    try:
        assert holder.stdout.readline().strip() == "held"
        code, _, err = cli(*scratch())
        assert code == 2 and f"process {holder.pid}" in one_error_line(err)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    code, _, err = cli(*scratch())  # the lock died with its process; its file is taken over
    assert code == 0, err
    assert beside(ft_work) == []
