"""Counting on a Dask cluster gives the local result; failures are named and fast."""
import os
import random
import signal
import threading
import time

import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.text.corpus import Source, iter_chunks, resolve

distributed = pytest.importorskip("distributed")
dist = pytest.importorskip("tokkit.train.dask_count")


def line_range_bytes(path, task):
    with open(path, "rb") as f:
        return b"".join(iter_chunks(dist._LineRange(f, task.start, task.end), chunk_size=7))


@pytest.mark.parametrize("seed", range(5))
def test_ranges_cover_every_line_once(tmp_path, seed):
    rng = random.Random(seed)
    lines = [" ".join("x" * rng.randint(0, 9) for _ in range(rng.randint(0, 12))) for _ in range(200)]
    data = "\n".join(lines).encode() + (b"\n" if seed % 2 else b"")
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    tasks = dist.plan([Source(str(path))], range_size=rng.randint(1, 300))
    assert len(tasks) > 1
    parts = [line_range_bytes(path, t) for t in tasks]
    assert b"".join(parts) == data
    nonempty = [p for p in parts if p]
    assert all(p.endswith(b"\n") for p in nonempty[:-1])  # only the file's end may cut a line


def test_pack_keeps_ranges_in_order_and_near_the_target(tmp_path):
    sources = []
    for i, size in enumerate([50, 10, 10, 400, 5]):
        (tmp_path / f"f{i}.txt").write_bytes(b"x\n" * (size // 2))
        sources.append(Source(str(tmp_path / f"f{i}.txt")))
    ranges = dist.plan(sources, range_size=100)
    tasks = dist.pack(ranges, 100)
    assert [r for t in tasks for r in t] == ranges
    assert all(sum(r.end - r.start for r in t) <= 100 for t in tasks)
    assert len(tasks) < len(ranges)  # small files share a task


def test_stdin_is_refused():
    with pytest.raises(TokkitError, match="stdin"):
        dist.plan([Source("-")])


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("dist")
    rng = random.Random(0)
    words = ["alpha", "beta", "gamma", "delta", "ünïcode", "naïve", "東京", "it's", "42", "x-ray", "  "]
    for i in range(3):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 15))) for _ in range(3000)]
        (root / f"part{i}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import gzip

    (root / "extra.txt.gz").write_bytes(gzip.compress("compressed words here\n".encode() * 50))
    return root


@pytest.mark.parametrize("algo", ["wordpiece", "bpe", "bytelevel"])
def test_cluster_training_equals_local(client, corpus, tmp_path, monkeypatch, algo):
    monkeypatch.setattr(dist, "RANGE_SIZE", 20_000)  # many tasks, so the tree reduction really runs
    local = tokkit.train(corpus, algo=algo, vocab_size=400)
    remote = tokkit.train(corpus, algo=algo, vocab_size=400, client=client)
    for tok, name in ((local, "local"), (remote, "remote")):
        (tmp_path / name).mkdir()
        tok.save(tmp_path / name)
    for f in (tmp_path / "local").iterdir():
        assert f.read_bytes() == (tmp_path / "remote" / f.name).read_bytes(), f.name


def test_cluster_counts_pattern_families_as_local(client, corpus, tmp_path, monkeypatch):
    """The compiled o200k counting mode travels to the workers (as a mode name) and counts there."""
    from tokkit._native.patterns import NAMED

    monkeypatch.setattr(dist, "RANGE_SIZE", 20_000)
    local = tokkit.train(corpus, algo="bytelevel", vocab_size=400, pattern=NAMED["o200k"])
    remote = tokkit.train(corpus, algo="bytelevel", vocab_size=400, pattern=NAMED["o200k"], client=client)
    gpt2 = tokkit.train(corpus, algo="bytelevel", vocab_size=400)
    for tok, name in ((local, "local"), (remote, "remote"), (gpt2, "gpt2")):
        (tmp_path / name).mkdir()
        tok.save(tmp_path / name)
    for f in (tmp_path / "local").iterdir():
        assert f.read_bytes() == (tmp_path / "remote" / f.name).read_bytes(), f.name
    assert (tmp_path / "local" / "merges.txt").read_bytes() != (tmp_path / "gpt2" / "merges.txt").read_bytes()


def test_pruning_is_reported(client, corpus, monkeypatch):
    from tokkit.train import train

    monkeypatch.setattr(dist, "RANGE_SIZE", 20_000)
    _, summary = train(corpus, algo="wordpiece", vocab_size=300, client=client, min_word_count=10_000, return_summary=True)
    assert summary.pruned_words > 0 and "pruned" in summary.line()


def test_killed_worker_still_gives_the_same_result(corpus, monkeypatch):
    monkeypatch.setattr(dist, "RANGE_SIZE", 5_000)
    expected = tokkit.train(corpus, algo="bytelevel", vocab_size=300)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    c = distributed.Client(cluster)
    try:
        pids = sorted(c.run(os.getpid).values())
        done = threading.Event()
        killed_while_running = []

        def kill_one():
            while not done.is_set():
                if any(c.processing().values()):  # counting tasks are running now
                    os.kill(pids[0], signal.SIGKILL)
                    killed_while_running.append(not done.is_set())
                    return
                time.sleep(0.005)

        killer = threading.Thread(target=kill_one)
        killer.start()
        got = tokkit.train(corpus, algo="bytelevel", vocab_size=300, client=c)
        done.set()
        killer.join()
    finally:
        c.close()
        cluster.close()
    assert killed_while_running == [True]
    assert [got.id_to_token(i) for i in range(got.vocab_size)] == \
        [expected.id_to_token(i) for i in range(expected.vocab_size)]


def test_wrong_scheduler_address_fails_fast():
    start = time.perf_counter()
    with pytest.raises(TokkitError, match="cannot reach"):
        dist.connect("tcp://127.0.0.1:9", timeout=2)
    assert time.perf_counter() - start < 15


def test_file_that_disappears_is_named(client, tmp_path):
    path = tmp_path / "gone.txt"
    path.write_text("some words\n" * 100)
    tasks = dist.pack(dist.plan(resolve([str(path)]), range_size=100), 300)
    path.unlink()
    with pytest.raises(TokkitError, match="gone.txt"):
        dist.run_tasks(client, tasks, mode="bert", options={}, errors="strict", min_word_count=0, progress=False)


@pytest.fixture(scope="module")
def wordpiece(corpus):
    return tokkit.train(corpus, algo="wordpiece", vocab_size=300)


def shard_arrays(folder):
    import json

    import numpy as np

    index = json.loads((folder / "index.json").read_text())
    arrays = {}
    for entry in index["shards"]:
        with np.load(folder / entry["file"]) as data:
            arrays[entry["file"]] = {k: data[k].tolist() for k in sorted(data.files)}
    return index, arrays


def test_encoding_resumes_after_an_interrupted_run(client, tmp_path, wordpiece):
    from tokkit.pretraining.shards import ShardDataset
    from tokkit.pretraining.shards_dask import write_shards_dask

    docs = tmp_path / "docs"
    docs.mkdir()
    rng = random.Random(1)
    for i in range(4):
        paras = ["Title %d\n\n" % j + " ".join(rng.choice(["alpha beta.", "gamma delta!", "it's x-ray."])
                                               for _ in range(40)) for j in range(30)]
        (docs / f"d{i}.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    good = (docs / "d3.txt").read_bytes()
    (docs / "d3.txt").write_bytes(good[:100] + b"\xff" + good[100:])  # the last file fails: the job stops
    with pytest.raises(TokkitError, match="d3.txt"):
        write_shards_dask(client, wordpiece, [docs], kind="nsp", max_length=64, output=tmp_path / "out")
    assert not (tmp_path / "out" / "index.json").exists()
    from tokkit.pretraining.shards_dask import completed

    # with 2 workers, d3 starts only after a worker finished an earlier file
    done = [i for i in range(4) if completed(tmp_path / "out", i)]
    before = {s["file"]: (tmp_path / "out" / s["file"]).stat().st_mtime_ns
              for i in done for s in completed(tmp_path / "out", i)["shards"]}
    assert done and before
    (docs / "d3.txt").write_bytes(good)
    write_shards_dask(client, wordpiece, [docs], kind="nsp", max_length=64, output=tmp_path / "out", resume=True)
    after = {name: (tmp_path / "out" / name).stat().st_mtime_ns for name in before}
    assert after == before  # finished files were skipped, not redone
    write_shards_dask(client, wordpiece, [docs], kind="nsp", max_length=64, output=tmp_path / "clean")
    assert shard_arrays(tmp_path / "out") == shard_arrays(tmp_path / "clean")
    examples = list(ShardDataset(tmp_path / "out", shuffle=False))  # the folder's own order
    assert [int(e["index"]) for e in examples] == list(range(len(examples)))


def test_cli_encode_on_a_local_cluster_with_resume(tmp_path, wordpiece):
    import subprocess
    import sys

    wordpiece.save(tmp_path / "tok")
    (tmp_path / "a.txt").write_text("Title\n\nalpha beta gamma. delta alpha.\n\nmore text here. and more.\n")
    args = [sys.executable, "-m", "tokkit.cli", "encode", "-t", "tok", "--pretraining", "full", "--max-length",
            "32", "-o", "shards", "--scheduler", "local", "--threads", "1", "-q", "a.txt"]
    for extra in ([], ["--resume"]):
        proc = subprocess.run(args + extra, cwd=tmp_path, capture_output=True, timeout=300)
        assert proc.returncode == 0, proc.stderr.decode()
        assert proc.stderr.decode().strip() == ""  # -q: not even the dashboard line
    proc = subprocess.run([a for a in args if a != "-q"] + ["--resume"], cwd=tmp_path, capture_output=True,
                          timeout=300)
    assert proc.returncode == 0 and "dashboard" in proc.stderr.decode()
    from tokkit.pretraining.shards import ShardDataset

    assert len(ShardDataset(tmp_path / "shards")) >= 1
    proc = subprocess.run(args[:-1] + ["-"], cwd=tmp_path, capture_output=True, timeout=300)
    assert proc.returncode == 2 and b"stdin" in proc.stderr


def test_cli_train_wrong_scheduler_fails_fast(tmp_path):
    import subprocess
    import sys

    (tmp_path / "a.txt").write_text("some words here\n")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tokkit.cli", "train", "--scheduler", "tcp://127.0.0.1:9", "a.txt"],
                          cwd=tmp_path, capture_output=True, timeout=120)
    assert proc.returncode == 2 and b"cannot reach" in proc.stderr
    assert time.perf_counter() - start < 30


def bad_byte_corpus(path, size, bad_at):
    """`size` bytes of short lines with an invalid UTF-8 byte at `bad_at`, not at a line start."""
    line = b"some words on a line\n"
    data = bytearray(line * (size // len(line) + 1))[:size]
    assert data[bad_at - 1 : bad_at] != b"\n"
    data[bad_at] = 0xFF
    path.write_bytes(bytes(data))
    return path


def test_invalid_utf8_in_a_later_range_names_its_byte(tmp_path):
    """A range starts after the line it cuts; the byte named is still counted from the file's start."""
    path = bad_byte_corpus(tmp_path / "c.txt", 5000, 3010)
    with pytest.raises(TokkitError, match="c.txt: invalid UTF-8 at byte 3010 "):
        tokkit.train(str(path), algo="bpe", vocab_size=300)  # the local path, for reference
    for range_size in (1000, 1001, 3000):
        tasks = dist.plan(resolve([str(path)]), range_size=range_size)
        with pytest.raises(ValueError, match="c.txt: invalid UTF-8 at byte 3010 "):
            for task in tasks:
                dist.count_task([task], "bert", {}, "strict", chunk_size=64)


def test_cli_train_on_a_local_cluster_quiet_is_one_error_line(tmp_path):
    """-q with --scheduler local: the error line alone, with the right byte; no cluster or worker logs."""
    import subprocess
    import sys

    bad_byte_corpus(tmp_path / "big.txt", 2_500_000, 2_000_010)  # past the first of two 1.25 MB ranges
    proc = subprocess.run([sys.executable, "-m", "tokkit.cli", "train", "--algo", "bpe", "--vocab-size", "300",
                           "--scheduler", "local", "--workers", "1", "-q", "-o", "out", "big.txt"],
                          cwd=tmp_path, capture_output=True, timeout=300, check=False)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [
        "tokkit: error: big.txt: invalid UTF-8 at byte 2000010 (use --errors replace to substitute U+FFFD)"]
    assert proc.stdout == b"" and not (tmp_path / "out").exists()
