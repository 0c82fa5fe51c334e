"""Pre-tokenized pretraining shards: `write_shards` writes them, `ShardDataset` reads them back.

A shard folder holds `index.json` (format, kind, max_length, example counts) and
`shard-00000.npz`, ... each with input_ids (N, max_length) int32 padded with 0, lengths (N,),
token_type_ids and special_tokens_mask (N, max_length) int8, document (N,) int64 (the corpus
document each example starts in) and next_sentence_label (N,) for `nsp`. Examples are numbered
0..num_examples-1 in file order. Masking stays dynamic: it happens in the collator when the shards
are read.

Both sides shuffle by default: `write_shards` writes the examples of one shuffled epoch
(documents in a seeded order across all files, then the shuffle buffer of
tokkit.pretraining.shuffle), and `ShardDataset` reads each epoch's shards in a new seeded order
through the same buffer.

>>> out = write_shards(tok, ["corpus.txt"], kind="full", max_length=128, output="shards/")  # doctest: +SKIP
>>> ds = ShardDataset(out); next(iter(ds))["index"]                                          # doctest: +SKIP
0
"""
from __future__ import annotations

import contextlib
import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Dict, Iterator, List

import numpy as np

from tokkit._files import atomic_dir, atomic_open
from tokkit._progress import Progress
from tokkit.errors import TokkitError
from tokkit.pretraining.collate import special_token_ids
from tokkit.pretraining.corpus_index import DocumentIndex
from tokkit.pretraining.dataset import (check_buffer_size, check_kind, iter_examples, iter_shuffled_examples,
                                        worker_share)
from tokkit.pretraining.documents import expand_paths
from tokkit.pretraining.shuffle import DEFAULT_BUFFER, spread

FORMAT = "tokkit-pretraining-shards"
VERSION = 1
INDEX = "index.json"
SHARD_EXAMPLES = 8192


def is_shard_dir(path) -> bool:
    """True for a folder written by `write_shards` (its index.json names our format)."""
    index = Path(path) / INDEX
    if not index.is_file():
        return False
    try:
        return json.loads(index.read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _save_shard(folder: str, number: int, examples: List[Dict], max_length: int, kind: str) -> Dict:
    n = len(examples)
    arrays = {
        "input_ids": np.zeros((n, max_length), dtype=np.int32),
        "token_type_ids": np.zeros((n, max_length), dtype=np.int8),
        "special_tokens_mask": np.zeros((n, max_length), dtype=np.int8),
        "lengths": np.zeros(n, dtype=np.int32),
    }
    for r, e in enumerate(examples):
        k = len(e["input_ids"])
        arrays["lengths"][r] = k
        for key in ("input_ids", "token_type_ids", "special_tokens_mask"):
            arrays[key][r, :k] = e[key]
    if all("document" in e for e in examples):
        arrays["document"] = np.asarray([e["document"] for e in examples], dtype=np.int64)
    if kind == "nsp":
        arrays["next_sentence_label"] = np.asarray([e["next_sentence_label"] for e in examples], dtype=np.int8)
    name = f"shard-{number:05d}.npz"
    with atomic_open(os.path.join(folder, name), "wb") as f:
        np.savez(f, **arrays)
    return {"file": name, "num_examples": n}


def write_shards(tokenizer, paths, *, kind: str, max_length: int, output, seed: int = 0,
                 progress=True, shuffle: bool = True, buffer_size: int = DEFAULT_BUFFER) -> Path:
    """Encode a corpus into pretraining examples and write them as shards; return the folder.

    `shuffle=True` writes the examples of epoch 0 of the shuffled stream (see the module
    docstring), `shuffle=False` in file order. The folder is built beside `output` and moved into
    place when complete; an earlier shard folder at `output` is replaced, any other non-empty
    folder is refused. `progress` is a bool (a bar on stderr when it is a terminal) or a
    `tokkit._progress.Progress` counting bytes of text.
    """
    check_kind(kind, max_length)
    check_buffer_size(buffer_size)
    ids = special_token_ids(tokenizer)
    files = expand_paths(paths)
    output = Path(output)
    markers = {INDEX}
    if is_shard_dir(output):
        markers |= {p.name for p in output.iterdir()}
    if isinstance(progress, bool) or progress is None:
        plain = all(f.suffix.lower() not in (".gz", ".bz2", ".xz") for f in files)
        bar = Progress(total=sum(f.stat().st_size for f in files) if plain else None, desc="encoding",
                       unit="MB", scale=1e-6, enabled=None if progress else False)
    else:
        bar = contextlib.nullcontext(progress)  # the caller's bar; the caller closes it
    shards: List[Dict] = []
    total = 0
    with atomic_dir(output, marker_files=markers) as tmp, bar as shown:
        batch: List[Dict] = []
        if shuffle:
            examples = iter_shuffled_examples(tokenizer, DocumentIndex.build(files), kind=kind, max_length=max_length,
                                              seed=seed, buffer_size=buffer_size, on_text=shown.update)
        else:
            examples = iter_examples(tokenizer, files, kind=kind, max_length=max_length, seed=seed,
                                     on_text=shown.update)
        for example in examples:
            batch.append(example)
            if len(batch) == SHARD_EXAMPLES:
                shards.append(_save_shard(tmp, len(shards), batch, max_length, kind))
                total += len(batch)
                batch = []
        if batch:
            shards.append(_save_shard(tmp, len(shards), batch, max_length, kind))
            total += len(batch)
        if not total:
            raise TokkitError("the corpus yields no examples (is it empty?)")
        index = {"format": FORMAT, "version": VERSION, "kind": kind, "max_length": int(max_length),
                 "seed": int(seed), "vocab_size": int(tokenizer.vocab_size), "num_examples": total,
                 "order": "shuffled" if shuffle else "file", "special_ids": ids, "shards": shards}
        with open(os.path.join(tmp, INDEX), "w", encoding="utf-8") as f:
            json.dump(index, f, indent=1)
            f.write("\n")
    return output


class ShardDataset:
    """Iterable over the examples of a shard folder; each worker / rank reads a disjoint share.

    `shuffle=True` (the default): epoch e reads the shard files in an order seeded by (seed, e),
    share s of S taking rows [s*n//S, (s+1)*n//S) of each file (n rows), and passes them through
    the shuffle buffer; call `set_epoch(e)` before each epoch. `shuffle=False`: share s covers
    examples [s*N//S, (s+1)*N//S) of the folder, in order. Either way shares are disjoint and
    together hold every example once, and each example carries its `index` (its number in the
    folder), so its masks do not depend on the order.
    """

    def __init__(self, shard_dir, *, rank: int = 0, world_size: int = 1, shuffle: bool = True,
                 buffer_size: int = DEFAULT_BUFFER, seed: int = 0):
        if not 0 <= rank < world_size:
            raise TokkitError(f"rank {rank} is outside [0, world_size={world_size})")
        check_buffer_size(buffer_size)
        self.shard_dir = str(shard_dir)
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.shuffle = bool(shuffle)
        self.buffer_size = int(buffer_size)
        self.seed = int(seed)
        self.epoch = 0
        self.index = self._read_index()
        self.kind = self.index["kind"]
        self.max_length = self.index["max_length"]

    def _read_index(self) -> Dict:
        path = Path(self.shard_dir) / INDEX
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TokkitError(f"{self.shard_dir}: not a shard folder (no {INDEX})") from None
        except (OSError, ValueError) as exc:
            raise TokkitError(f"{path}: unreadable shard index ({exc})") from None
        if not isinstance(index, dict) or index.get("format") != FORMAT:
            raise TokkitError(f"{path}: not a tokkit shard index")
        if index.get("version") != VERSION:
            raise TokkitError(f"{path}: shard format version {index.get('version')} is not supported")
        _check_index(index, path)
        return index

    def __len__(self) -> int:
        """Examples in the whole folder (all shares)."""
        return int(self.index["num_examples"])

    def set_epoch(self, epoch: int) -> None:
        """Iterate epoch `epoch` next (its shard order and buffer order; a no-op without shuffle)."""
        self.epoch = int(epoch)

    def __iter__(self) -> Iterator[Dict]:
        share, shares, _ = worker_share(self.rank, self.world_size)
        if self.shuffle:
            rng = np.random.default_rng([self.seed, self.epoch, shares, share])
            return spread(self._shuffled_share(share, shares), size=self.buffer_size, rng=rng)
        return self._share_in_order(share, shares)

    def _shuffled_share(self, share: int, shares: int) -> Iterator[Dict]:
        entries = self.index["shards"]
        firsts = np.cumsum([0] + [int(e["num_examples"]) for e in entries])
        for k in np.random.default_rng([self.seed, self.epoch]).permutation(len(entries)).tolist():
            n = int(entries[k]["num_examples"])
            start, stop = share * n // shares, (share + 1) * n // shares
            if start < stop:
                yield from self._read(entries[k]["file"], int(firsts[k]), start, stop, n)

    def _share_in_order(self, share: int, shares: int) -> Iterator[Dict]:
        n = len(self)
        lo, hi = share * n // shares, (share + 1) * n // shares
        first = 0
        for entry in self.index["shards"]:
            count = int(entry["num_examples"])
            start, stop = max(lo, first), min(hi, first + count)
            if start < stop:
                yield from self._read(entry["file"], first, start - first, stop - first, count)
            first += count

    def _read(self, name: str, first: int, start: int, stop: int, count: int) -> Iterator[Dict]:
        path = Path(self.shard_dir) / name
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise TokkitError(f"{path}: unreadable shard ({exc})") from None
        _check_shard(arrays, path, count, self.max_length, self.kind)
        lengths = arrays["lengths"]
        for r in range(start, stop):
            k = int(lengths[r])
            example = {key: arrays[key][r, :k] for key in ("input_ids", "token_type_ids", "special_tokens_mask")}
            if "next_sentence_label" in arrays:
                example["next_sentence_label"] = np.int64(arrays["next_sentence_label"][r])
            if "document" in arrays:
                example["document"] = np.int64(arrays["document"][r])
            example["index"] = np.int64(first + r)
            yield example

    def as_torch_dataset(self):
        """This dataset as a `torch.utils.data.IterableDataset` (imports torch)."""
        from tokkit.pretraining.torch_bridge import TorchIterable

        return TorchIterable(self)


ROW_ARRAYS = ("input_ids", "token_type_ids", "special_tokens_mask")


def _check_index(index: Dict, path: Path) -> None:
    """The fields of index.json that reading relies on; a TokkitError naming the file otherwise."""

    def whole(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if index.get("kind") not in ("nsp", "full"):
        raise TokkitError(f"{path}: unknown kind {index.get('kind')!r}")
    if not whole(index.get("max_length")) or index["max_length"] < 1:
        raise TokkitError(f"{path}: max_length must be a positive integer, got {index.get('max_length')!r}")
    shards = index.get("shards")
    if not isinstance(shards, list):
        raise TokkitError(f"{path}: 'shards' must be a list")
    total = 0
    for k, entry in enumerate(shards):
        name = entry.get("file") if isinstance(entry, dict) else None
        count = entry.get("num_examples") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name or name != Path(name).name or name.startswith("."):
            raise TokkitError(f"{path}: shard {k} has no plain file name inside the folder ({name!r})")
        if not whole(count) or count < 0:
            raise TokkitError(f"{path}: shard {name} has a bad example count {count!r}")
        total += count
    if index.get("num_examples") != total:
        raise TokkitError(f"{path}: num_examples is {index.get('num_examples')!r} but the shards hold {total}")


def _check_shard(arrays: Dict[str, np.ndarray], path: Path, count: int, max_length: int, kind: str) -> None:
    """A shard's arrays match its index entry: names, shapes, dtypes, and lengths within the rows."""
    needed = ROW_ARRAYS + ("lengths",) + (("next_sentence_label",) if kind == "nsp" else ())
    missing = [k for k in needed if k not in arrays]
    if missing:
        raise TokkitError(f"{path}: shard has no {', '.join(missing)} array")
    for key in ROW_ARRAYS:
        a = arrays[key]
        if a.ndim != 2 or a.dtype.kind not in "iu" or a.shape[1] != max_length:
            raise TokkitError(f"{path}: {key} must be an integer array of (rows, {max_length}), "
                              f"got {a.dtype} {a.shape}")
    optional = ("document",) if "document" in arrays else ()  # absent from folders written before it existed
    for key in needed[len(ROW_ARRAYS):] + optional:
        a = arrays[key]
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise TokkitError(f"{path}: {key} must be a 1-D integer array, got {a.dtype} {a.shape}")
    rows = {key: len(arrays[key]) for key in needed + optional}
    if min(rows.values()) < count:
        raise TokkitError(f"{path}: index.json counts {count} examples but the shard holds "
                          f"{min(rows.values())} rows")
    lengths = arrays["lengths"][:count]
    bad = np.flatnonzero((lengths < 0) | (lengths > max_length))
    if bad.size:
        raise TokkitError(f"{path}: example {int(bad[0])} has length {int(lengths[bad[0]])}, "
                          f"outside [0, {max_length}]")
