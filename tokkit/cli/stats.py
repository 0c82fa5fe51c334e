"""`tokkit stats`: quality figures of one vocabulary on a corpus."""
from __future__ import annotations

import json
import os

import click

import tokkit
from tokkit._files import atomic_write
from tokkit.cli.paths import check_paths, tokenizer_inputs
from tokkit.cli.streams import PipeClosed
from tokkit.errors import TokkitError
from tokkit.quality.stats import corpus_stats, format_stats
from tokkit.text.corpus import parse_size, read_lines


def load_tokenizer(path: str):
    """tokkit.load with the CLI's error: a missing folder is bad input."""

    if not os.path.exists(path):
        raise TokkitError(f"{path}: no such tokenizer file or folder")
    return tokkit.load(path)


@click.command("stats")
@click.option("-t", "--tokenizer", "tokenizer_dir", required=True, metavar="DIR",
              help="Tokenizer folder or file (tokenizer.json, vocab.txt, vocab.json + merges.txt).")
@click.argument("corpus", nargs=-1, metavar="[CORPUS]...")
@click.option("--size", default=None, metavar="SIZE", help="Read at most this much of the corpus, e.g. 10MB.")
@click.option("--top", type=click.IntRange(0), default=10, show_default=True, metavar="N",
              help="How many longest and most frequent tokens to list.")
@click.option("--threads", type=click.IntRange(1), default=None, metavar="N",
              help="Encoding threads (default and most: all cores).")
@click.option("-o", "--output", default=None, metavar="FILE", help="Also write the figures as JSON.")
def command(tokenizer_dir, corpus, size, top, threads, output):
    """Fertility, bytes per token, [UNK] rate, vocab use, token lengths and script mix on CORPUS.

    Without CORPUS, measures on the embedded default corpus.
    """
    max_bytes = parse_size(size)
    check_paths(output, [*corpus, *tokenizer_inputs(tokenizer_dir)], file=True)
    tok = load_tokenizer(tokenizer_dir)
    lines = read_lines(corpus, max_bytes=max_bytes)
    stats = corpus_stats(tok, lines, top=top, num_threads=threads)
    click.echo(format_stats(stats, name=tokenizer_dir))
    if output:
        try:
            atomic_write(output, json.dumps(stats, indent=1, ensure_ascii=False) + "\n")
        except BrokenPipeError:  # -o /dev/stdout or a FIFO whose reader went away: a silent stop
            raise PipeClosed() from None
        except OSError as exc:
            raise TokkitError(f"{output}: cannot write ({exc.strerror or exc})") from None
