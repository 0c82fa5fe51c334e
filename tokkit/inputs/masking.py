"""Dynamic BERT masking: choose 15% of tokens, then 80% [MASK], 10% random, 10% kept.

Chosen positions are reached by geometric gaps: one counter-based SplitMix64 draw per chosen
position, keyed by the row, whose high half gives the gap and low half the 80/10/10 choice; a
random token comes from one more hash of (row key, column). With word ids, one hash per position
decides per word.
The compiled kernel `tokkit._native.mask` does this in one pass, and the numpy twin below (used when the
kernel is not built, or with TOKKIT_PURE_PYTHON=1) gives the same bits. Row keys are hashes of
one 64-bit draw from the caller's `numpy.random.Generator` (or given per row, as the collator
does): a seed reproduces a run, and every call draws fresh keys, hence a fresh mask.
Probabilities are exact to 2**-32; the random token is uniform over the
non-special ids to within n/2**32. Batches of 2**18 positions or more are split between two threads (the result does not depend on it). The arrays returned are views
of buffers recycled once every view of them is gone: fresh pages cost as much as the masking.

>>> import numpy as np
>>> ids = np.array([[2, 7, 8, 9, 3]])
>>> special = np.array([[1, 0, 0, 0, 1]])
>>> masked, labels = mask_tokens(ids, special, vocab_size=10, mask_token_id=4,
...     special_ids=[0, 1, 2, 3, 4], rng=np.random.default_rng(0), mlm_probability=1.0,
...     mask_replace_prob=1.0, random_replace_prob=0.0)
>>> masked.tolist(), labels.tolist()
([[2, 4, 4, 4, 3]], [[-100, 7, 8, 9, -100]])
"""
from __future__ import annotations

import functools
import operator
import sys
import threading
from typing import Iterable, Optional, Tuple

import numpy as np

from tokkit._native import MAX_VOCAB_SIZE, pure_python_requested
from tokkit.errors import TokkitError

try:
    from tokkit._native import mask as _compiled
except ImportError:  # a checkout that was never built: the numpy twin is exact, only slower
    _compiled = None

__all__ = ["mask_tokens", "row_keys", "batch_seed", "seed_keys", "MaskSpec"]

IGNORE_INDEX = -100
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TWO32 = 1 << 32
_GAMMA_INT = int(_GAMMA)
_MASK64 = (1 << 64) - 1
# Batches smaller than this run on one thread: spawning a thread costs ~50-80 us on the
# reference VM, as much as masking 100 rows of 128, so only big batches are split in two.
_THREAD_MIN_POSITIONS = 1 << 18
# Gap table: thresholds for gaps 0 .. _GAP_TABLE - 1 (a longer gap skips that many positions and
# draws again), and a first-guess table over the top _GAP_BUCKET_BITS bits of the 53-bit draw.
_GAP_TABLE = 1024
_GAP_BUCKET_BITS = 12


def gap_tables(p: float) -> Tuple[np.ndarray, np.ndarray]:
    """Inverse-CDF tables of the geometric gap law P(g) = p(1-p)^g on a 32-bit uniform draw U.

    The gap is the smallest g with U < cdf[g]; cdf[-1] = 2**32 is a sentinel meaning "longer than
    the table". start[b] is the gap of the smallest U whose top bits are b.

    >>> cdf, start = gap_tables(0.5)
    >>> cdf[:2].tolist(), int(cdf[-1]) == 2**32, int(start[0]), int(start[-1]) > 0
    ([2147483648, 3221225472], True, 0, True)
    """
    g = np.arange(1, _GAP_TABLE + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        cdf = np.rint(-np.expm1(g * np.log1p(-p)) * float(_TWO32)) if p < 1.0 else np.full(_GAP_TABLE, float(_TWO32))
    cdf = np.append(np.clip(cdf, 0, _TWO32).astype(np.uint64), np.uint64(_TWO32))
    lows = np.arange(1 << _GAP_BUCKET_BITS, dtype=np.uint64) << np.uint64(32 - _GAP_BUCKET_BITS)
    start = np.searchsorted(cdf[:-1], lows, side="right").astype(np.uint16)
    return cdf, start


def _threshold(p: float) -> int:
    # Compared against a uniform 32-bit integer: P(u < round(p * 2**32)) = p within 2**-33.
    return int(round(p * _TWO32))


class MaskSpec:
    """Validated masking settings and the lookup tables built from them (cheap to reuse).

    Memory and time grow with the number of special ids, not with `vocab_size`: a vocabulary of
    2**31 - 1 ids costs what one of 30,000 does.

    >>> spec = MaskSpec(vocab_size=6, mask_token_id=4, special_ids=[0, 4])
    >>> spec.special.tolist(), spec.n_allowed, spec.nth_allowed(np.arange(4)).tolist()
    ([0, 4], 4, [1, 2, 3, 5])
    """

    def __init__(self, *, vocab_size: int, mask_token_id: int, special_ids: Iterable[int],
                 mlm_probability: float = 0.15, mask_replace_prob: float = 0.8,
                 random_replace_prob: float = 0.1):
        vocab_size = _whole("vocab_size", vocab_size)
        if not 0 < vocab_size <= MAX_VOCAB_SIZE:
            raise TokkitError(f"vocab_size must lie in [1, 2**31 - 1], got {vocab_size}")
        for name, p in (("mlm_probability", mlm_probability), ("mask_replace_prob", mask_replace_prob),
                        ("random_replace_prob", random_replace_prob)):
            if not (0.0 <= float(p) <= 1.0):
                raise TokkitError(f"{name} must be within [0, 1], got {p}")
        if mask_replace_prob + random_replace_prob > 1.0 + 1e-9:
            raise TokkitError(
                f"mask_replace_prob + random_replace_prob must not exceed 1, got "
                f"{mask_replace_prob} + {random_replace_prob}")
        mask_token_id = _whole("mask_token_id", mask_token_id)
        if not 0 <= mask_token_id < vocab_size:
            raise TokkitError(f"mask_token_id {mask_token_id} is outside the vocabulary [0, {vocab_size})")
        special = sorted({_whole("special_ids", i) for i in special_ids})
        if special and (special[0] < 0 or special[-1] >= vocab_size):
            raise TokkitError(f"special_ids must lie in [0, {vocab_size}), got {special}")
        special = np.asarray(special, dtype=np.int64)
        # What the spec is built from: pickling sends these and rebuilds the tables, since the
        # compiled kernel's views cannot be pickled (DataLoader workers under spawn or forkserver).
        self._args = dict(vocab_size=vocab_size, mask_token_id=mask_token_id, special_ids=special.tolist(),
                          mlm_probability=float(mlm_probability), mask_replace_prob=float(mask_replace_prob),
                          random_replace_prob=float(random_replace_prob))
        self.vocab_size = vocab_size
        self.mask_token_id = mask_token_id
        self.special = special
        # skip[i]: the non-special ids below special[i]; the k-th non-special id is k plus the
        # number of skip values at most k (see nth_allowed).
        self.skip = special - np.arange(special.size, dtype=np.int64)
        self.n_allowed = vocab_size - special.size
        self.special.setflags(write=False)  # specs are cached and shared between calls
        self.skip.setflags(write=False)
        self.t_choose = _threshold(mlm_probability)
        self.gap_cdf, self.gap_start = gap_tables(float(mlm_probability))
        self.gap_cdf.setflags(write=False)
        self.gap_start.setflags(write=False)
        self.t_mask = _threshold(mask_replace_prob)
        self.t_rand = min(_threshold(random_replace_prob), _TWO32 - self.t_mask)
        if self.t_rand and not self.n_allowed:
            raise TokkitError("every id is special, so there is no token to draw random replacements from")
        # The compiled kernel's typed views of the tables, acquired once rather than per call.
        self.tables = None if _compiled is None else _compiled.Tables(
            self.special, self.skip, self.vocab_size, self.gap_cdf, self.gap_start, self.t_choose, self.t_mask,
            self.t_rand, self.mask_token_id)

    def is_special_id(self, ids: np.ndarray) -> np.ndarray:
        """Which of `ids` are special (a bool array of the same shape)."""
        return np.isin(ids, self.special)

    def nth_allowed(self, k: np.ndarray) -> np.ndarray:
        """The k-th non-special id (from 0) for each k: the draw of a random replacement."""
        return k + np.searchsorted(self.skip, k, side="right")

    def __reduce__(self):
        return _rebuild_spec, (self._args,)


def _whole(name: str, value) -> int:
    """`value` as an int; a float, bool or str is a TokkitError rather than a silent truncation."""
    if isinstance(value, (bool, np.bool_)):
        raise TokkitError(f"{name}: expected a whole number, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TokkitError(f"{name}: expected a whole number, got {value!r}") from None


def _rebuild_spec(args: dict) -> MaskSpec:
    return MaskSpec(**args)


def _check_rng(rng) -> np.random.BitGenerator:
    if not isinstance(rng, np.random.Generator):
        raise TokkitError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng.bit_generator


def row_keys(rng: np.random.Generator, rows: int) -> np.ndarray:
    """The two 64-bit hash keys of each row (shape (rows, 2), uint64) for one draw from `rng`.

    `mask_tokens(..., rng=rng)` masks with exactly these keys, so a row masked alone with
    `rng` and a row given `row_keys(rng, 1)[0]` as its keys get the same mask.

    >>> row_keys(np.random.default_rng(0), 3).shape
    (3, 2)
    """
    return seed_keys(batch_seed(rng), rows)


def batch_seed(rng: np.random.Generator) -> int:
    """One 64-bit draw from `rng`; the row keys of a batch are derived from it (see `seed_keys`).

    >>> 0 <= batch_seed(np.random.default_rng(0)) < 2**64
    True
    """
    bits = _check_rng(rng)
    if isinstance(bits, np.random.MT19937):
        return int(rng.integers(0, np.iinfo(np.uint64).max, dtype=np.uint64, endpoint=True))
    return bits.random_raw()


def seed_keys(seed: int, rows: int) -> np.ndarray:
    """The row keys the kernel derives from a batch seed: row r gets hashes 2r+1 and 2r+2 of it.

    One draw per batch instead of two per row saves the caller's generator most of its work.

    >>> seed_keys(5, 2).shape
    (2, 2)
    """
    if rows <= 4:  # the collator asks for one row at a time: Python ints beat numpy's call overhead
        return np.array([[_mix_int(seed + (2 * r + 1 + k) * _GAMMA_INT) for k in (0, 1)] for r in range(rows)],
                        dtype=np.uint64).reshape(rows, 2)
    counter = np.arange(1, 2 * rows + 1, dtype=np.uint64) * _GAMMA
    with np.errstate(over="ignore"):
        return _mix(np.uint64(seed) + counter).reshape(rows, 2)


def _mix_int(z: int) -> int:
    """SplitMix64's finaliser on a Python int, wrapping to 64 bits like the C kernel."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def mask_tokens(input_ids, special_tokens_mask, *, vocab_size: int, mask_token_id: int,
                special_ids: Iterable[int], rng: np.random.Generator, mlm_probability: float = 0.15,
                mask_replace_prob: float = 0.8, random_replace_prob: float = 0.1,
                word_ids=None) -> Tuple[np.ndarray, np.ndarray]:
    """Mask a batch of ids for MLM; return `(masked_ids, labels)` and never touch `input_ids`.

    `labels` (int64) holds the original id where a position was chosen and -100 elsewhere.
    Positions flagged in `special_tokens_mask` or holding an id in `special_ids` are never chosen;
    random replacements are uniform over `range(vocab_size)` minus `special_ids`. With `word_ids`
    (same shape; a run of equal non-negative ids is one word, negative ids stand alone), each word
    is chosen with probability `mlm_probability` and the 80/10/10 choice is made per token.

    >>> ids = np.full((4, 64), 7)
    >>> masked, labels = mask_tokens(ids, np.zeros_like(ids), vocab_size=10, mask_token_id=4,
    ...     special_ids=[4], rng=np.random.default_rng(1))
    >>> bool(((labels == 7) | (labels == -100)).all())
    True
    """
    spec = _cached_spec(_whole("vocab_size", vocab_size), _whole("mask_token_id", mask_token_id),
                        frozenset(_whole("special_ids", i) for i in special_ids),
                        float(mlm_probability), float(mask_replace_prob), float(random_replace_prob))
    return apply_mask(spec, input_ids, special_tokens_mask, rng=rng, word_ids=word_ids)


class _OutputPool:
    """Recycle output buffers once the caller has dropped every view of them.

    Fresh arrays of a few hundred kB come from new pages, and on a VM the page faults of the first
    write cost as much as masking the batch. The pool hands out views of buffers it keeps; a
    buffer whose only reference is the pool's own is free again. At most `keep` pairs per shape.
    """

    def __init__(self, keep: int = 4):
        self.keep = keep
        self.pairs = {}
        self.lock = threading.Lock()

    def take(self, shape, dtype):
        key = (shape, np.dtype(dtype).str)
        with self.lock:
            pairs = self.pairs.setdefault(key, [])
            for pair in pairs:
                # A free buffer is referenced by the pool's tuple and getrefcount's argument only;
                # every live view handed out (numpy collapses view chains to it) adds one.
                if sys.getrefcount(pair[0]) <= 2 and sys.getrefcount(pair[1]) <= 2:
                    break
            else:
                pair = (np.empty(shape, dtype=dtype), np.empty(shape, dtype=np.int64))
                if len(pairs) < self.keep:
                    pairs.append(pair)
                if len(self.pairs) > 8:  # many shapes in turn (e.g. per-batch widths): start over
                    self.pairs = {key: pairs}
            return pair[0][...], pair[1][...]


_POOL = _OutputPool()


@functools.lru_cache(maxsize=16)
def _cached_spec(vocab_size, mask_token_id, special_ids, mlm_probability, mask_replace_prob, random_replace_prob):
    # Building the lookup tables costs ~0.3 ms for a 30k vocabulary, as much as masking a batch.
    return MaskSpec(vocab_size=vocab_size, mask_token_id=mask_token_id, special_ids=special_ids,
                    mlm_probability=mlm_probability, mask_replace_prob=mask_replace_prob,
                    random_replace_prob=random_replace_prob)


def apply_mask(spec: MaskSpec, input_ids, special_tokens_mask, *, rng: Optional[np.random.Generator] = None,
               keys: Optional[np.ndarray] = None, word_ids=None, threads: Optional[int] = None):
    """`mask_tokens` with prebuilt settings; row keys come from `rng` or are given as `keys`."""
    ids = np.asarray(input_ids)
    if ids.dtype.kind not in "iu":
        raise TokkitError(f"input_ids must hold integers, got dtype {ids.dtype}")
    if ids.ndim not in (1, 2):
        raise TokkitError(f"input_ids must be 1-D or 2-D, got shape {ids.shape}")
    if np.iinfo(ids.dtype).max < spec.vocab_size - 1:  # a random replacement would wrap around
        raise TokkitError(f"input_ids of dtype {ids.dtype} cannot hold the ids of a {spec.vocab_size:,}-token "
                          "vocabulary")
    special = np.asarray(special_tokens_mask)
    if special.shape != ids.shape:
        raise TokkitError(f"special_tokens_mask has shape {special.shape} but input_ids has shape {ids.shape}")
    words = None
    if word_ids is not None:
        words = np.asarray(word_ids)
        if words.shape != ids.shape:
            raise TokkitError(f"word_ids has shape {words.shape} but input_ids has shape {ids.shape}")
        if words.size and words.dtype.kind not in "iu":  # floats would be truncated into other words
            raise TokkitError(f"word_ids must hold integers, got dtype {words.dtype}")
        words = np.ascontiguousarray(words.reshape(-1, ids.shape[-1]) if ids.ndim == 2 else words[None],
                                     dtype=np.int64)
    shape = ids.shape
    ids2 = ids.reshape(1, -1) if ids.ndim == 1 else ids
    dtype = np.int32 if ids.dtype.itemsize <= 4 and ids.dtype.char not in "IL" else np.int64  # uint32: int64
    ids2 = np.ascontiguousarray(ids2, dtype=dtype)
    special2 = special.reshape(ids2.shape)
    special2 = special2.view(np.uint8) if special2.dtype.char in "?bB" else special2 != 0
    special2 = np.ascontiguousarray(special2, dtype=np.uint8)
    seed = 0
    if keys is None:
        seed = batch_seed(rng)
    else:
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        if keys.shape != (ids2.shape[0], 2):
            raise TokkitError(f"keys must have shape ({ids2.shape[0]}, 2), got {keys.shape}")
    out, labels = _POOL.take(ids2.shape, ids2.dtype)
    if spec.tables is not None and not pure_python_requested():
        if threads is None:
            threads = 2 if ids2.size >= _THREAD_MIN_POSITIONS else 1
        bad = _compiled.mask_rows(ids2, special2, words, keys, spec.tables, out, labels, seed, threads)
    else:
        if keys is None:
            keys = seed_keys(seed, ids2.shape[0])
        bad = _mask_rows_numpy(ids2, special2, words, keys, spec, out, labels)
    if bad >= 0:
        row = ids2[bad]
        wrong = row[(row < 0) | (row >= spec.vocab_size)][0]
        raise TokkitError(f"input_ids holds id {wrong}, outside the vocabulary [0, {spec.vocab_size})")
    out = out.astype(ids.dtype, copy=False)
    return out.reshape(shape), labels.reshape(shape)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a uint64 array (wrapping arithmetic, like the C kernel)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _mask_rows_numpy(ids, special, words, keys, spec: MaskSpec, out, labels) -> int:
    """The kernel in vectorised numpy: the same draws, hence the same masks, only slower."""
    rows, cols = ids.shape
    bad = (ids < 0) | (ids >= spec.vocab_size)
    out[...] = ids
    labels[...] = IGNORE_INDEX
    if not ids.size:
        return -1
    bad_row = bad.any(axis=1)
    safe = np.where(bad, 0, ids)
    eligible = (special == 0) & ~spec.is_special_id(safe) & ~bad_row[:, None]
    counter = np.arange(1, cols + 1, dtype=np.uint64) * _GAMMA
    with np.errstate(over="ignore"):
        if words is None:
            r, c, hi = _gap_choices(keys, spec, rows, cols, counter)
            keep = eligible[r, c]
            r, c, hi = r[keep], c[keep], hi[keep]
            pick = _mix(keys[r, 1] + counter[c]) >> np.uint64(32)
        else:
            h = _mix(keys[:, :1] + counter[None, :])
            decide = (h & np.uint64(0xFFFFFFFF)) < np.uint64(spec.t_choose)
            r, c = np.nonzero(_whole_words(decide, eligible, words, structural=(special != 0) | bad))
            hi = h[r, c] >> np.uint64(32)
            h2 = _mix(keys[r, 1] + counter[c])
            pick = h2 >> np.uint64(32)
        labels[r, c] = ids[r, c]
        to_mask = hi < np.uint64(spec.t_mask)
        to_rand = ~to_mask & (hi < np.uint64(spec.t_mask + spec.t_rand))
        out[r[to_mask], c[to_mask]] = spec.mask_token_id
        if to_rand.any():
            token = (pick[to_rand] * np.uint64(spec.n_allowed)) >> np.uint64(32)
            out[r[to_rand], c[to_rand]] = spec.nth_allowed(token.astype(np.int64))
    bad_rows = np.flatnonzero(bad_row)
    return int(bad_rows[0]) if bad_rows.size else -1


def _gap_choices(keys, spec: MaskSpec, rows: int, cols: int, counter):
    """Row, column and 80/10/10 bits of every chosen position before eligibility, as the kernel's
    gap walk finds them.

    Every draw moves at least one position on, so `cols` draws per row always reach the row's end.
    """
    if spec.t_choose == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
    h = _mix(keys[:, :1] + counter[None, :])
    table = spec.gap_cdf.size - 1
    g = np.searchsorted(spec.gap_cdf[:-1], (h >> np.uint64(32)).ravel(), side="right")
    g = g.reshape(rows, cols).astype(np.int64)
    end = np.cumsum(np.minimum(g + 1, table), axis=1)  # positions consumed after each draw
    r, k = np.nonzero((g < table) & (end <= cols))
    return r, end[r, k] - 1, h[r, k] & np.uint64(0xFFFFFFFF)


def _whole_words(decide, eligible, words, structural):
    """Chosen positions when each word's first token decides for the whole word.

    Runs of equal non-negative word ids form words; a structural position (special_tokens_mask,
    or an id outside the vocabulary) ends a run, while a special id inside a word (an [UNK])
    is skipped over: it is never chosen, but the word goes on after it.
    """
    rows, cols = words.shape
    keep = eligible | structural
    idx = np.flatnonzero(keep.ravel())  # row-major positions that take part in runs
    w = words.ravel()[idx]
    row = idx // cols
    starts = np.ones(idx.size, dtype=bool)
    if idx.size > 1:
        prev = idx[:-1]
        starts[1:] = ~((row[1:] == row[:-1]) & (w[1:] >= 0) & (w[1:] == w[:-1]) & ~structural.ravel()[prev])
    run = np.cumsum(starts) - 1
    run_decision = decide.ravel()[idx][starts]
    chosen = np.zeros(rows * cols, dtype=bool)
    chosen[idx] = run_decision[run] if idx.size else False
    return chosen.reshape(rows, cols) & eligible
