"""Regenerate benchmarks/RESULTS.md: `tokkit bench --suite all`, `--suite scaling` and `tokkit compare --train all`.

    python benchmarks/run_all.py                  # the documented command (needs ../shared/corpus)
    python benchmarks/run_all.py --size 1MB --scaling-size 20MB --repeat 1    # a quick look

Outputs (results.json, results.md, PNG charts) go to benchmarks/results/{all,scaling,compare}/;
RESULTS.md is composed from those JSON files only.
"""
import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tokkit._files import atomic_write
from tokkit.bench.results_doc import chart_dir_for, compose

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # commands run from the repository root, so paths in RESULTS.md read as typed
CORPUS = "../shared/corpus/en"

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--corpus", default=f"{CORPUS}/wiki", help="corpus of the 'all' run (relative to the repo root)")
ap.add_argument("--size", default="10MB")
ap.add_argument("--scaling-corpus", nargs="+", default=[f"{CORPUS}/wiki", f"{CORPUS}/pg"])
ap.add_argument("--scaling-size", default="200MB")
ap.add_argument("--repeat", default=None, help="override every suite's repeat count")
ap.add_argument("--only", choices=["all", "scaling", "compare"], help="rerun one part; the others' results are reused")
args = ap.parse_args()

runs = {"all": ["bench", "--suite", "all", "--corpus", args.corpus, "--size", args.size],
        "scaling": ["bench", "--suite", "scaling", *[x for c in args.scaling_corpus for x in ("--corpus", c)],
                    "--size", args.scaling_size],
        "compare": ["compare", "--train", "all", "--vocab-size", "32000", "--size", args.size, args.corpus]}
for name, opts in runs.items():
    if args.only and args.only != name:
        continue
    cmd = [sys.executable, "-m", "tokkit.cli", *opts, "-o", f"benchmarks/results/{name}"]
    if args.repeat and name != "compare":
        cmd += ["--repeat", args.repeat]
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)
    if name == "compare":  # the trained vocabularies are not results: keep the repository small
        shutil.rmtree(HERE / "results" / "compare" / "tokenizers", ignore_errors=True)

results_md = HERE / "RESULTS.md"
parts = []
for name, title in (("all", "Speed and memory: `--suite all`"), ("scaling", "Scaling: `--suite scaling`")):
    path = HERE / "results" / name / "results.json"
    if path.exists():
        payload = json.loads(path.read_text(encoding="utf-8"))
        parts.append((title, payload, chart_dir_for(str(results_md), str(path.parent))))
quality = None
path = HERE / "results" / "compare" / "compare.json"
if path.exists():
    quality = ("tokkit " + shlex.join(runs["compare"] + ["-o", "benchmarks/results/compare"]),
               json.loads(path.read_text(encoding="utf-8")), chart_dir_for(str(results_md), str(path.parent)))
atomic_write(str(results_md), compose(parts, regenerate="python benchmarks/run_all.py", quality=quality))
print(f"wrote {results_md}", file=sys.stderr)
