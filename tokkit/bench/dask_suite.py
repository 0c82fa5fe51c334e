"""Dask counting overhead: tokkit's local threads against a Dask LocalCluster, and a 1 TB estimate.

The measurement of benchmarks/bench_dask.py:

1. the counting phase: `count_words` with 2 threads against `count_words_dask` on a LocalCluster
   of 2 single-threaded worker processes, each contender in its own worker process, one warm-up
   round, then the rounds alternate; the cluster's start-up is its task's setup, timed apart;
   the two word tables are compared (they must be identical);
2. the throughput per cluster worker, and from it the counting time of 1 TB on more workers
   (counting is embarrassingly parallel);
3. the client-side merge loop (WordPiece, PMI scoring, as the published figure was measured) on a larger
   word table, as tokkit's trainer reports it.

>>> estimate_hours(25.0, 10)
1.1111111111111112
"""
from __future__ import annotations

import hashlib

from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows
from tokkit.errors import TokkitError
from tokkit.text.corpus import resolve
from tokkit.text.count import count_words
from tokkit.train import train
from tokkit.train.dask_count import count_words_dask, plan

try:  # imported with the module, so a task's setup time is the cluster's start-up alone
    from distributed import Client, LocalCluster
except ImportError:
    Client = LocalCluster = None

CLUSTER_WORKERS = 2
LOCAL, DASK = "tokkit --workers 2", "dask LocalCluster, 2 workers"


def _options(mode: str) -> dict:
    return {} if mode == "gpt2" else {"lowercase": True}


def table_summary(table) -> dict:
    """Size of a WordTable and a digest of its contents (equal digests: identical tables)."""
    h = hashlib.sha1(table.blob)
    h.update(table.offsets.tobytes())
    h.update(table.counts.tobytes())
    return {"distinct": len(table), "total": int(table.total), "digest": h.hexdigest()}


def local_task(paths: list[str], mode: str = "gpt2", workers: int = 2):
    """`count_words` on `workers` threads of this process."""

    sources, last = resolve(paths), {}

    def run():
        last["table"] = count_words(sources, mode=mode, options=_options(mode), workers=workers)
    run.summary = lambda: table_summary(last["table"])
    return run


def dask_task(paths: list[str], mode: str = "gpt2", workers: int = CLUSTER_WORKERS):
    """`count_words_dask` on a LocalCluster of `workers` single-threaded processes, started here."""

    if LocalCluster is None:
        raise TokkitError("dask is not installed (pip install 'tokkit[dask]')")
    sources, last = resolve(paths), {}
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)

    def run():
        last["table"], _ = count_words_dask(client, sources, mode=mode, options=_options(mode))

    def close():
        client.close()
        cluster.close()
    run.summary = lambda: table_summary(last["table"])
    run.close = close
    return run


def merge_task(paths: list[str], vocab_size: int = 64000):
    """Train WordPiece (PMI scoring) on the files; the summary holds the trainer's own merge-loop time."""

    last = {}

    def run():
        last["summary"] = train(paths, algo="wordpiece", vocab_size=vocab_size, workers=2, scoring="pmi",
                                return_summary=True)[1]
    run.summary = lambda: {"merge_s": last["summary"].seconds["merge"],
                           "distinct": last["summary"].distinct_words}
    return run


def estimate_hours(mb_per_s_per_worker: float, workers: int, terabytes: float = 1.0) -> float:
    """Hours to count `terabytes` on `workers` workers at the given rate per worker."""
    return terabytes * 1e6 / (mb_per_s_per_worker * workers) / 3600


def run_dask_suite(paths: list[str], *, mode: str = "gpt2", repeat: int = 3, merge_paths: list[str] | None = None,
                   merge_vocab: int = 64000, estimate_workers=(10, 100), log=print) -> dict:
    """rows (local first, then dask) and what bench_dask.py prints: start-up, identical tables,
    per-worker rate, estimates, and the merge loop (when `merge_paths` are given)."""

    if LocalCluster is None:
        raise TokkitError("dask is not installed (pip install 'tokkit[dask]')")
    sources = resolve(paths)
    mb = sum(s.size() or 0 for s in sources) / 1e6
    D = "tokkit.bench.dask_suite:"
    kwargs = {"paths": [s.path for s in sources], "mode": mode}
    results = measure_tasks({LOCAL: (D + "local_task", kwargs), DASK: (D + "dask_task", kwargs)},
                            repeat=repeat, warmup=1, log=log)
    group = f"{mode} counting, {mb:.0f} MB"
    rows = group_rows("dask", group, results, baseline=LOCAL, work=mb, unit="MB/s", target="dask/local time <= 1.20")
    local, dask = results[LOCAL], results[DASK]
    out = {"rows": rows, "mb": mb, "tasks": len(plan(sources)), "startup_s": dask.setup_s,
           "summary": local.summary or dask.summary,
           "identical": bool(local.summary and dask.summary and local.summary == dask.summary)}
    dask_row = next(r for r in rows if r["name"] == DASK)
    if dask_row.get("throughput"):
        out["per_worker_mb_s"] = dask_row["throughput"] / CLUSTER_WORKERS
        out["estimates"] = {n: estimate_hours(out["per_worker_mb_s"], n) for n in estimate_workers}
    if merge_paths:
        msources = resolve(merge_paths)
        merge = measure_tasks({"merge": (D + "merge_task", {"paths": [s.path for s in msources],
                                                            "vocab_size": merge_vocab})},
                              repeat=1, warmup=0, log=log)["merge"]
        out["merge"] = dict(merge.summary or {}, mb=sum(s.size() or 0 for s in msources) / 1e6,
                            vocab=merge_vocab, note=merge.note)
    return out


def run_from_inputs(i) -> tuple[list[dict], list[str]]:
    """`tokkit bench --suite dask`: rows and notes over the run's slice (tokkit.bench.registry.Inputs)."""
    out = run_dask_suite([i.slice.path], repeat=i.repeat, log=i.log)
    if not out["identical"]:
        raise TokkitError("dask: the cluster's word table differs from the local one")
    notes = [f"dask: word tables identical (local, dask); cluster start-up {out['startup_s'] or 0:.2f} s, "
             "not counted"]
    notes += [f"dask: 1 TB on {n} workers: counting {h:.2f} h at the measured rate per worker"
              for n, h in out.get("estimates", {}).items()]
    return out["rows"], notes
