"""Load + first batch: tokkit.load(tokenizer.json) and one encode_batch, against tokenizers, fresh processes.

    RAYON_NUM_THREADS=1 PYTHONPATH=. /work/venv-bench/bin/python benchmarks/bench_load.py
    RAYON_NUM_THREADS=1 PYTHONPATH=. /work/venv-bench/bin/python benchmarks/bench_load.py --shape tts --rounds 9
    RAYON_NUM_THREADS=1 PYTHONPATH=. /work/venv-bench/bin/python benchmarks/bench_load.py --file path/tokenizer.json

The shapes are bench_real_shapes.py's (the Hub's layouts, cached in ~/.cache/tokkit-bench/real-shapes;
a shape not cached yet is trained there first, which needs a tokenizers with its training API);
--file adds any tokenizer.json. Each round starts one process per library, tokkit and tokenizers
alternating; a process imports its library, loads the file and encodes lines it never saw once (one
thread; the lines' ids are checked equal first, in this process).

Printed per file: the medians of import, load and first batch for each library, and tokkit's time over
tokenizers' for load + first batch (the target: at most 1.00) and for import + load + first batch.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_real_shapes import SHAPES, VOCAB, bench_lines, check_equal, cold, shape_file


def report(name: str, figures: dict) -> str:
    """One file's lines: each library's medians, then the two ratios."""
    out = [name]
    for library, f in figures.items():
        out.append(f"  {library:10s} import {f['import_s'] * 1e3:7.1f} ms  load {f['load_s'] * 1e3:7.1f} ms  "
                   f"first batch {f['first_s'] * 1e3:7.1f} ms")
    ours, theirs = figures["tokkit"], figures["tokenizers"]
    cold_ours, cold_theirs = ours["load_s"] + ours["first_s"], theirs["load_s"] + theirs["first_s"]
    out.append(f"  load + first batch: tokkit / tokenizers {cold_ours / cold_theirs:.2f}x  (target <= 1.00)")
    out.append(f"  import + load + first batch: tokkit / tokenizers "
               f"{(cold_ours + ours['import_s']) / (cold_theirs + theirs['import_s']):.2f}x")
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=list(SHAPES), action="append", help="(repeatable; default: all)")
    parser.add_argument("--file", type=Path, action="append", default=[], help="a tokenizer.json (repeatable)")
    parser.add_argument("--rounds", type=int, default=7, help="fresh processes per library")
    args = parser.parse_args(argv)
    if os.environ.get("RAYON_NUM_THREADS") != "1":
        parser.error("run with RAYON_NUM_THREADS=1 (tokenizers on one thread)")
    names = args.shape or ([] if args.file else list(SHAPES))
    files = [(name, shape_file(name, VOCAB[name])) for name in names] + [(str(p), p) for p in args.file]
    lines = bench_lines(seed=2)
    with tempfile.TemporaryDirectory() as tmp:
        lines_file = Path(tmp) / "lines.json"
        lines_file.write_text(json.dumps(lines, ensure_ascii=False), encoding="utf-8")
        for name, path in files:
            check_equal(name, path, lines)
            print(report(name, cold(path, lines_file, args.rounds)), flush=True)


if __name__ == "__main__":
    main()
