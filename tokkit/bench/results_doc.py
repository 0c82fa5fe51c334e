"""benchmarks/RESULTS.md from the results.json files of `tokkit bench` runs (nothing typed by hand).

>>> headline([{"group": "g", "name": "tokkit", "baseline": True, "target": "t >= 2x", "times": [1]},
...           {"group": "g", "name": "x", "baseline": False, "speedup": 2.5, "time_ratio": 0.4, "times": [2.5]}])
['- g: tokkit is 2.50x as fast as x (tokkit/x time 0.40; target t >= 2x)']
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

from tokkit._files import atomic_write
from tokkit.bench.machine import describe
from tokkit.bench.report import markdown_table
from tokkit.quality.compare import compare_table, token_lists


def headline(rows: list[dict]) -> list[str]:
    """One line per measurement: tokkit against the first contender that ran."""
    out, seen = [], set()
    for r in rows:
        g = r["group"]
        if g in seen or r.get("baseline") or "speedup" not in r:
            continue
        seen.add(g)
        base = next((b for b in rows if b["group"] == g and b.get("baseline")), {})
        target = f"; target {base['target']}" if base.get("target") else ""
        out.append(f"- {g}: {base.get('name', 'tokkit')} is {r['speedup']:.2f}x as fast as {r['name']} "
                   f"(tokkit/x time {r['time_ratio']:.2f}{target})")
    return out


def _section(payload: dict, chart_dir: str, level: str = "##") -> list[str]:
    lines = [f"Command: `{payload['command']}`" + (f" (wall time of the whole run: {payload['wall_s'] / 60:.1f} min)"
                                                  if payload.get("wall_s") else ""), ""]
    lines += describe(payload["machine"])
    if payload.get("input"):
        lines.append(f"- Input: {payload['input']}")
    lines.append("")
    for suite in payload["suites"]:
        rows = [r for r in payload["rows"] if r["suite"] == suite]
        lines += [f"{level} {suite}", "", payload.get("descriptions", {}).get(suite, ""), ""]
        if rows:
            lines += [markdown_table(rows), ""]
        for png in payload.get("charts", {}).get(suite, []):
            lines += [f"![{suite}]({chart_dir}/{png})", ""]
    notes = payload.get("notes", [])
    if notes:
        lines += ["Notes from the run:", ""] + [f"- {n}" for n in notes] + [""]
    if payload.get("chart_note"):
        lines += [f"_Charts: {payload['chart_note']}_", ""]
    return lines


def compose(runs: list[tuple[str, dict, str]], *, regenerate: str, quality: tuple[str, dict, str] | None = None) -> str:
    """RESULTS.md from [(title, results.json payload, chart folder relative to RESULTS.md)], plus an
    optional (command, compare.json payload, chart folder) of `tokkit compare`."""
    lines = ["# tokkit benchmark results", "",
             "Every figure below was written by the run that measured it; regenerate this file with:", "",
             f"    {regenerate}", "",
             "Times are wall seconds; `tokkit/x time` below 1 and `tokkit speed-up` above 1 mean tokkit is "
             "faster. Contenders run alternately (a warm-up first), each in its own process, with the same input, "
             "vocab size and thread count.", "", "## Headline ratios", ""]
    for title, payload, _ in runs:
        lines += headline([r for r in payload["rows"] if r["suite"] != "scaling"])
    lines.append("")
    for title, payload, chart_dir in runs:
        lines += [f"## {title}", ""] + _section(payload, chart_dir, level="###")
    if quality:
        command, data, chart_dir = quality
        lines += ["## Vocabulary quality: `tokkit compare --train`", "", f"Command: `{command}`", "",
                  f"Candidates {data['setting']}. Figures as defined in `tokkit/quality/stats.py`.", "",
                  compare_table(data["results"], markdown=True), "", token_lists(data["results"], markdown=True), ""]
        if data.get("chart"):
            lines += [f"![compare]({chart_dir}/{data['chart']})", ""]
    return "\n".join(lines).rstrip() + "\n"


def chart_dir_for(results_md: str, output: str) -> str:
    """The output folder as a path relative to RESULTS.md's folder (for image links)."""
    return os.path.relpath(output, os.path.dirname(os.path.abspath(results_md))).replace(os.sep, "/")


PARTS = ("all", "scaling", "compare")
SCRIPTS_HEADING = "## Per-target scripts"
TITLES = {"all": "Speed and memory: `--suite all`", "scaling": "Scaling: `--suite scaling`"}


def run_commands(*, corpus: str, size: str, scaling_corpus: list[str], scaling_size: str,
                 repeat: str | None = None, output: str = "benchmarks/results") -> dict[str, list[str]]:
    """The `tokkit` arguments of each part of RESULTS.md: part -> argument list (output folder last).

    >>> run_commands(corpus="c", size="1MB", scaling_corpus=["c"], scaling_size="2MB")["compare"]
    ['compare', '--train', 'all', '--vocab-size', '32000', '--size', '1MB', 'c', '-o', 'benchmarks/results/compare']
    """
    runs = {"all": ["bench", "--suite", "all", "--corpus", corpus, "--size", size],
            "scaling": ["bench", "--suite", "scaling", *[x for c in scaling_corpus for x in ("--corpus", c)],
                        "--size", scaling_size],
            "compare": ["compare", "--train", "all", "--vocab-size", "32000", "--size", size, corpus]}
    for name, args in runs.items():
        if repeat and name != "compare":
            args += ["--repeat", str(repeat)]
        args += ["-o", f"{output}/{name}"]
    return runs


def regenerate(root: str, runs: dict[str, list[str]], *, only: str | None = None, results_md: str,
               results_dir: str, regenerate_command: str, log=print) -> str:
    """Run the parts of `runs` (all, or `only` one) from `root`, then write RESULTS.md from every
    part's JSON found in `results_dir` (a part not rerun keeps its earlier results). Returns the path."""
    for name, args in runs.items():
        if only and only != name:
            continue
        cmd = [sys.executable, "-m", "tokkit.cli", *args]
        log("+ " + shlex.join(cmd))
        subprocess.run(cmd, check=True, cwd=root)
        if name == "compare":  # the trained vocabularies are not results: keep the repository small
            shutil.rmtree(os.path.join(results_dir, "compare", "tokenizers"), ignore_errors=True)
    write_results_md(results_md, results_dir, regenerate=regenerate_command,
                     compare_command="tokkit " + shlex.join(runs["compare"]))
    return results_md


def write_results_md(results_md: str, results_dir: str, *, regenerate: str, compare_command: str) -> None:
    """RESULTS.md from results_dir/{all,scaling}/results.json and results_dir/compare/compare.json."""
    parts = []
    for name in ("all", "scaling"):
        path = os.path.join(results_dir, name, "results.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                parts.append((TITLES[name], json.load(f), chart_dir_for(results_md, os.path.dirname(path))))
    quality = None
    path = os.path.join(results_dir, "compare", "compare.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            quality = (compare_command, json.load(f), chart_dir_for(results_md, os.path.dirname(path)))
    text = compose(parts, regenerate=regenerate, quality=quality)
    # The per-script sections below this heading are recorded by hand, each with its command: keep them.
    if os.path.exists(results_md):
        with open(results_md, encoding="utf-8") as f:
            old = f.read()
        at = old.find("\n" + SCRIPTS_HEADING + "\n")
        if at >= 0:
            text += old[at:]
    atomic_write(results_md, text)
