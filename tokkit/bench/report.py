"""Benchmark rows, and the three ways they are shown: a terminal table, results.json, results.md.

A row is a plain dict: suite, group (one measurement, e.g. "wordpiece encode_batch, 2 threads"),
name (contender), baseline (True for tokkit's row of the group), times (s), min/median/max,
peak_rss_mb, and when the work is known: work (MB, sequences, tokens per run), unit ("MB/s"...),
throughput (and cpu_throughput, work per median CPU second, for in-process tasks). Every other
row of a group carries `time_ratio` (tokkit median / its median: below 1 means tokkit is faster)
and `speedup` (its median / tokkit median: tokkit's speed over its). When contenders do different
amounts of work (`work` given per contender, e.g. a slow reference timed on a prefix only), the
ratios compare seconds per unit of work.

>>> from tokkit.bench.harness import Result
>>> rows = group_rows("demo", "g", {"tokkit": Result("tokkit", [1.0, 2.0, 3.0]),
...                                 "other": Result("other", [4.0])}, baseline="tokkit", work=8, unit="MB/s")
>>> rows[1]["speedup"], rows[1]["time_ratio"], rows[0]["throughput"]
(2.0, 0.5, 4.0)
>>> rows = group_rows("demo", "g", {"tokkit": Result("tokkit", [2.0]), "slow": Result("slow", [3.0])},
...                   baseline="tokkit", work={"tokkit": 100, "slow": 10}, unit="MB/s")
>>> rows[1]["speedup"], rows[1]["throughput"]
(15.0, 3.3333333333333335)
"""
from __future__ import annotations

import json
import math
import os

from tokkit._files import atomic_write
from tokkit.bench.machine import describe


def group_rows(suite: str, group: str, results: dict, *, baseline: str, work: float | dict | None = None,
               unit: str | None = None, notes: dict | None = None, target: str | None = None,
               extra: dict | None = None, remarks: dict | None = None) -> list[dict]:
    """Rows for one measurement: the baseline (tokkit) first, then the contenders, then skipped ones.

    `notes` name contenders that did not run (and why); `remarks` annotate contenders that did.
    `work` is one amount for all, or {contender: amount}.
    """
    base = results.get(baseline)
    works = work if isinstance(work, dict) else {name: work for name in results}
    per_work = isinstance(work, dict)  # one amount for all: plain ratios of medians
    base_per = _per_work(base, works.get(baseline) if per_work else None) if base is not None else None
    rows = []
    ordered = [baseline] + [n for n in results if n != baseline] if base is not None else list(results)
    for name in ordered:
        res = results[name]
        row = {"suite": suite, "group": group, "baseline": name == baseline, **res.as_dict(), **(extra or {})}
        if remarks and name in remarks and not row.get("note"):
            row["note"] = remarks[name]
        if target and name == baseline:
            row["target"] = target
        amount = works.get(name)
        if res.times and amount:
            row.update(work=amount, unit=unit, throughput=amount / res.median)
            if res.cpu_times:
                row["cpu_throughput"] = amount / res.cpu_median
        if name != baseline and res.times and base is not None and base.times:
            per = _per_work(res, amount if per_work else None)
            row["time_ratio"] = base_per / per
            row["speedup"] = per / base_per
        rows.append(row)
    for name, note in (notes or {}).items():
        rows.append({"suite": suite, "group": group, "baseline": False, "name": name, "times": [], "note": note,
                     **(extra or {})})
    return rows


def _per_work(res, amount) -> float:
    """Median seconds per unit of work (the plain median when the work is not known)."""
    return res.median / amount if amount else res.median


def _num(x, fmt):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _seconds(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.3g}" if x < 1 else f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _cells(r: dict) -> list[str]:
    if not r.get("times"):
        return [r["group"], r["name"], "", "", "", "", "", "", "", r.get("note", "")]
    tp = f"{r['throughput']:,.1f} {r['unit']}" if r.get("throughput") is not None else ""
    ratio = f"{r['time_ratio']:.2f}" if "time_ratio" in r else ""
    speed = f"{r['speedup']:.2f}x" if "speedup" in r else ""
    note = "; ".join(x for x in (r.get("note", ""), f"target {r['target']}" if r.get("target") else "") if x)
    return [r["group"], r["name"], _seconds(r["min"]), _seconds(r["median"]), _seconds(r["max"]), tp,
            _num(r.get("peak_rss_mb"), ".0f"), ratio, speed, note]


HEADER = ["measurement", "contender", "min s", "median s", "max s", "throughput", "peak RSS MB",
          "tokkit/x time", "tokkit speed-up", "note"]


def format_table(rows: list[dict]) -> str:
    """A plain-text table for the terminal."""
    cells = [HEADER] + [_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER) - 1)]
    lines = []
    for k, c in enumerate(cells):
        lines.append("  ".join(c[i].ljust(widths[i]) if i < 2 else c[i].rjust(widths[i])
                               for i in range(len(widths))) + "  " + c[-1])
        if k == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(line.rstrip() for line in lines)


def markdown_table(rows: list[dict]) -> str:
    """The same table in Markdown; a group's name is written once."""
    out = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" if i < 2 or i == 9 else "---:"
                                                          for i in range(len(HEADER))) + "|"]
    last = None
    for r in rows:
        c = _cells(r)
        if c[0] == last:
            c[0] = ""
        else:
            last = c[0]
        if r.get("baseline"):
            c[1] = f"**{c[1]}**"
        out.append("| " + " | ".join(x.replace("|", "\\|") for x in c) + " |")
    return "\n".join(out)



def _clean(obj):
    """JSON has no NaN: write null instead."""
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_json(path: str, payload: dict) -> None:
    atomic_write(path, json.dumps(_clean(payload), indent=1, sort_keys=False) + "\n")


def suite_markdown(payload: dict, *, chart_prefix: str = "") -> str:
    """results.md: the command, machine, input, notes, then one table (and its charts) per suite."""

    lines = [f"# tokkit bench: {', '.join(payload['suites'])}", "", f"Command: `{payload['command']}`", ""]
    lines += describe(payload["machine"])
    if payload.get("input"):
        lines.append(f"- Input: {payload['input']}")
    lines += [f"- Note: {n}" for n in payload.get("notes", [])]
    lines += ["", "Times are wall seconds per run, measured alternately after a warm-up; "
              "`tokkit/x time` below 1 and `tokkit speed-up` above 1 mean tokkit is faster.", ""]
    for suite in payload["suites"]:
        rows = [r for r in payload["rows"] if r["suite"] == suite]
        lines += [f"## {suite}", ""]
        desc = payload.get("descriptions", {}).get(suite)
        if desc:
            lines += [desc, ""]
        if rows:
            lines += [markdown_table(rows), ""]
        for png in payload.get("charts", {}).get(suite, []):
            lines += [f"![{suite}]({chart_prefix}{os.path.basename(png)})", ""]
    if payload.get("chart_note"):
        lines += [f"_Charts: {payload['chart_note']}_", ""]
    return "\n".join(lines)
