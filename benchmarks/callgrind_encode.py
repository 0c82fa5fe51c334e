"""Instructions one `encode_batch_flat` call costs, counted by callgrind: a figure a busy machine
does not move, for comparing two builds (two checkouts) of the compiled encoders.

Each checkout runs one child under `valgrind --tool=callgrind` that loads the tokenizer, encodes 50
lines (tables built) and then every line of TEXT on one thread; callgrind counts only inside the
encoders' flat-batch entry points (FlatJob.work on the fast paths, PipelineEncoder.encode_flat on
the general path), so imports and loading add nothing, and PYTHONHASHSEED is fixed: the count is
the same from one run to the next.

    python benchmarks/callgrind_encode.py --tokenizer tokenizer.json --text lines.txt CHECKOUT [CHECKOUT ...]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

CHILD = """
import sys
import tokkit
tok = tokkit.load(sys.argv[1])
lines = open(sys.argv[2], encoding="utf-8").read().splitlines()
tok.encode_batch_flat(lines[:50], num_threads=1)
tok.encode_batch_flat(lines, num_threads=1)
"""
ENTRY_POINTS = ("--toggle-collect=__pyx_pw_6tokkit_7_native_6encode_7FlatJob_1work*",
                "--toggle-collect=__pyx_pw_6tokkit_7_native_8pipeline_15PipelineEncoder_*encode_flat*")


def instructions(checkout: str, tokenizer: str, text: str) -> int:
    """Instructions callgrind collected inside the encode calls of the child on `checkout`'s tokkit."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": checkout, "PYTHONHASHSEED": "0"}  # the same dict layouts each run
        res = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                              "--collect-atstart=no", *ENTRY_POINTS, sys.executable, "-c", CHILD, tokenizer, text],
                             env=env, cwd=tmp, capture_output=True, text=True, check=True)  # cwd: `python -c` imports from it first
    return int(re.search(r"Collected : ([\d,]+)", res.stderr).group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("checkouts", nargs="+")
    args = ap.parse_args()
    for checkout in args.checkouts:
        print(f"{checkout}\t{instructions(checkout, args.tokenizer, args.text) / 1e6:.2f}M instructions")


if __name__ == "__main__":
    main()
