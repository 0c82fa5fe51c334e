"""The shuffle buffer between examples and batches: each document's examples spread over the buffer.

A document yields its examples one after another (a Wikipedia article gives ~40 blocks of 128
tokens), so even after the documents are shuffled, consecutive examples share a document. The
buffer holds up to `size` examples; each time it is full, its older half leaves in a random order
where every document's examples are spread evenly across that half: with n of its examples among
m, they sit about m / n places apart, at a random offset (`spread_order`). A batch then draws on as
many documents as the buffer holds, which a plain random draw from the same buffer does not give
(two blocks of one long article often land in the same batch). The order is a pure function of
the examples and `rng`, so replaying the same stream gives the same order (resume).

>>> rng = np.random.default_rng(0)
>>> examples = [{"document": d, "k": k} for d in range(4) for k in range(3)]
>>> [e["document"] for e in spread(examples, size=24, rng=rng)]
[3, 2, 1, 2, 0, 3, 1, 0, 3, 2, 1, 0]
"""
from __future__ import annotations

from typing import Dict, Iterable, Iterator, List

import numpy as np

DEFAULT_BUFFER = 16384  # examples held (about 25 MB at 128 tokens); each emitted run is half of it


def spread_order(documents: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation of positions 0..m-1 that spreads each document's positions evenly, at random offsets.

    Position i, the j-th of n positions of its document, gets the key (j + u + e) / n, with u
    uniform in [0, 1) per document and e uniform in [-1/4, 1/4) per position; positions are sorted
    by key (ties at random). A document's positions keep their order and stay at least half their
    mean spacing apart, and e varies the documents' relative order from one round to the next.

    >>> spread_order(np.array([5, 5, 5, 5, 7, 7]), np.random.default_rng(1)).tolist()
    [0, 1, 4, 2, 3, 5]
    """
    m = len(documents)
    _, doc, counts = np.unique(documents, return_inverse=True, return_counts=True)
    grouped = np.argsort(doc, kind="stable")                 # positions by document, in order
    first = np.cumsum(counts) - counts                       # where each document starts in `grouped`
    rank = np.empty(m, dtype=np.int64)
    rank[grouped] = np.arange(m) - first[doc[grouped]]       # j: the position's rank in its document
    offset = rng.random(len(counts))[doc] + (rng.random(m) - 0.5) / 2
    key = (rank + offset) / counts[doc]
    return np.lexsort((rng.random(m), key))


def spread(examples: Iterable[Dict], *, size: int = DEFAULT_BUFFER, rng: np.random.Generator) -> Iterator[Dict]:
    """`examples` through the buffer (see the module docstring); every example comes out once.

    An example's document is its "document" entry (its "index" when it has none, so that unrelated
    examples are simply shuffled). The last run holds between size / 2 and size examples, so the
    end of a stream is as mixed as the rest. `size` < 2 passes the examples through in order.
    """
    if size < 2:
        yield from examples
        return
    half = size // 2
    held: List[Dict] = []
    for example in examples:
        held.append(example)
        if len(held) == size:
            yield from _run(held[:half], rng)
            del held[:half]
    if held:
        yield from _run(held, rng)


def _run(examples: List[Dict], rng: np.random.Generator) -> Iterator[Dict]:
    docs = np.asarray([int(e["document"]) if "document" in e else int(e["index"]) for e in examples], np.int64)
    for i in spread_order(docs, rng).tolist():
        yield examples[i]
