"""`tokkit decode`: lines of space-separated ids -> one line of text each."""
from __future__ import annotations

import click

import tokkit
from tokkit._progress import Progress
from tokkit.cli.encode import LINE_BYTES_LIMIT, MAX_LINE_BYTES, open_output, read_lines
from tokkit.cli.paths import check_paths, tokenizer_inputs
from tokkit.errors import TokkitError


@click.command("decode")
@click.argument("files", nargs=-1, metavar="[FILES]...")
@click.option("-t", "--tokenizer", "tokenizer_path", required=True, metavar="DIR",
              help="Tokenizer folder or file (tokenizer.json, vocab.txt, vocab.json).")
@click.option("--skip-special-tokens", is_flag=True, help="Leave special tokens out of the text.")
@click.option("-o", "--output", default=None, metavar="PATH", help="Output file (default stdout).")
@click.option("--max-line-bytes", type=click.IntRange(min=1, max=LINE_BYTES_LIMIT), default=MAX_LINE_BYTES,
              show_default=True, metavar="N", help="Longest input line accepted; a longer one is an error.")
def command(files, tokenizer_path, skip_special_tokens, output, max_line_bytes):
    """Decode FILES of ids (stdin without FILES) with the tokenizer in DIR, one text per line."""
    check_paths(output, [*files, *tokenizer_inputs(tokenizer_path)], file=True)
    tok = tokkit.load(tokenizer_path)
    with open_output(output) as out, Progress(enabled=False) as bar:
        for where, line in read_lines(list(files), bar, max_line_bytes):
            try:
                ids = [int(x) for x in line.split()]
            except ValueError:
                raise TokkitError(f"{where}: expected space-separated integer ids") from None
            try:
                text = tok.decode(ids, skip_special_tokens=skip_special_tokens)
            except TokkitError as exc:
                raise TokkitError(f"{where}: {exc}") from None
            out.write(text + "\n")
