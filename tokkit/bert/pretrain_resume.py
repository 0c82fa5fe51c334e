"""Resuming a pretraining run: the checkpoint's settings and state, and the corpus it must read again.

A resume continues from a run or checkpoint folder exactly: its model config, tokenizer and shape
checked, its settings kept except those that say how long and how to run, and the same corpus
inputs in the same order, read for the same text fields (`corpus_fingerprint`).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("four")
>>> corpus_fingerprint([d / "a.txt"])
[['a.txt', 4]]
"""
from __future__ import annotations

from pathlib import Path

from tokkit.bert import checkpoint as ckpt
from tokkit.bert.export import find_checkpoint
from tokkit.bert.recipe import PretrainConfig
from tokkit.errors import TokkitError
from tokkit.labelled.files import is_labelled_file
from tokkit.labelled.rows import Fields

__all__ = ["resumed", "corpus_fingerprint", "check_corpus"]


def resumed(resume, cfg: PretrainConfig, tok):
    """(checkpoint state, the run's config, checkpoint folder) to resume; ({}, cfg, None) for a new run.

    The checkpoint's settings win, except those that say how long and how to run (steps, max_time,
    evaluation and checkpoint intervals, threads, device).
    """
    if resume is None:
        return {}, cfg, None
    rdir = find_checkpoint(resume)
    state = ckpt.read_state(rdir)
    ckpt.check_model_config(rdir, state)
    ckpt.check_tokenizer(rdir, state, tok)
    saved = {"shuffle": False, **state["config"]}  # runs saved before shuffling existed read in file order
    ckpt.refuse_shape_options(cfg.model, f"the run in {resume} keeps its checkpoint's shape", state["model_config"])
    now = {k: getattr(cfg, k) for k in ("steps", "max_time", "eval_every", "checkpoint_every",
                                          "eval_every_seconds", "threads", "device")}
    try:
        return state, PretrainConfig(**{**saved, **now}), rdir
    except TypeError as exc:
        raise TokkitError(f"{rdir}/state.json: field 'config' does not fit this tokkit ({exc})") from None
    except TokkitError as exc:
        raise TokkitError(f"{rdir}/state.json: field 'config': {exc}") from None


def corpus_fingerprint(paths, fields: Fields = Fields()) -> list[list]:
    """[name, bytes] of each corpus input in order (a folder's bytes are its files' total), then the text
    fields read when it is or holds a labelled file: what a resume must see again for the stream to
    continue where it stopped."""
    out = []
    for p in map(Path, paths):
        files = [f for f in p.rglob("*") if f.is_file()] if p.is_dir() else [p]
        entry = [p.name, sum(f.stat().st_size for f in files)]
        if any(is_labelled_file(f) for f in files):  # other fields of the same file are another corpus
            entry += [fields.text, fields.text_pair]
        out.append(entry)
    return out


def check_corpus(state: dict, corpus: list, rdir, fields: Fields) -> None:
    """A resume reads the files the run began with, in the same order, for the same text fields
    (checkpoints that predate the record are taken as they are)."""
    saved = state.get("corpus")
    if saved is None:
        return
    now = corpus_fingerprint(corpus, fields)
    if now != saved:
        names = ", ".join(str(entry[0]) for entry in saved)
        raise TokkitError(f"{rdir}: the run was trained on other corpus files or another order, or read other text "
                          f"fields of them ({names}); resume with the same files in the same order and the same "
                          "--text-field")
