"""Small pieces the fine-tuning hostile tests share: tiny model options, labelled files, a folder listing."""
import json
import random
import shutil

import pytest

from .conftest import one_error_line

TINY = ["--layers", "1", "--hidden", "16", "--heads", "2", "--ffn", "16", "--threads", "1"]
WORDS = "the cat sat on mat dog log quick brown fox".split()


def sentences(n, seed=0):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(5)) for _ in range(n)]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def classify_rows(n, seed=0):
    return [{"text": s, "label": "pos" if "cat" in s else "neg", "other": "pos" if "dog" in s else "neg",
             "score": str(len(s))} for s in sentences(n, seed)]


def tag_rows(n, seed=0):
    return [{"tokens": s.split(), "tags": ["N" if w in ("cat", "dog") else "O" for w in s.split()]}
            for s in sentences(n, seed)]


def listing(folder):
    """Every path under `folder` with its bytes (None for a folder): what "untouched" compares."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def scratch(*extra, out="out"):
    """A tiny from-scratch run of one epoch on train.jsonl (classify unless `extra` names a task)."""
    task = [] if "--task" in extra else ["--task", "classify"]
    return ["finetune", "train.jsonl", "-o", out, "--from-scratch", "-t", "tok", *TINY, "-q", "--epochs", "1",
            "--batch-size", "8", *task, *extra]


@pytest.fixture
def ft_work(tmp_path, monkeypatch, wp_dir):
    """A folder with tok/, train.jsonl, dev.jsonl and tag.jsonl, and the CLI's cwd there."""
    shutil.copytree(wp_dir, tmp_path / "tok")
    write_jsonl(tmp_path / "train.jsonl", classify_rows(16))
    write_jsonl(tmp_path / "dev.jsonl", classify_rows(6, seed=1))
    write_jsonl(tmp_path / "tag.jsonl", tag_rows(12))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(cli, work, args, *words):
    """Run `args`; assert one error line holding `words`, exit 2, and the folder unchanged."""
    before = listing(work)
    code, out, err = cli(*args)
    line = one_error_line(err)
    assert code == 2 and out == "", err
    assert all(w in line for w in words), line
    assert listing(work) == before
    return line
