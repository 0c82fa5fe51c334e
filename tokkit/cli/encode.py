"""`tokkit encode`: text lines -> ids (one line of ids per input line) or BERT arrays in an .npz."""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click
import numpy as np
from click.core import ParameterSource

import tokkit
from tokkit._files import atomic_open, stdin_bytes
from tokkit._progress import Progress
from tokkit.cli.paths import check_paths, tokenizer_inputs
from tokkit.cli.streams import PipeClosed
from tokkit.errors import TokkitError
from tokkit.inputs import encode
from tokkit.inputs.encode import MAX_PADDED_LENGTH, template_of
from tokkit.pretraining import write_shards
from tokkit.pretraining.shards_dask import write_shards_dask
from tokkit.train.dask_count import connect

BATCH_LINES = 20000


MAX_LINE_BYTES = 1 << 30  # 1 GiB: the longest input line `tokkit encode` and `decode` accept by default
LINE_BYTES_LIMIT = 1 << 40  # the largest --max-line-bytes: a line of 1 TiB could not be held in memory anyway


def read_lines(paths, progress, max_line_bytes: int = MAX_LINE_BYTES):
    """Yield (where, line) for each line of the inputs (stdin for '-' or no path), newline removed.

    Input is read in buffered blocks, a line at a time: memory holds one line, and a line longer
    than `max_line_bytes` is an error naming it rather than an unbounded read.
    """
    for path in paths or ["-"]:
        name = "<stdin>" if path == "-" else path
        try:
            fh = stdin_bytes() if path == "-" else open(path, "rb")
        except OSError as exc:
            raise TokkitError(f"{path}: cannot read ({exc.strerror})") from None
        try:
            for lineno, raw in enumerate(_raw_lines(fh, name, max_line_bytes), 1):
                progress.update(len(raw))
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise TokkitError(f"{name}:{lineno}: invalid UTF-8 at byte {exc.start} of the line") from None
                yield f"{name}:{lineno}", line.rstrip("\r\n") if line.endswith("\n") else line
        finally:
            if path != "-":
                fh.close()


def _raw_lines(fh, name: str, max_line_bytes: int):
    """The lines of `fh` as bytes; a line over `max_line_bytes` or a failed read is an error naming `name`."""
    lineno = 0
    while True:
        try:
            raw = fh.readline(max_line_bytes + 1)
        except OSError as exc:  # EIO, or stdin redirected from a folder
            raise TokkitError(f"{name}: cannot read ({exc.strerror or exc})") from None
        if not raw:
            return
        lineno += 1
        if len(raw) - raw.endswith(b"\n") > max_line_bytes:
            raise TokkitError(f"{name}:{lineno}: line is longer than {max_line_bytes:,} bytes (--max-line-bytes)")
        yield raw


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
@click.option("--shuffle/--no-shuffle", default=None,
              help="With --pretraining: write the examples in a shuffled order (documents across all files, "
                   "then a shuffle buffer; the default) or in file order.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="With --pretraining: encode on a Dask cluster (tcp://host:8786, or 'local'), a task per file.")
@click.option("--resume", is_flag=True, help="With --scheduler: skip input files whose shards are complete.")
@click.option("--max-line-bytes", type=click.IntRange(min=1, max=LINE_BYTES_LIMIT), default=MAX_LINE_BYTES,
              show_default=True, metavar="N", help="Longest input line accepted; a longer one is an error.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def command(files, tokenizer_path, pairs, fmt, output, max_length, template, threads, pretraining, seed, shuffle,
            scheduler, resume, max_line_bytes, quiet):
    """Encode text FILES (stdin without FILES) with the tokenizer in DIR."""

    check_options(pairs=pairs, fmt=fmt, output=output, max_length=max_length, template=template, threads=threads,
                  pretraining=pretraining, scheduler=scheduler, resume=resume, shuffle=shuffle)
    check_paths(output, [*files, *tokenizer_inputs(tokenizer_path)], file=pretraining is None)
    tok = tokkit.load(tokenizer_path)
    check_template_room(tok, pairs=pairs, fmt=fmt, max_length=max_length, template=template, pretraining=pretraining)
    total = sum(os.path.getsize(f) for f in files if f != "-" and os.path.isfile(f)) or None
    show = None if not quiet else False
    if pretraining is not None:
        if scheduler:
            write_on_cluster(tok, files, pretraining, max_length or 128, output, seed, scheduler, resume, threads,
                             quiet)
            return
        with Progress(total=total, desc="encoding", unit="MB", scale=1e-6, enabled=show) as bar:
            write_shards(tok, list(files), kind=pretraining, max_length=max_length or 128, output=output,
                         seed=seed, progress=bar, shuffle=shuffle is not False)
        return
    with Progress(total=total, desc="encoding", unit="MB", scale=1e-6, enabled=show) as bar:
        lines = read_lines(list(files), bar, max_line_bytes)
        if fmt == "npz":
            write_npz(tok, lines, pairs, Path(output), max_length or 512, threads)
        else:
            write_ids(tok, lines, pairs, output, max_length, template, threads)


def check_options(*, pairs, fmt, output, max_length, template, threads, pretraining, scheduler, resume, shuffle=None):
    """Refuse every combination of options that would be ignored or fail later, before any work."""
    given = _given()
    if output == "":
        raise TokkitError("-o/--output is empty; give a file name")
    if max_length is not None and max_length < 1:
        raise TokkitError(f"--max-length must be a positive number of tokens, got {max_length}")
    padded = pretraining is not None or fmt == "npz"  # every row is max_length wide
    if padded and max_length is not None and max_length > MAX_PADDED_LENGTH:
        raise TokkitError(f"--max-length must be at most {MAX_PADDED_LENGTH:,} tokens (rows are padded to it), "
                          f"got {max_length}")
    if threads is not None and threads < 1:
        raise TokkitError(f"--threads must be at least 1, got {threads}")
    if pretraining is not None:
        for flag, name in ((pairs, "--pairs"), (template is not None, "--template/--no-template"),
                           ("fmt" in given, "--format"), ("max_line_bytes" in given, "--max-line-bytes")):
            if flag:
                raise TokkitError(f"{name} does not apply with --pretraining (shards hold their own layout)")
        if output is None:
            raise TokkitError("--pretraining needs -o/--output (a folder for the shards)")
        if resume and not scheduler:
            raise TokkitError("--resume applies to cluster encoding (--scheduler)")
        if shuffle and scheduler:
            raise TokkitError("--shuffle does not apply with --scheduler: each cluster task writes one file's "
                              "examples in file order (ShardDataset shuffles them when it reads)")
        if max_length is not None and max_length < 5:
            raise TokkitError(f"--max-length must be at least 5 with --pretraining ([CLS] A [SEP] B [SEP]), "
                              f"got {max_length}")
        return
    for flag, name in ((scheduler, "--scheduler"), (resume, "--resume"), ("seed" in given, "--seed"),
                       (shuffle is not None, "--shuffle/--no-shuffle")):
        if flag:
            raise TokkitError(f"{name} applies with --pretraining only")
    template_tokens = 3 if pairs else 2
    if fmt == "npz":
        if output is None:
            raise TokkitError("--format npz needs -o/--output")
        if template is not None:
            raise TokkitError("--template/--no-template apply to --format ids (npz rows always have the template)")
        if max_length is not None and max_length < template_tokens + 1:
            raise TokkitError(f"--max-length must be at least {template_tokens + 1} with --format npz "
                              f"({template_tokens} template tokens and one of text), got {max_length}")
        return
    use_template = pairs if template is None else template
    if pairs and not use_template:
        raise TokkitError("--pairs needs the [CLS]/[SEP] template (drop --no-template)")
    if max_length is not None:
        if not use_template:
            raise TokkitError("--max-length applies with the template only (add --template)")
        if max_length < template_tokens + 1:
            raise TokkitError(f"--max-length must be at least {template_tokens + 1} "
                              f"({template_tokens} template tokens and one of text), got {max_length}")


def check_template_room(tok, *, pairs, fmt, max_length, template, pretraining) -> None:
    """--max-length against the tokenizer's own template (a tokenizer.json may add more special
    tokens than BERT's two or three), once the tokenizer is loaded."""
    if max_length is None or pretraining is not None or not (fmt == "npz" or (pairs if template is None else template)):
        return
    specials = template_of(tok).specials(pairs)
    if max_length < specials + 1:
        raise TokkitError(f"--max-length must be at least {specials + 1} with this tokenizer's template "
                          f"({specials} special tokens and one of text), got {max_length}")


def _given() -> set:
    """Names of the options the user typed (as opposed to their defaults)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return set()

    return {name for name in ctx.params
            if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)}


@contextlib.contextmanager
def open_output(output: str | None, mode: str = "w"):
    """stdout (None), or `output` written through a temporary file that replaces it only on success."""
    if output is None:
        yield sys.stdout
        return
    try:
        with atomic_open(output, mode) as f:
            yield f
    except BrokenPipeError:  # -o /dev/stdout or a FIFO whose reader went away: a silent stop
        raise PipeClosed() from None
    except OSError as exc:
        raise TokkitError(f"{output}: cannot write ({exc.strerror or exc})") from None


def write_on_cluster(tok, files, kind, max_length, output, seed, scheduler, resume, workers, quiet):
    """Shards on a Dask cluster: one task per input file, resumable (tokkit.pretraining.shards_dask)."""

    if not files or "-" in files:
        raise TokkitError("--scheduler reads files: give input files (not stdin)")
    client = connect(scheduler, workers=workers, echo=lambda m: click.echo(m, err=True), quiet=quiet)
    try:
        write_shards_dask(client, tok, list(files), kind=kind, max_length=max_length, output=output, seed=seed,
                          resume=resume, progress=not quiet and sys.stderr.isatty())
    finally:
        client.close()


def write_ids(tok, lines, pairs, output, max_length, template, threads):
    """One line of ids per input line, to stdout or to `output` (replaced only when all lines are done)."""
    if template is None:
        template = pairs
    with open_output(output) as out:
        for batch in batches(lines, BATCH_LINES):
            if template:
                a, b = _split(batch, pairs)
                rows = encode(tok, a, b, max_length=max_length or 10**9, truncation="longest_first" if max_length
                              else None, padding=None, num_threads=threads)["input_ids"]
            else:
                rows = tok.encode_batch([line for _, line in batch], num_threads=threads)
            out.write("".join(" ".join(map(str, row.tolist() if hasattr(row, "tolist") else row)) + "\n"
                              for row in rows))


def _split(batch, pairs):
    if not pairs:
        return [line for _, line in batch], None
    split = [split_pair(where, line) for where, line in batch]
    return [a for a, _ in split], [b for _, b in split]


def write_npz(tok, lines, pairs, output: Path, max_length, threads):

    parts: dict[str, list] = {}
    for batch in batches(lines, BATCH_LINES):
        a, b = _split(batch, pairs)
        arrays = encode(tok, a, b, max_length=max_length, padding="max_length", num_threads=threads)
        for key, value in arrays.items():
            parts.setdefault(key, []).append(value)
    if not parts:
        raise TokkitError("no input lines to encode")
    with open_output(str(output), "wb") as fh:
        np.savez(fh, **{key: np.concatenate(value) for key, value in parts.items()})
