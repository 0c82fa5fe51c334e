"""`tokkit train`: train a vocabulary and write it to a folder."""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile

import click

from tokkit._files import atomic_dir, check_destination, check_output_not_input
from tokkit.errors import TokkitError
from tokkit.labelled import Fields
from tokkit.labelled.files import is_labelled_file, read_texts
from tokkit.text.default_corpus import default_texts
from tokkit.train import MAX_COUNT, MAX_VOCAB_SIZE, train
from tokkit.train.dask_count import connect
from tokkit.train.flow import check_special_tokens
from tokkit.tokenizer.tokenizer import SENTENCEPIECE_FILE
from tokkit._native.patterns import NAMED

OUTPUT_FILES = {"wordpiece": {"tokenizer.json", "vocab.txt"},
                "bpe": {"tokenizer.json", "vocab.json", "merges.txt"},
                "bytelevel": {"tokenizer.json", "vocab.json", "merges.txt"},
                "unigram": {"tokenizer.json"}}
ALL_OUTPUT_FILES = set().union(*OUTPUT_FILES.values())


def unigram_options(algo, character_coverage, max_piece_length, byte_fallback, split_digits,
                    sentencepiece_model=False) -> dict:
    """The sentencepiece-style options given, for --algo unigram (an error for the others)."""
    given = {"character_coverage": character_coverage, "max_piece_length": max_piece_length,
             "byte_fallback": byte_fallback or None, "split_digits": split_digits or None,
             "sentencepiece_model": sentencepiece_model or None}
    given = {k: v for k, v in given.items() if v is not None}
    if given and algo != "unigram":
        names = ", ".join("--" + k.replace("_", "-") for k in given)
        raise TokkitError(f"{names} {'applies' if len(given) == 1 else 'apply'} to --algo unigram only")
    return given


@click.command("train")
@click.argument("corpus", nargs=-1, metavar="[CORPUS]...")
@click.option("--algo", type=click.Choice(["wordpiece", "bpe", "bytelevel", "unigram"]), default="wordpiece",
              show_default=True, help="Training algorithm.")
@click.option("--vocab-size", type=click.IntRange(1, MAX_VOCAB_SIZE), default=30000, show_default=True, metavar="N")
@click.option("--min-frequency", type=click.IntRange(0, MAX_COUNT), default=2, show_default=True, metavar="N",
              help="Only pairs seen at least N times may merge.")
@click.option("--special-token", "special_tokens", multiple=True, metavar="TOKEN",
              help="Add a special token (repeatable).")
@click.option("--no-default-specials", is_flag=True,
              help="Drop [PAD] [UNK] [CLS] [SEP] [MASK] (wordpiece and bpe keep [UNK]; unigram: drop <pad> </s>, "
                   "keep <unk>).")
@click.option("--limit-alphabet", type=click.IntRange(1), default=None, metavar="N",
              help="Keep the N most frequent characters (default 1000; bytelevel ignores it).")
@click.option("--cased", is_flag=True, help="wordpiece: keep case and accents.")
@click.option("--scoring", type=click.Choice(["frequency", "likelihood", "pmi"]), default=None,
              help="wordpiece merge scoring: frequency (the most frequent pair; default), likelihood (gain in "
                   "log-likelihood, the original WordPiece criterion) or pmi (count(ab) / count(a) count(b)).")
@click.option("--lowercase", is_flag=True, help="bpe: lowercase while normalizing.")
@click.option("--pattern", default=None, metavar="NAME|REGEX",
              help="bytelevel: pre-tokenization pattern, a name (gpt2, llama3 = cl100k, qwen2, o200k) or a regex "
                   "(default gpt2).")
@click.option("--character-coverage", type=click.FloatRange(0, 1, min_open=True), default=None, metavar="F",
              help="unigram: keep the most frequent characters up to this share of all (default 0.9995).")
@click.option("--max-piece-length", type=click.IntRange(1, 64), default=None, metavar="N",
              help="unigram: longest piece in characters (default 16).")
@click.option("--byte-fallback", is_flag=True, help="unigram: add the 256 <0xNN> pieces for unknown characters.")
@click.option("--split-digits", is_flag=True, help="unigram: every digit is a piece of its own.")
@click.option("--sentencepiece-model", is_flag=True,
              help="unigram: also write tokenizer.model, the vocabulary as a SentencePiece model. Its normalizer "
                   "is identity (sentencepiece does not apply NFKC, and only plain spaces count as whitespace): "
                   "on NFKC text of plain spaces it gives tokkit's ids.")
@click.option("--workers", type=click.IntRange(1), default=None, metavar="N",
              help="Counting threads (default and most: all cores).")
@click.option("--glob", "glob_pattern", default=None, metavar="PATTERN", help="Files to take from directories.")
@click.option("--errors", type=click.Choice(["strict", "replace"]), default="strict", show_default=True,
              help="Invalid UTF-8: fail, or substitute U+FFFD.")
@click.option("-o", "--output", default=None, metavar="DIR", help="Output folder (default ./tokkit-ALGO).")
@click.option("--force", is_flag=True, help="Replace a non-empty output folder that is not a tokkit output.")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Count on a Dask cluster (tcp://host:8786, or 'local' to start one).")
@click.option("--min-word-count", type=click.IntRange(0, MAX_COUNT), default=0, metavar="N",
              help="With --scheduler: prune words seen fewer than N times while reducing.")
@click.option("--text-field", default=Fields.text, show_default=True, metavar="NAME",
              help="Labelled files (.jsonl, .json, .csv, .tsv) in CORPUS: the field holding the text (their labels "
                   "are never read).")
@click.option("--text-pair-field", default=Fields.text_pair, show_default=True, metavar="NAME",
              help="Labelled files: the field holding a pair's second text, when a row has one.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars and no summary.")
def command(corpus, algo, vocab_size, min_frequency, special_tokens, no_default_specials, limit_alphabet, cased,
            scoring, lowercase, pattern, character_coverage, max_piece_length, byte_fallback, split_digits, workers,
            glob_pattern, errors, output, force, scheduler, min_word_count, quiet, sentencepiece_model, text_field,
            text_pair_field):
    """Train a tokenizer on CORPUS (files, directories, globs, - for stdin; .gz/.bz2/.xz read as text; labelled
    .jsonl/.json/.csv/.tsv files read for their texts, so a vocabulary can learn a task's words beside general text).

    Without CORPUS, trains on the embedded default corpus (CPython's own reference documentation).
    """

    special_tokens = check_special_tokens(special_tokens)  # before any work: nothing is read or written
    if output == "":
        raise TokkitError("-o/--output is empty; give a folder name")
    if min_word_count and not scheduler:
        raise TokkitError("--min-word-count applies to cluster training (--scheduler) only")
    options = {}
    if algo == "wordpiece":
        options.update(cased=cased, scoring=scoring or "frequency")
    elif cased or scoring:
        raise TokkitError("--cased and --scoring apply to --algo wordpiece only")
    if algo == "bpe":
        options["lowercase"] = lowercase
    elif lowercase:
        raise TokkitError("--lowercase applies to --algo bpe only")
    if algo == "bytelevel":
        options["pattern"] = NAMED.get(pattern, pattern)
    elif pattern:
        raise TokkitError("--pattern applies to --algo bytelevel only")
    options.update(unigram_options(algo, character_coverage, max_piece_length, byte_fallback, split_digits,
                                   sentencepiece_model))
    # tokenizer.model marks an earlier tokkit output only when one is written: otherwise a folder of
    # sentencepiece files alone would be replaced without --force.
    markers = ALL_OUTPUT_FILES | ({SENTENCEPIECE_FILE} if sentencepiece_model else set())

    output = output or f"tokkit-{algo}"
    check_destination(output, marker_files=markers, force=force)  # fail before hours of counting
    check_output_not_input(output, corpus)  # the folder is replaced as a whole: it may hold no corpus file
    labelled = any(_labelled(f) for f in corpus)
    if scheduler and labelled:
        raise TokkitError("--scheduler reads text files: give a labelled file's texts as a .txt file")
    fields = Fields(text=text_field, text_pair=text_pair_field)
    # a labelled file's texts, written once for the counting passes (no folder for plain text)
    with tempfile.TemporaryDirectory(prefix="tokkit-train-") if labelled else contextlib.nullcontext() as scratch:
        files, texts = (texts_of_labelled(corpus, fields, scratch), None) if corpus else (None, default_texts())
        progress = not quiet and sys.stderr.isatty()
        client = None
        if scheduler:
            if not corpus or "-" in corpus:
                raise TokkitError("--scheduler reads files: give corpus files (not stdin)")
            client = connect(scheduler, workers=workers, echo=lambda m: click.echo(m, err=True), quiet=quiet)
        try:
            tokenizer, summary = train(
                files, texts=texts, algo=algo, vocab_size=vocab_size, min_frequency=min_frequency,
                special_tokens=list(special_tokens), default_specials=not no_default_specials,
                limit_alphabet=limit_alphabet, workers=workers, errors=errors, glob=glob_pattern,
                progress=progress, client=client, min_word_count=min_word_count, return_summary=True, **options)
        finally:
            if client is not None:
                client.close()
    with atomic_dir(output, marker_files=markers, force=force) as tmp:
        tokenizer.save(tmp)
    if not quiet:
        click.echo(f"{summary.line()} -> {output}", err=True)


def texts_of_labelled(corpus, fields: Fields, scratch: str) -> list[str]:
    """CORPUS with each labelled file replaced by a text file under `scratch` holding its rows' texts, one a
    line: the vocabulary learns the file's words, never its JSON keys, CSV header or labels.

    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = open(os.path.join(d, "t.jsonl"), "w").write('{"text": "A fine film.", "label": 1}\\n')
    ...     [open(f).read() for f in texts_of_labelled([os.path.join(d, "t.jsonl")], Fields(), d)]
    ['A fine film.\\n']
    """
    files = []
    for i, path in enumerate(corpus):
        if _labelled(path):
            rows = read_texts(path, fields=fields)
            lines = [t for row in rows for t in (row["text"], row["text_pair"]) if t]
            path = os.path.join(scratch, f"{i}.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
        files.append(path)
    return files


def _labelled(path: str) -> bool:
    return path != "-" and is_labelled_file(path) and os.path.isfile(path)
