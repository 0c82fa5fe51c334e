"""WordPiece lines to flat ids: tokkit against nanotoken and the newest tokenizers, 1 and 2 threads.

The tokenizer is bert-base-uncased's shape (BertNormalizer lowercasing, BertPreTokenizer, WordPiece
with "##", 30,522 tokens, the [CLS] $A [SEP] post-processor), trained by `tokenizers` (0.x, run by
--train-python) on the corpus as the Hub's files were made, and cached with the lines in ~/.cache/tokkit-bench/wordpiece-frontier. Every
contender's ids are checked equal to tokkit's on every line before any timing; then the contenders run
in turn in this one process (tokkit `encode_batch_flat`, nanotoken `encode_batch` (flat ids + row
offsets), tokenizers `encode_batch`; no template specials), `--rounds` times per thread count, and the
medians are printed in MB/s of the lines' UTF-8 with tokkit's ratios against the targets.

Run it in an environment that holds the contenders, with tokkit on the path:

    PYTHONPATH=. VENV/bin/python benchmarks/bench_wordpiece_frontier.py --train-python OTHER_VENV/bin/python

Both Rust contenders size their thread pools from RAYON_NUM_THREADS (set here to the largest thread
count before they load); their one-thread runs are nanotoken's `parallel=False` and tokenizers with
TOKENIZERS_PARALLELISM=false.
"""
from __future__ import annotations

import argparse
import glob
import importlib.metadata
import os
import sys
from pathlib import Path

import numpy as np

from tokkit._files import atomic_write
from tokkit.bench.encode_suite import train_with_tokenizers
from tokkit.bench.contenders import split_installed
from tokkit.bench.encode_tasks import input_mb, lines_of, nanotoken_flat, read_text, tokenizers_encode, tokkit_flat
from tokkit.bench.timing import medians, ratio_line, time_calls

CACHE = Path.home() / ".cache" / "tokkit-bench" / "wordpiece-frontier"
CORPUS = str(Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki")  # ../shared beside the repo
TRAINER = sys.executable  # an interpreter whose tokenizers can train (tokenizers < 1.0): --train-python
IDLE_S = 0.2  # pause before each timed call: on 2 cores a spinning idle pool thread takes half the machine
TARGETS = {"nanotoken": 1.0, "tokenizers": 1.5}  # tokkit's speed over each, at least


def corpus_files(corpus: str) -> list[str]:
    """The corpus's .txt files in name order (the lines and the training text both read them)."""
    files = sorted(glob.glob(os.path.join(corpus, "*.txt")))
    if not files:
        raise SystemExit(f"{corpus}: no .txt files")
    return files


def build_tokenizer(folder: Path, files: list[str], vocab_size: int, python: str) -> str:
    """A bert-base-uncased-shaped tokenizer.json trained by the tokenizers of `python` on `files` (kept
    once made): tokenizers 1.0 reads and encodes but no longer trains."""
    if not (folder / "tokenizer.json").exists():
        train_with_tokenizers(files, "wordpiece", vocab_size, str(folder), python=python)
    return str(folder)


def take_lines(folder: Path, files: list[str], megabytes: float) -> str:
    """A file of the corpus's first non-empty lines, `megabytes` of UTF-8 or just over (kept once made)."""
    path = folder / f"lines-{megabytes:g}MB.txt"
    if path.exists():
        return str(path)
    lines, size = [], 0
    for name in files:
        for line in Path(name).read_text(encoding="utf-8").split("\n"):
            if line and size < megabytes * 1e6:
                lines.append(line)
                size += len(line.encode("utf-8")) + 1
    atomic_write(path, "\n".join(lines) + "\n")
    return str(path)


def flat(result) -> tuple[np.ndarray, np.ndarray]:
    """(ids, row offsets) of any contender's answer: a pair of arrays, nanotoken's RaggedIds, Encodings."""
    if isinstance(result, tuple):
        return np.asarray(result[0], dtype=np.int64), np.asarray(result[1], dtype=np.int64)
    if hasattr(result, "offsets"):
        return result.ids.astype(np.int64), result.offsets.astype(np.int64)
    rows = [e.ids for e in result]
    offsets = np.cumsum([0] + [len(r) for r in rows])
    return np.fromiter((i for r in rows for i in r), dtype=np.int64, count=int(offsets[-1])), offsets


def check_same(name: str, got, want, lines: list[str]) -> None:
    """Stop with the first line whose ids differ from tokkit's."""
    (gi, go), (wi, wo) = flat(got), flat(want)
    if np.array_equal(go, wo) and np.array_equal(gi, wi):
        return
    for r, line in enumerate(lines):
        a, b = gi[go[r]:go[r + 1]], wi[wo[r]:wo[r + 1]]
        if not np.array_equal(a, b):
            raise SystemExit(f"{name} differs from tokkit on line {r}: {line[:120]!r}\n  {name}: {a[:40].tolist()}"
                             f"\n  tokkit: {b[:40].tolist()}")
    raise SystemExit(f"{name}: the rows differ from tokkit's in number")


def one_thread(name: str, work):
    """`work` on one thread: tokenizers reads TOKENIZERS_PARALLELISM at each call."""
    if not name.startswith("tokenizers"):
        return work

    def run():
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        try:
            return work()
        finally:
            del os.environ["TOKENIZERS_PARALLELISM"]
    return run


def contenders(vocab: str, text: str, threads: int) -> dict:
    """name -> zero-argument call encoding the lines on `threads` threads."""
    builders = {"tokkit": (None, lambda: tokkit_flat(vocab, text, threads=threads)),
                "nanotoken": ("nanotoken", lambda: nanotoken_flat(vocab, text, threads=threads)),
                "tokenizers": ("tokenizers", lambda: tokenizers_encode(vocab, text, mode="lines"))}
    runnable, _ = split_installed(builders, log=print)
    works = {_label(name): make() for name, (make,) in runnable.items()}
    return {name: one_thread(name, w) if threads == 1 else w for name, w in works.items()}


def _label(name: str) -> str:
    """tokenizers' row names its version: the frontier moves with it."""
    return f"tokenizers {importlib.metadata.version('tokenizers')}" if name == "tokenizers" else name


def report(threads: int, medians_s: dict[str, float], mb: float) -> None:
    print(f"\n{threads} thread{'s' * (threads > 1)}: {mb:.1f} MB of lines")
    for name, sec in medians_s.items():
        target = next((t for key, t in TARGETS.items() if name.startswith(key)), None)
        print(ratio_line(name, sec, medians_s["tokkit"], work=mb, unit="MB/s", target=target))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--megabytes", type=float, default=10.0)
    ap.add_argument("--vocab-size", type=int, default=30522)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--train-python", default=TRAINER, help="the interpreter that trains the tokenizer")
    args = ap.parse_args()
    os.environ.setdefault("RAYON_NUM_THREADS", str(max(args.threads)))
    files = corpus_files(args.corpus)
    vocab = build_tokenizer(CACHE / f"bert-uncased-{args.vocab_size}", files, args.vocab_size, args.train_python)
    text = take_lines(CACHE, files, args.megabytes)
    lines, mb = lines_of(read_text(text)), input_mb(text)
    for threads in args.threads:
        works = contenders(vocab, text, threads)
        want = works["tokkit"]()
        for name, work in works.items():
            if name != "tokkit":
                check_same(name, work(), want, lines)
        # the previous contender's idle pool threads stop spinning before each run
        report(threads, medians(time_calls(works, rounds=args.rounds, pause=IDLE_S)), mb)


if __name__ == "__main__":
    main()
