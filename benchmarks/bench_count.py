"""Word counting speed: tokkit's WordCounter on N threads vs regex.findall + Counter (and tokenizers' BERT).

    python benchmarks/bench_count.py                 # 100 MB of ../shared/corpus/en/wiki, 2 threads
    python benchmarks/bench_count.py --mb 10 --repeat 3

tokkit: one WordCounter per thread, each counting alternate ~4 MB chunks that end at a line end,
then `update` and `to_arrays`. Reference (one thread, same bytes): gpt2 = regex.findall per line +
collections.Counter; bert = tokenizers' BertNormalizer + BertPreTokenizer per line + Counter
(on --check-mb only: it is slow). The counts are checked for equality on the first --check-mb MB.
Prints wall and CPU times (median of --repeat; CPU time summed over threads, a load-independent
figure on a shared machine), MB/s and the ratio reference / tokkit.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import regex

from tokkit._native.counting import WordCounter
from tokkit.text.pretokenize import GPT2_PATTERN

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki"


def load(corpus: Path, mb: float) -> bytes:
    out, size = [], 0
    for path in sorted(corpus.glob("*.txt")):
        data = path.read_bytes()
        out.append(data if data.endswith(b"\n") else data + b"\n")
        size += len(out[-1])
        if size >= mb * 1e6:
            break
    data = b"".join(out)[: int(mb * 1e6)]
    return data[: data.rfind(b"\n") + 1]


def chunks(data: bytes, size: int = 4_000_000) -> list[bytes]:
    out, a = [], 0
    while a < len(data):
        b = data.find(b"\n", a + size)
        b = len(data) if b < 0 else b + 1
        out.append(data[a:b])
        a = b
    return out


def tokkit_count(parts: list[bytes], mode: str, threads: int) -> tuple[WordCounter, float, float]:
    """Count on `threads` threads; returns the merged counter, wall seconds and CPU seconds (all threads).

    gpt2 uses the `regex` package's Unicode classes so the counts compare with regex.findall.
    """
    t, cpu = time.perf_counter(), time.process_time()
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
    return counters[0], time.perf_counter() - t, time.process_time() - cpu


def lines(text: str):
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def reference(data: bytes, mode: str) -> Counter:
    text = data.decode("utf-8")
    if mode == "gpt2":
        findall = regex.compile(GPT2_PATTERN).findall
        counts = Counter()
        for line in lines(text):
            counts.update(findall(line))
        return counts
    from tokenizers import normalizers, pre_tokenizers

    norm, pre = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    counts = Counter()
    for line in lines(text):
        counts.update(p for p, _ in pre.pre_tokenize_str(norm.normalize_str(line)))
    return counts


def as_counter(counter: WordCounter) -> Counter:
    blob, offsets, counts = counter.to_arrays()
    return Counter({blob[offsets[i]:offsets[i + 1]].decode(): int(counts[i]) for i in range(len(counts))})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--check-mb", type=float, default=4)
    ap.add_argument("--modes", default="gpt2,bert")
    ap.add_argument("--no-reference", action="store_true", help="skip the slow full-size gpt2 reference timing")
    args = ap.parse_args()

    data = load(args.corpus, args.mb)
    parts = chunks(data)
    check = load(args.corpus, args.check_mb)
    mb = len(data) / 1e6
    print(f"corpus: {args.corpus} {mb:.1f} MB, {len(parts)} chunks, {args.threads} threads")
    for mode in args.modes.split(","):
        ok = as_counter(tokkit_count(chunks(check, 1_000_000), mode, args.threads)[0]) == reference(check, mode)
        print(f"[{mode}] counts identical to the reference on {len(check) / 1e6:.1f} MB: {ok}")
        tokkit_count(parts[:1], mode, args.threads)  # warm-up
        times, cpus, counter = [], [], None
        for _ in range(args.repeat):
            counter, seconds, cpu = tokkit_count(parts, mode, args.threads)
            times.append(seconds)
            cpus.append(cpu)
        tk, cpu = statistics.median(times), statistics.median(cpus)
        print(f"[{mode}] tokkit WordCounter: {tk:.2f} s wall ({mb / tk:.1f} MB/s), {cpu:.2f} s CPU "
              f"({mb / cpu:.1f} MB/s per core), {len(counter):,} distinct, "
              f"{counter.total:,} words, table {counter.nbytes / 1e6:.0f} MB")
        if mode == "gpt2" and not args.no_reference:
            t = time.perf_counter()
            reference(data, mode)
            ref = time.perf_counter() - t
            print(f"[{mode}] regex.findall + Counter (1 thread, same bytes): {ref:.2f} s; ratio {ref / tk:.1f}x")
        elif mode == "bert":
            t = time.perf_counter()
            reference(check, mode)
            ref = (time.perf_counter() - t) * len(data) / len(check)
            print(f"[{mode}] tokenizers normalize_str + pre_tokenize_str + Counter (1 thread), extrapolated "
                  f"from {len(check) / 1e6:.1f} MB: {ref:.1f} s; ratio {ref / tk:.1f}x")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:.0f} MB")


if __name__ == "__main__":
    main()
