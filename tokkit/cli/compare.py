"""`tokkit compare`: several vocabularies' quality figures side by side, as a table and a chart."""
from __future__ import annotations

import json
import os

import click

from tokkit._files import atomic_write, check_output_not_input, prepare_folder
from tokkit.cli.paths import tokenizer_inputs
from tokkit.cli.stats import load_tokenizer
from tokkit.errors import TokkitError
from tokkit.quality.compare import (
    compare_chart,
    check_heldout,
    compare_table,
    parse_candidates,
    split_heldout,
    token_lists,
    train_candidates,
)
from tokkit.quality.stats import corpus_stats
from tokkit.text.corpus import parse_size, read_lines
from tokkit.train import MAX_COUNT, MAX_VOCAB_SIZE


def _names(paths: list[str]) -> list[str]:
    """Column names: folder basenames, or the full paths when two basenames collide."""
    base = [os.path.basename(os.path.normpath(p)) or p for p in paths]
    return base if len(set(base)) == len(base) else list(paths)


@click.command("compare")
@click.argument("paths", nargs=-1, metavar="DIR... | --train ALGOS CORPUS...")
@click.option("--corpus", multiple=True, metavar="PATH",
              help="Evaluation corpus (repeatable; default: the embedded corpus). With --train, also training data.")
@click.option("--train", "train", default=None, metavar="ALGOS",
              help="Train these candidates first (comma-separated: wordpiece (frequency), wordpiece-likelihood, wordpiece-pmi, bpe, "
                   "bytelevel, or all) on the corpus minus a held-out part, and evaluate on that part.")
@click.option("--vocab-size", type=click.IntRange(1, MAX_VOCAB_SIZE), default=30000, show_default=True, metavar="N",
              help="With --train.")
@click.option("--min-frequency", type=click.IntRange(0, MAX_COUNT), default=2, show_default=True, metavar="N",
              help="With --train.")
@click.option("--heldout", type=float, default=0.1, show_default=True, metavar="SHARE",
              help="With --train: the share of lines (the corpus's tail) kept for evaluation.")
@click.option("--size", default=None, metavar="SIZE", help="Read at most this much of the corpus, e.g. 10MB.")
@click.option("--top", type=click.IntRange(0), default=10, show_default=True, metavar="N")
@click.option("--threads", type=click.IntRange(1), default=None, metavar="N",
              help="Training and encoding threads (default and most: all cores).")
@click.option("-o", "--output", default=None, metavar="DIR",
              help="Write compare.json, compare.md, compare.png (and the trained tokenizers) here.")
def command(paths, corpus, train, vocab_size, min_frequency, heldout, size, top, threads, output):
    """Compare tokenizers DIR... on --corpus, or train candidates with --train and compare them on held-out text.

    \b
    tokkit compare tok-a tok-b --corpus wiki/
    tokkit compare --train wordpiece,wordpiece-likelihood --vocab-size 8000 wiki/
    """

    max_bytes = parse_size(size)
    candidates = parse_candidates(train) if train else None
    if train:
        check_heldout(heldout)
    elif not paths:
        raise TokkitError("give tokenizer folders to compare, or --train ALGOS with a corpus")
    if output:  # a folder of results: it may not be an input, lie inside one or hold one
        inputs = [*corpus, *(paths if train else [p for path in paths for p in tokenizer_inputs(path)])]
        check_output_not_input(output, inputs)
        prepare_folder(output)
    log = lambda m: click.echo(m, err=True)  # noqa: E731
    if train:
        lines = read_lines(list(paths) + list(corpus), max_bytes=max_bytes)
        train_lines, eval_lines = split_heldout(lines, heldout)
        save = os.path.join(output, "tokenizers") if output else None
        tokenizers = train_candidates(train_lines, candidates, vocab_size=vocab_size, min_frequency=min_frequency,
                                      workers=threads, save_dir=save, log=log)
        setting = (f"trained on {len(train_lines):,} lines, evaluated on the held-out {len(eval_lines):,} "
                   f"lines (last {heldout:.0%}), vocab {vocab_size:,}")
    else:
        tokenizers = {n: load_tokenizer(p) for n, p in zip(_names(list(paths)), paths)}
        eval_lines = read_lines(corpus, max_bytes=max_bytes)
        setting = f"evaluated on {len(eval_lines):,} lines"
    results = {}
    for name, tok in tokenizers.items():
        results[name] = corpus_stats(tok, eval_lines, top=top, num_threads=threads)
    click.echo(setting)
    click.echo(compare_table(results))
    click.echo(token_lists(results))
    if output:
        png = compare_chart(results, os.path.join(output, "compare.png"), title="tokkit compare")
        payload = {"setting": setting, "results": results, "chart": "compare.png" if png else None}
        atomic_write(os.path.join(output, "compare.json"), json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
        md = ["# tokkit compare", "", setting, "", compare_table(results, markdown=True), "",
              token_lists(results, markdown=True), ""]
        md += ["![compare](compare.png)", ""] if png else ["_No chart: matplotlib is not installed._", ""]
        atomic_write(os.path.join(output, "compare.md"), "\n".join(md))
        click.echo(f"wrote {output}/compare.json, compare.md" + (", compare.png" if png else ""))
