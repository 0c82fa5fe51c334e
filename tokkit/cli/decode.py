"""`tokkit decode`: lines of space-separated ids -> one line of text each."""
from __future__ import annotations

import sys

import click

import tokkit
from tokkit._progress import Progress
from tokkit.cli.encode import read_lines
from tokkit.errors import TokkitError


@click.command("decode")
@click.argument("files", nargs=-1, metavar="[FILES]...")
@click.option("-t", "--tokenizer", "tokenizer_path", required=True, metavar="DIR",
              help="Tokenizer folder or file (tokenizer.json, vocab.txt, vocab.json).")
@click.option("--skip-special-tokens", is_flag=True, help="Leave special tokens out of the text.")
@click.option("-o", "--output", default=None, metavar="PATH", help="Output file (default stdout).")
def command(files, tokenizer_path, skip_special_tokens, output):
    """Decode FILES of ids (stdin without FILES) with the tokenizer in DIR, one text per line."""
    import os

    tok = tokkit.load(tokenizer_path)
    out = sys.stdout if output is None else open(output + ".tmp", "w", encoding="utf-8")
    try:
        with Progress(enabled=False) as bar:
            for where, line in read_lines(list(files), bar):
                try:
                    ids = [int(x) for x in line.split()]
                except ValueError:
                    raise TokkitError(f"{where}: expected space-separated integer ids") from None
                try:
                    text = tok.decode(ids, skip_special_tokens=skip_special_tokens)
                except TokkitError as exc:
                    raise TokkitError(f"{where}: {exc}") from None
                out.write(text + "\n")
    finally:
        if output is not None:
            out.close()
    if output is not None:
        os.replace(output + ".tmp", output)
