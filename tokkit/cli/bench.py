"""`tokkit bench`: tokkit and the installed contenders side by side (speed, memory, scaling)."""
from __future__ import annotations

import shlex

import click

from tokkit._files import check_output_not_input
from tokkit._threads import available_cores
from tokkit.bench.registry import SUITES, choices, listing, names
from tokkit.bench.run import parse_algos, run_bench
from tokkit.errors import TokkitError
from tokkit.text.corpus import parse_size
from tokkit.train import MAX_VOCAB_SIZE


@click.command("bench")
@click.option("--suite", type=click.Choice(choices()), default="all", show_default=True,
              help="What to measure (see --list); 'all' is " + "+".join(names("all")) + ", the others run alone.")
@click.option("--list", "list_suites", is_flag=True,
              help="List the suites: what each measures, its contenders, what it checks before timing.")
@click.option("--corpus", "corpus", multiple=True, metavar="PATH",
              help="Corpus file, directory or glob (repeatable). Default: the embedded corpus. "
                   "hub, patterns: the shared corpus folder (en/wiki, multilingual), default ../shared/corpus.")
@click.option("--size", default=None, metavar="SIZE",
              help="Take a line-aligned prefix of this size, e.g. 10MB (default 10MB; scaling: 200MB, "
                   "its largest point; hub: 2.6MB of lines; patterns: 10MB).")
@click.option("--vocab-size", type=click.IntRange(1, MAX_VOCAB_SIZE), default=32000, show_default=True, metavar="N")
@click.option("--repeat", type=click.IntRange(1), default=None, metavar="N",
              help="Timed runs per contender after the warm-up (default: "
                   + ", ".join(f"{s.name} {s.repeat}" for s in SUITES.values()) + "; bert counts steps).")
@click.option("--threads", type=click.IntRange(1), default=None, metavar="N",
              help="Threads for every multi-threaded contender, at most the cores (default: 2, or 1 on one core).")
@click.option("--algos", default=None, metavar="LIST",
              help="Trainers to measure, comma-separated (train suite default: bytelevel,bpe,wordpiece; "
                   "scaling default: bytelevel,wordpiece).")
@click.option("-o", "--output", default="tokkit-bench", show_default=True, metavar="DIR",
              help="Folder for results.json, results.md and the PNG charts.")
@click.option("-q", "--quiet", is_flag=True, help="No per-run progress lines on stderr.")
def command(suite, list_suites, corpus, size, vocab_size, repeat, threads, algos, output, quiet):
    """Benchmark tokkit against tokenizers, tiktoken, sentencepiece, bpeasy and transformers.

    Every contender runs on the same input with the same vocab size and thread count, alternating,
    a warm-up first; the table gives min/median/max, throughput, peak RSS and tokkit/contender
    ratios. Missing contenders are skipped with a note.
    """
    if list_suites:
        click.echo(listing())
        return

    cores = available_cores()
    if threads is not None and threads > cores:
        raise TokkitError(f"--threads {threads} is more than the {cores} cores this process may use; "
                          "a benchmark with more threads than cores measures the scheduler")
    threads = threads or min(2, cores)
    size_bytes, algo_list = parse_size(size), parse_algos(algos)
    check_output_not_input(output, corpus)  # the results folder may not be, hold or lie inside a corpus path
    log = (lambda m: None) if quiet else (lambda m: click.echo(m, err=True))
    parts = ["tokkit", "bench", "--suite", suite] + [x for c in corpus for x in ("--corpus", c)]
    parts += (["--size", size] if size else []) + ["--vocab-size", str(vocab_size)]
    parts += (["--repeat", str(repeat)] if repeat else []) + (["--algos", algos] if algos else [])
    parts += ["--threads", str(threads), "-o", output]
    run_bench(suite=suite, corpus=list(corpus) or None, size=size_bytes, vocab_size=vocab_size,
              repeat=repeat, threads=threads, output=output, algos=algo_list, command=shlex.join(parts),
              log=log, echo=click.echo)
