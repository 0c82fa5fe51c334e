"""Count words on a Dask cluster: byte ranges as tasks, a tree reduction on the workers.

Only the merge loop needs one place, and it runs on the client over the (much smaller) table of
distinct words. Without pruning the table equals the local one, so the output files are
byte-identical to a single-machine run.

Ranges: a plain file is cut at every `range_size` bytes (by default about half of each
worker's share of the corpus, between 1 and 64 MiB), and consecutive ranges, of one file or of
several small files, are packed into tasks of about that size; the task for [start, end) begins after
the first line end at or after `start` (at 0 for the first range) and reads on past `end` up to the
end of the line holding byte `end - 1`. So every line is counted once, by the task where it starts,
and inside a task the bytes are chunked by the local rule (`tokkit.text.corpus.iter_chunks`).
A compressed file is one task. dask is imported only here, and only when used.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import numpy as np

from tokkit._progress import Progress
from tokkit._threads import available_cores
from tokkit.errors import TokkitError
from tokkit.text.corpus import CHUNK_SIZE, Source, iter_chunks
from tokkit.text.count import WordTable, _decode_error, new_counter

RANGE_SIZE = 64 << 20  # at most 64 MiB per task: long enough to amortise scheduling, short enough to balance
MIN_RANGE = 1 << 20
FAN_IN = 8  # tables added per reduction task: fewer levels than pairs, each still small


@dataclass(frozen=True)
class Task:
    """Count the lines that start in [start, end) of `path` (end None: to the end of the file)."""

    path: str
    start: int
    end: int | None
    compressed: bool = False


def plan(sources: list[Source], *, range_size: int = RANGE_SIZE) -> list[Task]:
    """Cut the sources into tasks; stdin is refused."""
    tasks = []
    for s in sources:
        if s.path == "-":
            raise TokkitError("stdin cannot be read on a cluster; give files with --scheduler")
        if s.compressed:
            tasks.append(Task(s.path, 0, None, compressed=True))
            continue
        size = s.size()
        if size is None:
            raise TokkitError(f"{s.path}: no such file")
        for start in range(0, max(size, 1), range_size):
            tasks.append(Task(s.path, start, min(start + range_size, size)))
    return tasks


def pack(ranges: list[Task], target: int) -> list[list[Task]]:
    """Group consecutive ranges into tasks of about `target` bytes (a compressed file counts as target)."""
    tasks: list[list[Task]] = []
    size = target
    for r in ranges:
        n = target if r.end is None else r.end - r.start
        if size + n > target and tasks and tasks[-1]:
            tasks.append([])
            size = 0
        elif not tasks:
            tasks.append([])
            size = 0
        tasks[-1].append(r)
        size += n
    return tasks


def count_task(task: list[Task], mode: str, options: dict, errors: str, chunk_size: int = CHUNK_SIZE):
    """Run on a worker: count the ranges of one task; return the table as (blob, offsets, counts, total)."""
    counter = new_counter(mode, options)
    for r in task:
        _count_range(counter, r, errors, chunk_size)
    blob, offsets, counts = counter.to_arrays()
    return blob, offsets, counts, counter.total


def _count_range(counter, r: Task, errors: str, chunk_size: int) -> None:
    source = Source(r.path)
    try:
        stream = source.open()
    except TokkitError:
        raise FileNotFoundError(f"{r.path}: file disappeared during the job") from None
    with stream:
        reader = stream if r.compressed else _LineRange(stream, r.start, r.end)
        offset = 0 if r.compressed else reader.pos  # the range begins at the first line that starts in it
        for chunk in iter_chunks(reader, chunk_size=chunk_size):
            try:
                counter.count(chunk, errors=errors)
            except ValueError as exc:
                raise ValueError(_decode_error(source, offset, exc)) from None
            offset += len(chunk)


class _LineRange:
    """A read(n) view of the lines that start in [start, end) of a binary file."""

    def __init__(self, f, start: int, end: int | None):
        self.f = f
        if start > 0:
            f.seek(start - 1)
            if f.read(1) != b"\n":
                f.readline()  # the line holding `start` belongs to the previous task
        self.pos = f.tell()
        self.end = end
        self.tail = False  # reading the rest of the line that straddles `end`

    def read(self, n: int) -> bytes:
        if self.end is None:
            return self.f.read(n)
        if self.tail:
            return self._read_tail(n)
        if self.pos >= self.end:
            return b""
        data = self.f.read(min(n, self.end - self.pos))
        self.pos += len(data)
        if self.pos >= self.end and data and not data.endswith(b"\n"):
            self.tail = True
        return data

    def _read_tail(self, n: int) -> bytes:
        # Up to n bytes of the straddling line, stopping just after its "\n".
        data = self.f.readline(n)
        if not data or data.endswith(b"\n"):
            self.tail = False
            self.end = self.pos  # nothing more after this line
        self.pos += len(data)
        return data


def merge_tables(*tables, min_word_count: int = 0):
    """Run on a worker: add tables; drop words rarer than `min_word_count` (and say how many)."""
    acc = new_counter("bert", {})  # used only as a compiled hash table: the mode does not matter
    total = pruned_words = pruned_count = 0
    for blob, offsets, counts, t, *pruned in tables:
        acc.add_arrays(blob, offsets, counts)
        total += t
        if pruned:
            pruned_words += pruned[0]
            pruned_count += pruned[1]
    blob, offsets, counts = acc.to_arrays()
    if min_word_count > 1:
        blob, offsets, counts, n, c = prune(blob, offsets, counts, min_word_count)
        pruned_words += n
        pruned_count += c
    return blob, offsets, counts, total, pruned_words, pruned_count


def prune(blob, offsets, counts, min_count: int):
    """Keep the words seen at least `min_count` times; return the table and what was dropped."""
    keep = counts >= min_count
    if keep.all():
        return blob, offsets, counts, 0, 0
    lengths = np.diff(offsets)[keep]
    starts = offsets[:-1][keep]
    view = memoryview(blob)
    new_blob = b"".join(view[s : s + n] for s, n in zip(starts.tolist(), lengths.tolist()))
    new_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    return new_blob, new_offsets, counts[keep], int((~keep).sum()), int(counts[~keep].sum())


@dataclass
class DistributedStats:
    """What the cluster did, for the summary line."""

    tasks: int
    pruned_words: int = 0
    pruned_occurrences: int = 0


def count_words_dask(client, sources: list[Source], *, mode: str, options: dict | None = None, errors="strict",
                     min_word_count: int = 0, progress=False, range_size: int | None = None):
    """Count on the cluster behind `client`; return (WordTable, DistributedStats)."""
    if range_size is None:
        known = [s.size() or 0 for s in sources if s.path != "-"]
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        range_size = min(RANGE_SIZE, max(MIN_RANGE, sum(known) // (2 * workers)))
    tasks = pack(plan(sources, range_size=range_size), range_size)
    return run_tasks(client, tasks, mode=mode, options=options or {}, errors=errors, min_word_count=min_word_count,
                     progress=progress)


def run_tasks(client, tasks: list[list[Task]], *, mode: str, options: dict, errors: str, min_word_count: int,
              progress: bool):
    """Count `tasks` on the cluster, reduce the tables as a tree on the workers, fetch the result."""
    from distributed import as_completed

    # pure=False: fresh keys every run, so a file changed since an earlier job is read again.
    futures = [client.submit(count_task, t, mode, options, errors, pure=False) for t in tasks]
    sizes = {f.key: sum((r.end or 0) - r.start for r in t) for f, t in zip(futures, tasks)}
    with Progress(sum(sizes.values()) or None, desc="counting (dask)", unit=" MB", scale=1e-6, enabled=progress) as bar:
        try:
            for fut in as_completed(futures):
                fut.result()  # raise the first failure here, with its message
                bar.update(sizes[fut.key])
        except FileNotFoundError as exc:
            raise TokkitError(str(exc).strip("'\"")) from None
        except ValueError as exc:
            raise TokkitError(str(exc)) from None
    layer = futures  # reduce in plan order so the tree is the same every run
    while len(layer) > 1:  # a tree of additions, FAN_IN tables at a time, on the workers
        layer = [client.submit(merge_tables, *layer[i : i + FAN_IN], min_word_count=min_word_count, pure=False)
                 if len(layer[i : i + FAN_IN]) > 1 else layer[i] for i in range(0, len(layer), FAN_IN)]
    blob, offsets, counts, total, *pruned = layer[0].result()
    if len(tasks) == 1 and min_word_count > 1:
        blob, offsets, counts, n, c = prune(blob, offsets, counts, min_word_count)
        pruned = [n, c]
    stats = DistributedStats(len(tasks), *(pruned or [0, 0]))
    if total == 0:
        raise TokkitError("the corpus is empty (no words in it)")
    return WordTable(blob, offsets, counts, total), stats


def connect(address: str, *, workers: int | None = None, timeout: float = 5.0, echo=print, quiet: bool = False):
    """A dask Client for `address`, or a new LocalCluster for "local" (its dashboard link is printed
    unless `quiet`)."""
    try:
        from distributed import Client
    except ImportError:
        raise TokkitError("--scheduler needs dask: pip install 'tokkit[dask]'") from None
    if address == "local":
        # The client owns this cluster: closing the client shuts the workers down. Its workers and
        # scheduler log only critical events: tokkit reports a failed task itself, in one line.
        # Quiet, the dashboard takes any free port, so a busy 8787 gives no warning either.
        # One worker process per core at most: a local cluster cannot run more at once.
        cores = available_cores()
        client = Client(n_workers=min(workers or cores, cores), threads_per_worker=1, processes=True,
                        silence_logs=logging.CRITICAL, **({"dashboard_address": ":0"} if quiet else {}))
        if not quiet:
            echo(f"tokkit: started a local Dask cluster; dashboard: {client.dashboard_link}")
        return client
    if not re.fullmatch(r"[a-z][a-z0-9+]*://[^\s/:]+(:\d+)?/?|[^\s/:]+:\d+", address):
        raise TokkitError(f"--scheduler {address!r}: expected 'local' or an address such as tcp://host:8786")
    try:
        return Client(address, timeout=f"{timeout}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise TokkitError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None
