"""`tokkit encode`: text lines -> ids (one line of ids per input line) or BERT arrays in an .npz."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

import tokkit
from tokkit._progress import Progress
from tokkit.errors import TokkitError
from tokkit.inputs import encode
from tokkit.pretraining import write_shards
from tokkit.pretraining.shards_dask import write_shards_dask
from tokkit.train.dask_count import connect

BATCH_LINES = 20000


def read_lines(paths, progress):
    """Yield (where, line) for each line of the inputs (stdin for '-' or no path), newline removed."""
    for path in paths or ["-"]:
        fh = sys.stdin.buffer if path == "-" else None
        name = "<stdin>" if path == "-" else path
        try:
            fh = fh or open(path, "rb")
        except OSError as exc:
            raise TokkitError(f"{path}: cannot read ({exc.strerror})") from None
        try:
            for lineno, raw in enumerate(fh, 1):
                progress.update(len(raw))
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise TokkitError(f"{name}:{lineno}: invalid UTF-8 at byte {exc.start} of the line") from None
                yield f"{name}:{lineno}", line.rstrip("\r\n") if line.endswith("\n") else line
        finally:
            if fh is not sys.stdin.buffer:
                fh.close()


def batches(items, size):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def split_pair(where, line):
    if "\t" not in line:
        raise TokkitError(f"{where}: --pairs needs a tab between the two texts")
    a, b = line.split("\t", 1)
    return a, b


@click.command("encode")
@click.argument("files", nargs=-1, metavar="[FILES]...")
@click.option("-t", "--tokenizer", "tokenizer_path", required=True, metavar="DIR",
              help="Tokenizer folder or file (tokenizer.json, vocab.txt, vocab.json).")
@click.option("--pairs", is_flag=True, help="Each line holds two texts separated by a tab.")
@click.option("--format", "fmt", type=click.Choice(["ids", "npz"]), default="ids", show_default=True,
              help="ids: a line of space-separated ids per input line; npz: padded BERT arrays.")
@click.option("-o", "--output", default=None, metavar="PATH",
              help="Output file (ids: default stdout; npz: required) or shard folder with --pretraining.")
@click.option("--max-length", type=int, default=None, metavar="N",
              help="Truncate to N tokens with the template (npz default 512; ids: no limit).")
@click.option("--template/--no-template", default=None,
              help="Add [CLS]/[SEP] to ids output (default: on with --pairs, off otherwise).")
@click.option("--threads", type=int, default=None, metavar="N", help="Encoding threads (default: all cores).")
@click.option("--pretraining", type=click.Choice(["nsp", "full"]), default=None,
              help="Write pretraining shards (NSP pairs or full sentences) to the -o folder.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --pretraining.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="With --pretraining: encode on a Dask cluster (tcp://host:8786, or 'local'), a task per file.")
@click.option("--resume", is_flag=True, help="With --scheduler: skip input files whose shards are complete.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def command(files, tokenizer_path, pairs, fmt, output, max_length, template, threads, pretraining, seed, scheduler,
            resume, quiet):
    """Encode text FILES (stdin without FILES) with the tokenizer in DIR."""

    tok = tokkit.load(tokenizer_path)
    total = sum(os.path.getsize(f) for f in files if f != "-" and os.path.isfile(f)) or None
    show = None if not quiet else False
    if pretraining is not None:
        if output is None:
            raise TokkitError("--pretraining needs -o/--output (a folder for the shards)")
        if scheduler:
            write_on_cluster(tok, files, pretraining, max_length or 128, output, seed, scheduler, resume, threads,
                             quiet)
            return
        if resume:
            raise TokkitError("--resume applies to cluster encoding (--scheduler)")
        with Progress(total=total, desc="encoding", unit="MB", scale=1e-6, enabled=show) as bar:
            write_shards(tok, list(files), kind=pretraining, max_length=max_length or 128, output=output,
                         seed=seed, progress=bar)
        return
    with Progress(total=total, desc="encoding", unit="MB", scale=1e-6, enabled=show) as bar:
        lines = read_lines(list(files), bar)
        if fmt == "npz":
            if output is None:
                raise TokkitError("--format npz needs -o/--output")
            write_npz(tok, lines, pairs, Path(output), max_length or 512, threads)
        else:
            write_ids(tok, lines, pairs, output, max_length, template, threads)


def write_on_cluster(tok, files, kind, max_length, output, seed, scheduler, resume, workers, quiet):
    """Shards on a Dask cluster: one task per input file, resumable (tokkit.pretraining.shards_dask)."""
    import sys

    if not files or "-" in files:
        raise TokkitError("--scheduler reads files: give input files (not stdin)")
    client = connect(scheduler, workers=workers, echo=lambda m: click.echo(m, err=True))
    try:
        write_shards_dask(client, tok, list(files), kind=kind, max_length=max_length, output=output, seed=seed,
                          resume=resume, progress=not quiet and sys.stderr.isatty())
    finally:
        client.close()


def write_ids(tok, lines, pairs, output, max_length, template, threads):

    if template is None:
        template = pairs
    if pairs and not template:
        raise TokkitError("--pairs needs the [CLS]/[SEP] template (drop --no-template)")
    out = sys.stdout if output is None else open(output + ".tmp", "w", encoding="utf-8")
    try:
        for batch in batches(lines, BATCH_LINES):
            if template:
                a, b = _split(batch, pairs)
                rows = encode(tok, a, b, max_length=max_length or 10**9, truncation="longest_first" if max_length
                              else None, padding=None, num_threads=threads)["input_ids"]
            elif max_length:
                raise TokkitError("--max-length applies with the template only (add --template)")
            else:
                rows = tok.encode_batch([line for _, line in batch], num_threads=threads)
            out.write("".join(" ".join(map(str, row.tolist() if hasattr(row, "tolist") else row)) + "\n"
                              for row in rows))
    finally:
        if output is not None:
            out.close()
    if output is not None:
        os.replace(output + ".tmp", output)


def _split(batch, pairs):
    if not pairs:
        return [line for _, line in batch], None
    split = [split_pair(where, line) for where, line in batch]
    return [a for a, _ in split], [b for _, b in split]


def write_npz(tok, lines, pairs, output: Path, max_length, threads):
    import numpy as np

    parts: dict[str, list] = {}
    for batch in batches(lines, BATCH_LINES):
        a, b = _split(batch, pairs)
        arrays = encode(tok, a, b, max_length=max_length, padding="max_length", num_threads=threads)
        for key, value in arrays.items():
            parts.setdefault(key, []).append(value)
    if not parts:
        raise TokkitError("no input lines to encode")
    tmp = output.with_name(f".{output.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        np.savez(fh, **{key: np.concatenate(value) for key, value in parts.items()})
    os.replace(tmp, output)
