"""Hostile inputs at doubling sizes: time should double with the size and memory stay flat.

    python benchmarks/bench_hostile.py                    # 16, 32, 64 MiB of each case
    python benchmarks/bench_hostile.py --sizes 8 16 32 64 --cases spaces cyrillic

Cases (each one file of that many MiB):
  spaces    one line of ASCII spaces (no place both pre-tokenizers split at)
  nul       one line of NUL bytes
  cyrillic  one line of Cyrillic words separated by spaces (no ASCII letter before a space)
  chinese   one line of Chinese with punctuation and no spaces
  lines     ordinary English lines (the baseline)
  stdin     one long line through `tokkit encode`'s line reader (read_lines), which holds the
            line: its memory grows with the line up to --max-line-bytes, its time must stay linear

Each measurement runs in a fresh process: the reader (`tokkit.text.corpus.iter_chunks`) and the
training word count (`tokkit.text.count.count_words`, GPT-2 and BERT modes, 1 thread). Prints
seconds and peak RSS per size, and the ratio of each time to the time at half the size (about 2
when linear; quadratic reading shows 4).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

MiB = 1 << 20

PATTERNS = {
    "spaces": b" " * 4096,
    "nul": b"\x00" * 4096,
    "cyrillic": ("съешь же ещё этих мягких французских булок, да выпей чаю " * 40).encode(),
    "chinese": ("我们的语料库里有很多中文句子，没有空格。" * 60).encode(),
    "lines": b"The quick brown fox jumps over the lazy dog, then it sleeps.\n" * 64,
    "stdin": ("one long line of words " * 160).encode(),
}

CHILD = r"""
import json, resource, sys, time
from tokkit._progress import Progress
from tokkit.cli.encode import read_lines
from tokkit.text.corpus import Source, iter_chunks
from tokkit.text.count import count_words
path, case, what = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()  # imports are not timed
if what == "chunks":
    with open(path, "rb") as f:
        n = sum(1 for _ in iter_chunks(f))
elif what == "read_lines":
    with Progress(enabled=False) as bar:
        n = sum(len(line) for _, line in read_lines([path], bar))
else:
    try:
        n = len(count_words([Source(path)], mode=what, options={}, workers=1))
    except Exception as exc:  # an all-NUL or all-space text has no BERT words
        n = repr(exc)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "n": n}))
"""


def make_file(folder: str, case: str, mib: int) -> str:
    path = os.path.join(folder, f"{case}-{mib}.txt")
    pattern = PATTERNS[case]
    size = mib * MiB
    with open(path, "wb") as f:
        written = 0
        while written < size:
            piece = pattern[: size - written]
            f.write(piece)
            written += len(piece)
        if case != "lines":
            f.write(b"\n")
    return path


def measure(path: str, case: str, what: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, path, case, what], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64], help="MiB per file, doubling")
    parser.add_argument("--cases", nargs="+", default=list(PATTERNS), choices=list(PATTERNS))
    args = parser.parse_args(argv)
    print(f"{'case':9} {'measure':10} " + " ".join(f"{s:>5} MiB: s / RSS MiB / x" for s in args.sizes))
    with tempfile.TemporaryDirectory() as folder:
        for case in args.cases:
            paths = {s: make_file(folder, case, s) for s in args.sizes}
            measures = ["read_lines"] if case == "stdin" else ["chunks", "gpt2", "bert"]
            for what in measures:
                cells, last = [], None
                for s in args.sizes:
                    r = measure(paths[s], case, what)
                    ratio = f"{r['seconds'] / last:.2f}" if last else "-"
                    last = r["seconds"]
                    cells.append(f"{r['seconds']:7.2f} / {r['rss_mib']:6.0f} / {ratio:>4}")
                print(f"{case:9} {what:10} " + "  ".join(cells), flush=True)
            for p in paths.values():
                os.unlink(p)


if __name__ == "__main__":
    main()
