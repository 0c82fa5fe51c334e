"""`tokkit compare` as functions: quality figures of several vocabularies side by side.

Candidates for `--train` are trainer settings: `wordpiece` (its default frequency scoring, as
`wordpiece-frequency`), `wordpiece-likelihood` and `wordpiece-pmi` (the same trainer scoring merges
by likelihood gain or by PMI), `bpe`, `bytelevel`, `unigram` (not in `all`, which keeps the merge trainers).
The corpus's non-empty lines are split once: the last `heldout` share of them (a contiguous tail,
so a document is never on both sides) is kept for evaluation and never seen in training.

>>> parse_candidates("wordpiece, wordpiece-likelihood,bytelevel")
[('wordpiece-frequency', 'wordpiece', {'scoring': 'frequency'}), ('wordpiece-likelihood', 'wordpiece', {'scoring': 'likelihood'}), ('bytelevel', 'bytelevel', {})]
>>> split_heldout(["a", "b", "c", "d"], 0.25)
(['a', 'b', 'c'], ['d'])
"""
from __future__ import annotations

import os

from tokkit._charts import OTHER_COLOR, _pyplot, _save, have_matplotlib
from tokkit.errors import TokkitError
from tokkit.quality.stats import LABELS, METRICS, format_value
from tokkit.train import train

CANDIDATES = {"wordpiece": ("wordpiece-frequency", "wordpiece", {"scoring": "frequency"}),
              "wordpiece-likelihood": ("wordpiece-likelihood", "wordpiece", {"scoring": "likelihood"}),
              "wordpiece-pmi": ("wordpiece-pmi", "wordpiece", {"scoring": "pmi"}),
              "wordpiece-frequency": ("wordpiece-frequency", "wordpiece", {"scoring": "frequency"}),
              "bpe": ("bpe", "bpe", {}),
              "bytelevel": ("bytelevel", "bytelevel", {}),
              "unigram": ("unigram", "unigram", {})}
ALL = ("wordpiece-pmi", "wordpiece-likelihood", "wordpiece-frequency", "bpe", "bytelevel")


def parse_candidates(text: str) -> list[tuple[str, str, dict]]:
    """'wordpiece,bpe' or 'all' -> [(name, algo, options)], duplicates dropped."""
    names = ALL if text.strip() == "all" else [t.strip() for t in text.split(",") if t.strip()]
    out, seen = [], set()
    for n in names:
        if n not in CANDIDATES:
            raise TokkitError(f"--train: unknown candidate {n!r} (choose from {', '.join(CANDIDATES)}, or all)")
        cand = CANDIDATES[n]
        if cand[0] not in seen:
            seen.add(cand[0])
            out.append(cand)
    if not out:
        raise TokkitError("--train: no candidate given")
    return out


def check_heldout(heldout: float) -> float:
    """The held-out share, strictly between 0 and 1 (nan is refused too).

    >>> check_heldout(float("nan"))
    Traceback (most recent call last):
    tokkit.errors.TokkitError: --heldout must be between 0 and 1, got nan
    """
    if not 0 < heldout < 1:
        raise TokkitError(f"--heldout must be between 0 and 1, got {heldout}")
    return heldout


def split_heldout(lines: list[str], heldout: float) -> tuple[list[str], list[str]]:
    """(training lines, held-out lines): the held-out part is the last `heldout` share, at least one line."""
    check_heldout(heldout)
    if len(lines) < 2:
        raise TokkitError("the corpus needs at least two non-empty lines to hold some out")
    k = max(1, round(len(lines) * heldout))
    return lines[:-k], lines[-k:]


def train_candidates(lines: list[str], candidates, *, vocab_size: int, min_frequency: int = 2,
                     workers: int | None = None, save_dir: str | None = None, log=None) -> dict:
    """Train each candidate on `lines`; name -> Tokenizer (saved under save_dir/NAME when given)."""
    out = {}
    for name, algo, options in candidates:
        if log:
            log(f"compare: training {name} (vocab {vocab_size}) on {len(lines):,} lines")
        tok = train(texts=lines, algo=algo, vocab_size=vocab_size, min_frequency=min_frequency,
                           workers=workers, **options)
        if save_dir:
            tok.save(os.path.join(save_dir, name))
        out[name] = tok
    return out


def compare_table(results: dict[str, dict], *, markdown: bool = False) -> str:
    """Metrics as rows, candidates as columns."""
    names = list(results)
    rows = [["", *names]]
    rows.append(["kind / vocab", *[f"{r['kind']} {r['vocab_size']:,}" for r in results.values()]])
    rows.append(["tokens", *[f"{r['tokens']:,}" for r in results.values()]])
    rows += [[LABELS[k], *[format_value(k, r[k]) for r in results.values()]] for k in METRICS]
    rows.append(["main script", *[str(r["main_script"]) for r in results.values()]])
    if markdown:
        out = ["| " + " | ".join(rows[0]) + " |", "|---|" + "---:|" * len(names)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows[1:]]
        return "\n".join(out)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                     .rstrip() for row in rows)


def token_lists(results: dict[str, dict], *, markdown: bool = False) -> str:
    """Longest and most frequent tokens of each candidate."""
    out = []
    for name, r in results.items():
        longest = " ".join(r["longest_tokens"])
        frequent = " ".join(f"{t} ({n:,})" for t, n in r["most_frequent"])
        if markdown:
            out += [f"- **{name}**: longest: `{longest}`; most frequent: `{frequent}`"]
        else:
            out += [f"{name}:", f"  longest:       {longest}", f"  most frequent: {frequent}"]
    return "\n".join(out)


def compare_chart(results: dict[str, dict], path: str, *, title: str) -> str | None:
    """One panel per metric, one bar per candidate (None when matplotlib is absent)."""

    if not have_matplotlib():
        return None
    plt = _pyplot()
    metrics = [k for k in METRICS if any(r[k] is not None for r in results.values())]
    cols = 3
    rows = (len(metrics) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.2 + 0.35 * len(results) * rows), squeeze=False)
    names = list(results)[::-1]
    for ax, key in zip(axes.flat, metrics):
        pct = key in ("unk_rate", "vocab_used", "outside_script_rate")
        raw = [results[n][key] for n in names]
        values = [(v or 0.0) * (100 if pct else 1) for v in raw]
        ax.barh(range(len(names)), values, color=OTHER_COLOR)
        ax.set_xlim(left=0, right=max(values) * 1.25 or 1)
        ax.set_yticks(range(len(names)), [n if len(n) <= 28 else "…" + n[-27:] for n in names], fontsize=8)
        ax.set_title(LABELS[key] + (" (%)" if pct else ""), fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        for i, (v, r) in enumerate(zip(values, raw)):
            ax.text(v, i, " n/a" if r is None else f" {v:.3g}", va="center", fontsize=7)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path
