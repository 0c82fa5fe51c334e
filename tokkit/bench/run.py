"""`tokkit bench` as a function: pick registered suites, slice the corpus, run, write results.json/.md and charts."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

from tokkit._files import atomic_write, prepare_folder
from tokkit.bench import charts
from tokkit.bench.corpus_slice import make_slice
from tokkit.bench.harness import require_psutil
from tokkit.bench.machine import machine_info
from tokkit.bench.registry import SUITES, Inputs, names
from tokkit.bench.report import format_table, suite_markdown, write_json
from tokkit.bench.scaling import scaling_charts
from tokkit.errors import TokkitError


def parse_algos(text: str | None) -> tuple[str, ...] | None:
    """'bytelevel,wordpiece' -> a tuple; None (each suite's default) when not given."""

    if not text:
        return None
    algos = tuple(a.strip() for a in text.split(",") if a.strip())
    bad = [a for a in algos if a not in ("bytelevel", "bpe", "wordpiece")]
    if bad or not algos:
        raise TokkitError(f"--algos: unknown algorithm {', '.join(bad) or text!r} (bytelevel, bpe, wordpiece)")
    return algos


def run_bench(*, suite: str = "all", corpus: list[str] | None = None, size: int | None = None,
              vocab_size: int = 32000, repeat: int | None = None, threads: int = 2, output: str = "tokkit-bench",
              algos: tuple[str, ...] | None = None, command: str = "tokkit bench",
              log=None, echo=print) -> dict:
    """Run the suites of `suite` and write results.json, results.md and charts into `output`."""

    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    started = time.perf_counter()
    require_psutil()
    prepare_folder(output)  # fail before a long run, not after it
    suites = names(suite)
    payload = {"command": command, "suites": list(suites), "machine": machine_info(), "rows": [], "notes": [],
               "descriptions": {s: SUITES[s].description for s in suites}, "charts": {}}
    work = tempfile.mkdtemp(prefix="tokkit-bench-")
    try:
        sl = None
        needs_slice = [SUITES[s] for s in suites if SUITES[s].needs_slice]
        if needs_slice:
            sl = make_slice(list(corpus) if corpus else None, size=size or max(s.slice_size for s in needs_slice),
                            workdir=work)
            what = ", ".join(corpus) if corpus else "the embedded default corpus (CPython's pydoc topics)"
            payload["input"] = f"{sl.mb:.2f} MB line-aligned prefix of {what} ({len(sl.sources)} files)"
            if sl.note:
                payload["notes"].append(sl.note)
                echo(f"note: {sl.note}")
        for name in suites:
            suite = SUITES[name]
            inputs = Inputs(corpus=list(corpus) if corpus else None, size=size, vocab_size=vocab_size,
                            threads=threads, repeat=repeat or suite.repeat, algos=algos, work=work,
                            slice=sl if suite.needs_slice else None, log=log)
            rows, notes = suite.run(inputs)
            payload["rows"] += rows
            payload["notes"] += notes
        _charts(payload, output, charts)
        payload["wall_s"] = time.perf_counter() - started
        write_json(os.path.join(output, "results.json"), payload)
        atomic_write(os.path.join(output, "results.md"), suite_markdown(payload))
        echo(format_table(payload["rows"]))
        for note in payload["notes"]:
            echo(f"note: {note}")
        echo(f"wrote {os.path.join(output, 'results.json')}, results.md and "
             f"{sum(len(v) for v in payload['charts'].values())} charts")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return payload


def _charts(payload: dict, output: str, charts) -> None:
    if not charts.have_matplotlib():
        payload["chart_note"] = charts.missing_note()
        return
    for suite in payload["suites"]:
        rows = [r for r in payload["rows"] if r["suite"] == suite]
        if suite == "scaling":
            paths = scaling_charts(rows, output)
        else:
            p = charts.bar_chart(rows, os.path.join(output, f"{suite}.png"), title=f"tokkit bench: {suite}")
            paths = [p] if p else []
        payload["charts"][suite] = [os.path.basename(p) for p in paths]
