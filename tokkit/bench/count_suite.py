"""Word counting speed: tokkit's WordCounter on N threads against a one-thread Python reference.

The measurement of benchmarks/bench_count.py. tokkit: one WordCounter per thread, each counting
alternate ~4 MB chunks that end at a line end, then `update` and `to_arrays`. References (one
thread): gpt2 = `regex.findall` of the GPT-2 pattern per line + collections.Counter, on the same
bytes; bert = tokenizers' BertNormalizer + BertPreTokenizer per line + Counter, on a prefix only
(it is slow), so its figures are per MB and its time for the whole input is extrapolated.

Each contender runs in its own worker process; one warm-up round, then the rounds alternate.
The counts of both are checked for equality on a prefix first, outside any timing.

>>> chunks(b"a\\nbb\\nccc\\n", size=2)
[b'a\\nbb\\n', b'ccc\\n']
>>> lines("x\\ny\\nz")
['x\\n', 'y\\n', 'z']
"""
from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import regex

from tokkit._native.counting import WordCounter
from tokkit.bench.contenders import skip_note
from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows
from tokkit.text.pretokenize import GPT2_PATTERN

CHUNK = 4_000_000
REFERENCES = {"gpt2": "regex.findall + Counter", "bert": "tokenizers BertNormalizer + BertPreTokenizer + Counter"}


def chunks(data: bytes, size: int = CHUNK) -> list[bytes]:
    """`data` cut into pieces of about `size` bytes that end at a line end."""
    out, a = [], 0
    while a < len(data):
        b = data.find(b"\n", a + size)
        b = len(data) if b < 0 else b + 1
        out.append(data[a:b])
        a = b
    return out


def lines(text: str) -> list[str]:
    """The lines of `text`, each with its newline (the last one may have none)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def count_tokkit(parts: list[bytes], mode: str, threads: int) -> WordCounter:
    """Count on `threads` threads, each into its own WordCounter; return the merged one.

    gpt2 uses the `regex` package's Unicode classes so the counts compare with regex.findall.
    """
    options = {"gpt2_classes": "regex"} if mode == "gpt2" else {}
    counters = [WordCounter(mode, **options) for _ in range(threads)]

    def work(k):
        for part in parts[k::threads]:
            counters[k].count(part)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))
    for other in counters[1:]:
        counters[0].update(other)
    counters[0].to_arrays()
    return counters[0]


def count_reference(data: bytes, mode: str) -> Counter:
    """The one-thread Python count of `mode` ("gpt2" or "bert")."""
    text = data.decode("utf-8")
    counts = Counter()
    if mode == "gpt2":
        findall = regex.compile(GPT2_PATTERN).findall
        for line in lines(text):
            counts.update(findall(line))
        return counts
    from tokenizers import normalizers, pre_tokenizers

    norm, pre = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    for line in lines(text):
        counts.update(p for p, _ in pre.pre_tokenize_str(norm.normalize_str(line)))
    return counts


def as_counter(counter: WordCounter) -> Counter:
    """A WordCounter's table as a collections.Counter of str."""
    blob, offsets, counts = counter.to_arrays()
    return Counter({blob[offsets[i]:offsets[i + 1]].decode(): int(counts[i]) for i in range(len(counts))})


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def counts_match(path: str, mode: str, threads: int = 2) -> bool:
    """Whether tokkit (1 MB chunks, `threads` threads) and the reference count the file alike."""
    data = _read(path)
    return as_counter(count_tokkit(chunks(data, 1_000_000), mode, threads)) == count_reference(data, mode)


def tokkit_task(path: str, mode: str, threads: int = 2):
    """Count the file's ~4 MB chunks on `threads` threads; the summary describes the table."""
    parts = chunks(_read(path))
    last = {}

    def run():
        last["counter"] = count_tokkit(parts, mode, threads)

    def summary():
        c = last["counter"]
        return {"chunks": len(parts), "distinct": len(c), "words": int(c.total), "table_mb": c.nbytes / 1e6}
    run.summary = summary
    return run


def reference_task(path: str, mode: str):
    """The one-thread reference count of the whole file."""
    data = _read(path)
    return lambda: count_reference(data, mode)


def run_count_suite(path: str, mb: float, *, check_path: str, check_mb: float, modes=("gpt2", "bert"),
                    threads: int = 2, repeat: int = 3, reference: bool = True, log=print) -> tuple[list[dict], dict]:
    """Rows of one group per mode (tokkit first) and {mode: counts identical on the check prefix, or
    None when the reference is not installed}.

    `path` holds the input (`mb` MB), `check_path` a prefix of it (`check_mb` MB). The gpt2
    reference counts the whole input (unless `reference` is false); the bert one counts the prefix,
    and its row carries `extrapolated_s`, its time at the input's size.
    """
    C = "tokkit.bench.count_suite:"
    rows, checks = [], {}
    for mode in modes:
        ref = REFERENCES[mode]
        tasks = {"tokkit": (C + "tokkit_task", {"path": path, "mode": mode, "threads": threads})}
        work, notes = {"tokkit": mb}, {}
        if mode == "bert" and skip_note("tokenizers"):
            notes[ref] = skip_note("tokenizers")
            checks[mode] = None
        else:
            checks[mode] = counts_match(check_path, mode, threads)
            log(f"count {mode}: counts identical on {check_mb:.1f} MB: {checks[mode]}")
            if mode == "bert":
                tasks[ref] = (C + "reference_task", {"path": check_path, "mode": mode})
                work[ref] = check_mb
            elif reference:
                tasks[ref] = (C + "reference_task", {"path": path, "mode": mode})
                work[ref] = mb
        results = measure_tasks(tasks, repeat=repeat, warmup=1, log=log)
        group = f"{mode} word counting, tokkit on {threads} threads, reference on 1"
        mode_rows = group_rows("count", group, results, baseline="tokkit", work=work, unit="MB/s", notes=notes,
                               extra={"mode": mode})
        for row in mode_rows:
            if row.get("work") and row["work"] != mb:
                row["extrapolated_s"] = mb / row["throughput"]
        rows += mode_rows
    return rows, checks
