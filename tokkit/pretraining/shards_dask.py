"""Write pretraining shards on a Dask cluster: one task per input file, resumable.

The shard folder has the format of `tokkit.pretraining.shards` (an `index.json` that `ShardDataset` reads);
only the names differ: input file i gives `part-IIIII-KKKKK.npz`, k = 0, 1, ... Each shard is
written to a temporary name and renamed; when all of a file's shards are in place its marker
`part-IIIII.done.json` is written (atomically, last), and `resume=True` skips every file whose
marker and shards are present, so a killed job continues where it stopped. index.json is written
last, by the client, in file order, so shard names and example numbers never depend on which
worker finished first. Each task writes its file's examples in file order; `ShardDataset` shuffles
them when it reads (its default).

>>> write_shards_dask(client, tok, ["a.txt", "b.txt"], kind="full", max_length=128,
...                   output="shards/", resume=True)  # doctest: +SKIP
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from tokkit._files import atomic_write
from tokkit._progress import Progress
from tokkit.errors import TokkitError
from tokkit.pretraining.collate import special_token_ids
from tokkit.pretraining.dataset import check_kind, iter_examples
from tokkit.pretraining.documents import expand_paths
from tokkit.pretraining.shards import FORMAT, INDEX, SHARD_EXAMPLES, VERSION, _save_shard

PART = "part-{i:05d}-{k:05d}.npz"
DONE = "part-{i:05d}.done.json"


def file_seed(seed: int, i: int) -> int:
    """The NSP seed of input file i: a pure function of (seed, i)."""
    return int(np.random.SeedSequence([seed, i]).generate_state(1, dtype=np.uint64)[0] >> 1)


def encode_file_task(tokenizer, path: str, i: int, *, kind: str, max_length: int, seed: int, output: str) -> dict:
    """Run on a worker: write the shards of input file i into `output`, then its done marker."""

    out = Path(output)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: file disappeared during the job")
    shards = []
    with tempfile.TemporaryDirectory(prefix=f".part-{i:05d}-", dir=out) as tmp:

        def flush(batch):
            k = len(shards)
            entry = _save_shard(tmp, k, batch, max_length, kind)
            name = PART.format(i=i, k=k)
            os.replace(os.path.join(tmp, entry["file"]), out / name)
            shards.append({"file": name, "num_examples": entry["num_examples"]})

        batch = []
        for example in iter_examples(tokenizer, [path], kind=kind, max_length=max_length, seed=file_seed(seed, i)):
            example["document"] = np.int64((i << 32) + int(example["document"]))  # unique across input files
            batch.append(example)
            if len(batch) == SHARD_EXAMPLES:
                flush(batch)
                batch = []
        if batch:
            flush(batch)
    marker = {"input": os.path.basename(path), "shards": shards}
    atomic_write(out / DONE.format(i=i), json.dumps(marker, indent=1) + "\n")
    return marker


def completed(output: Path, i: int) -> dict | None:
    """File i's marker when it and all its shards are present, else None."""
    try:
        marker = json.loads((output / DONE.format(i=i)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if all((output / s["file"]).is_file() for s in marker.get("shards", [])):
        return marker
    return None


def write_shards_dask(client, tokenizer, paths, *, kind: str, max_length: int, output, seed: int = 0,
                      resume: bool = False, progress: bool = False) -> Path:
    """Encode every input file on the cluster behind `client` into a shard folder; return it."""
    from distributed import as_completed

    check_kind(kind, max_length)
    ids = special_token_ids(tokenizer)
    files = [str(f) for f in expand_paths(paths)]
    out = Path(output)
    _prepare(out, resume)
    todo = [i for i in range(len(files)) if not (resume and completed(out, i))]
    remote_tok = client.scatter(tokenizer, broadcast=True)
    futures = {client.submit(encode_file_task, remote_tok, files[i], i, kind=kind, max_length=max_length,
                             seed=seed, output=str(out.resolve()), pure=False): i
               for i in todo}
    sizes = {i: os.path.getsize(files[i]) for i in todo}
    with Progress(sum(sizes.values()) or None, desc="encoding (dask)", unit=" MB", scale=1e-6,
                  enabled=progress) as bar:
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                fut.result()
            except FileNotFoundError as exc:
                raise TokkitError(str(exc).strip("'\"")) from None
            except (TokkitError, ValueError, UnicodeDecodeError) as exc:
                msg = str(exc)
                raise TokkitError(msg if files[i] in msg else f"{files[i]}: {msg}") from None
            bar.update(sizes[i])
    shards, total = [], 0
    for i in range(len(files)):
        marker = completed(out, i)
        if marker is None:
            raise TokkitError(f"{files[i]}: its shards are missing after the job; run again with --resume")
        shards.extend(marker["shards"])
        total += sum(s["num_examples"] for s in marker["shards"])
    if not total:
        raise TokkitError("the corpus yields no examples (is it empty?)")
    index = {"format": FORMAT, "version": VERSION, "kind": kind, "max_length": int(max_length), "seed": int(seed),
             "vocab_size": int(tokenizer.vocab_size), "num_examples": total, "special_ids": ids, "shards": shards}
    atomic_write(out / INDEX, json.dumps(index, indent=1) + "\n")
    return out


def _prepare(out: Path, resume: bool) -> None:
    """Create the folder; without resume, an earlier run's parts are cleared and anything else refused."""
    if out.exists() and not out.is_dir():
        raise TokkitError(f"{out}: output path is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    if resume:
        return
    ours = [p for p in out.iterdir() if p.name.startswith(("part-", ".part-")) or p.name == "index.json"]
    others = [p for p in out.iterdir() if p not in ours]
    if others:
        raise TokkitError(f"{out}: folder holds files that are not shards (e.g. {others[0].name}); choose another")
    for p in ours:
        shutil.rmtree(p) if p.is_dir() else p.unlink()
