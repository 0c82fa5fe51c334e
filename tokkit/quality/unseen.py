"""Leave languages out: train on some languages of a corpus, measure on languages the training never saw.

The corpus is one list of lines per language. A seeded tenth of the languages (at least one) is
held out whole; every other language gives its first nine tenths of lines to training and its last
tenth to the in-distribution measure. Each candidate (see `tokkit.quality.compare.CANDIDATES`) is
trained once on the pooled training lines and measured on both sides with `corpus_stats`:
tokens per word (words = whitespace runs), [UNK] per token and [UNK] per word.

>>> train_langs, held = hold_out(["deu", "fra", "ita", "jpn", "rus"], fraction=0.2, seed=1)
>>> held, train_langs
(['fra'], ['deu', 'ita', 'jpn', 'rus'])
>>> measure_counts(tokens=12, words=8, unk=3)
{'words': 8, 'tokens': 12, 'unk': 3, 'tokens_per_word': 1.5, 'unk_per_token': 0.25, 'unk_per_word': 0.375}
"""
from __future__ import annotations

import random
import re
from pathlib import Path

from tokkit.errors import TokkitError
from tokkit.quality.compare import split_heldout
from tokkit.quality.stats import corpus_stats
from tokkit.train import train

TATOEBA_NAME = re.compile(r"tatoeba\.([a-z]{3})-eng\.\1$")


def tatoeba_languages(folder: str | Path) -> dict[str, Path]:
    """language code -> its non-English file (`tatoeba.xxx-eng.xxx`) in a Tatoeba test-set folder."""
    found = {m.group(1): p for p in Path(folder).iterdir() if (m := TATOEBA_NAME.match(p.name))}
    if not found:
        raise TokkitError(f"no tatoeba.xxx-eng.xxx files in {folder}")
    return dict(sorted(found.items()))


def read_lines(path: str | Path) -> list[str]:
    """The non-empty lines of a UTF-8 file, without line ends."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def hold_out(languages, *, fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """(training languages, held-out languages), both sorted: a seeded `fraction` of them, at least one, held out.

    The choice depends only on the sorted set of names, the fraction and the seed.
    """
    names = sorted(set(languages))
    if len(names) < 2:
        raise TokkitError("holding languages out needs at least two languages")
    if not 0 < fraction < 1:
        raise TokkitError(f"the held-out fraction must be between 0 and 1, got {fraction}")
    k = min(len(names) - 1, max(1, round(len(names) * fraction)))
    held = sorted(random.Random(seed).sample(names, k))
    return [n for n in names if n not in held], held


def measure_counts(*, tokens: int, words: int, unk: int) -> dict:
    """The figures of one measured set from its counts."""
    return {"words": words, "tokens": tokens, "unk": unk, "tokens_per_word": tokens / words if words else None,
            "unk_per_token": unk / tokens if tokens else None, "unk_per_word": unk / words if words else None}


def measure(tokenizer, lines: list[str]) -> dict:
    """Tokens per word and [UNK] rates of `tokenizer` on `lines` (no [UNK] at all for byte-level: 0)."""
    s = corpus_stats(tokenizer, lines, top=0)
    unk = round((s["unk_rate"] or 0.0) * s["tokens"])
    return measure_counts(tokens=s["tokens"], words=s["words"], unk=unk)


def pooled(parts: list[dict]) -> dict:
    """One measure over several sets: their counts summed."""
    return measure_counts(tokens=sum(p["tokens"] for p in parts), words=sum(p["words"] for p in parts),
                          unk=sum(p["unk"] for p in parts))


def split_corpus(texts: dict[str, list[str]], *, fraction: float, seed: int, heldout_lines: float = 0.1) -> dict:
    """The three sides of the check: training lines per language, in-distribution and unseen lines per language."""
    train_langs, held = hold_out(texts, fraction=fraction, seed=seed)
    training, in_dist = {}, {}
    for lang in train_langs:
        training[lang], in_dist[lang] = split_heldout(texts[lang], heldout_lines)
    return {"train": training, "in_distribution": in_dist, "unseen": {lang: texts[lang] for lang in held}}


def check_candidate(split: dict, algo: str, options: dict, *, vocab_size: int, extra_train: list[str] = (),
                    workers: int | None = None) -> dict:
    """Train one candidate on the training side (plus `extra_train` lines) and measure it on the other two."""
    lines = [line for lang in sorted(split["train"]) for line in split["train"][lang]] + list(extra_train)
    tok = train(texts=lines, algo=algo, vocab_size=vocab_size, workers=workers, **options)
    out = {"vocab_size": tok.vocab_size}
    for side in ("in_distribution", "unseen"):
        per = {lang: measure(tok, split[side][lang]) for lang in sorted(split[side])}
        out[side] = pooled(list(per.values()))
        out[side + "_languages"] = per
    return out
