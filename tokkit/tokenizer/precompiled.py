"""SentencePiece's precompiled_charsmap: a double-array trie of UTF-8 keys over a pool of replacements.

The blob (raw bytes in a .model file, base64 in tokenizer.json) is a little-endian u32 `n` (the trie's
size in bytes), then n // 4 u32 units of a darts-clone double array, then the pool: replacement
strings in UTF-8, each ended by NUL. A unit packs, as darts-clone does:

- bit 8: has_leaf (a key ends at this node; its value sits in the unit at the node's base);
- bits 0-7 (plus bit 31, set in value units so they never match a byte): label, the byte that led here;
- bits 10-31 shifted left by 8 when bit 9 is set: offset, XORed with a node's position to give its base;
  the child for byte c sits at base ^ c;
- bits 0-30 of a value unit: value, the replacement's start in the pool.

Normalization is tokenizers' (from the spm_precompiled crate), not SentencePiece's own: the text is
cut into extended grapheme clusters (UAX #29); a cluster shorter than 6 bytes whose bytes start with
a key is replaced WHOLE by that key's replacement, where the key is the SHORTEST one that matches (so
"ｅ" + U+0301 becomes "e": the accent goes with the cluster); otherwise each character is replaced
by the shortest key that starts its bytes, or kept. `changes` gives the result as the (char, change)
list tokenizers hands to NormalizedString.transform, with its alignment quirk: a replacement shorter
than what it replaces charges the removal to the previous character written (so removing the first
character of a text shifts the alignments of the next ones; see tokkit.tokenizer.normalizers).

>>> cm = parse_charsmap(build_charsmap({"ｅ": "e", "ﬁ": "fi"}))
>>> "".join(c for c, _ in changes(cm, "ﬁｅ\\u0301!"))
'fie!'
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tokkit._native import unicode_tables as ut
from tokkit.errors import TokkitError

# Grapheme_Cluster_Break values as numbered in unicode_tables.GRAPHEME_BREAK
(OTHER, CR, LF, CONTROL, EXTEND, ZWJ, RI, PREPEND, SPACING_MARK, L, V, T, LV, LVT) = range(14)
_BREAK_AFTER = (CR, LF, CONTROL)
_HANGUL_NEXT = {L: (L, V, LV, LVT), LV: (V, T), V: (V, T), LVT: (T,), T: (T,)}
WHOLE_CLUSTER_BYTES = 6  # clusters of fewer UTF-8 bytes are looked up whole


@dataclass(frozen=True, eq=False)
class Charsmap:
    """A parsed precompiled_charsmap: the trie's units and the replacement pool.

    >>> cm = parse_charsmap(build_charsmap({"a": "b"}))
    >>> cm.trie.dtype, cm.pool
    (dtype('uint32'), b'b\\x00')
    """

    trie: np.ndarray  # uint32 units
    pool: bytes


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & 0x200) >> 6)


def _label(unit: int) -> int:
    return unit & 0x800000FF


def common_prefix_search(trie: np.ndarray, key: bytes) -> list[int]:
    """Values of the keys that are prefixes of `key`, shortest first (a NUL byte ends the search).

    Every index stays inside `trie` when parse_charsmap accepted it; the walk takes one step per byte.

    >>> common_prefix_search(parse_charsmap(build_charsmap({"a": "x", "ab": "y"})).trie, b"abc")
    [0, 2]
    """
    pos = _offset(int(trie[0]))
    values = []
    for byte in key:
        if byte == 0:
            break
        pos ^= byte
        unit = int(trie[pos])
        if _label(unit) != byte:
            break
        pos ^= _offset(unit)
        if unit & 0x100:  # has_leaf: the value unit sits at this node's base
            values.append(int(trie[pos]) & 0x7FFFFFFF)
    return values


def transform(cm: Charsmap, chunk: str) -> str | None:
    """The replacement of the shortest key starting `chunk`, or None.

    >>> cm = parse_charsmap(build_charsmap({"a": "x", "ab": "y"}))
    >>> transform(cm, "ab"), transform(cm, "b")
    ('x', None)
    """
    values = common_prefix_search(cm.trie, chunk.encode("utf-8"))
    if not values:
        return None
    start = values[0]
    end = cm.pool.find(b"\0", start)
    return cm.pool[start:end if end >= 0 else len(cm.pool)].decode("utf-8")


def changes(cm: Charsmap, text: str) -> list[tuple[str, int]]:
    """`text` normalized by the charsmap, as (char, change) pairs for NormalizedString.transform.

    change 0 replaces the next character, 1 inserts, -k replaces and removes k more (tokenizers').

    >>> changes(parse_charsmap(build_charsmap({"ﬁ": "fi", "\\x01": ""})), "ﬁ\\x01a")
    [('f', 0), ('i', 0), ('a', 0)]
    """
    out: list[tuple[str, int]] = []
    start = 0
    for end in grapheme_ends(text):
        cluster = text[start:end]
        whole = transform(cm, cluster) if len(cluster.encode("utf-8")) < WHOLE_CLUSTER_BYTES else None
        if whole is not None:
            _replace(out, len(cluster), whole)
        else:
            for ch in cluster:
                new = transform(cm, ch)
                if new is None:
                    out.append((ch, 0))
                else:
                    _replace(out, 1, new)
        start = end
    return out


def _replace(out: list[tuple[str, int]], old_count: int, new: str) -> None:
    """tokenizers' `replace`: the last (new - old) characters are insertions; a shrink is charged to
    the last character written, whichever it is (nothing when none was written yet)."""
    out.extend((c, 0) for c in new)
    diff = len(new) - old_count
    if diff > 0:
        for k in range(len(out) - diff, len(out)):
            out[k] = (out[k][0], 1)
    elif diff < 0 and out:
        out[-1] = (out[-1][0], out[-1][1] + diff)


# ------------------------------------------------------------------------------ grapheme clusters

@lru_cache(maxsize=1)
def _grapheme_table() -> np.ndarray:
    return ut.norm_tables()["grapheme"]


def grapheme_ends(text: str, table: np.ndarray | None = None) -> list[int]:
    """End of each extended grapheme cluster of `text` (UAX #29, rules GB3 to GB999).

    `table`: uint16 grapheme properties per code point (unicode_tables.norm_tables()["grapheme"]).

    >>> grapheme_ends("e\\u0301\\r\\n\\U0001F469\\u200d\\U0001F469!")
    [2, 4, 7, 8]
    """
    g = _grapheme_table() if table is None else table
    props = [int(g[ord(c)]) for c in text]
    ends = []
    state = _Behind()
    for i, cur in enumerate(props):
        if i and _breaks(props[i - 1], cur, state):
            ends.append(i)
        state.step(cur)
    if text:
        ends.append(len(text))
    return ends


class _Behind:
    """What the rules that look further back than one character need, up to the current character."""

    def __init__(self) -> None:
        self.pict = False  # the text ends with ExtPict Extend*
        self.pict_zwj = False  # ... ExtPict Extend* ZWJ (GB11)
        self.consonant = False  # ... InCB Consonant [InCB Extend | InCB Linker]*
        self.linker = False  # ... and that run holds a Linker (GB9c)
        self.ri_run = 0  # ... this many regional indicators (GB12, GB13)

    def step(self, cur: int) -> None:
        q = cur & 31
        self.pict_zwj = self.pict and q == ZWJ
        self.pict = bool(cur & ut.G_EXT_PICT) or (self.pict and q == EXTEND)
        if cur & ut.G_INCB_CONSONANT:
            self.consonant, self.linker = True, False
        elif self.consonant and cur & (ut.G_INCB_LINKER | ut.G_INCB_EXTEND):
            self.linker = self.linker or bool(cur & ut.G_INCB_LINKER)
        else:
            self.consonant = self.linker = False
        self.ri_run = self.ri_run + 1 if q == RI else 0


def _breaks(prev: int, cur: int, behind: _Behind) -> bool:
    """Whether a cluster boundary falls between two characters (their grapheme properties)."""
    p, q = prev & 31, cur & 31
    if p == CR and q == LF:
        return False  # GB3
    if p in _BREAK_AFTER or q in _BREAK_AFTER:
        return True  # GB4, GB5
    if q in _HANGUL_NEXT.get(p, ()):
        return False  # GB6-GB8
    if q in (EXTEND, ZWJ, SPACING_MARK) or p == PREPEND:
        return False  # GB9, GB9a, GB9b
    if cur & ut.G_INCB_CONSONANT and behind.consonant and behind.linker:
        return False  # GB9c: Consonant [Extend Linker]* Linker [Extend Linker]* x Consonant
    if cur & ut.G_EXT_PICT and behind.pict_zwj:
        return False  # GB11: ExtPict Extend* ZWJ x ExtPict
    return not (p == RI and q == RI and behind.ri_run % 2 == 1)  # GB12, GB13; else GB999


# ------------------------------------------------------------------------------ reading and building

def parse_charsmap(blob: bytes, where: str = "precompiled_charsmap") -> Charsmap:
    """Split and check a blob; anything tokenizers would fail on, or could crash on, is one TokkitError.

    >>> parse_charsmap(b"\\x08\\x00\\x00\\x00")
    Traceback (most recent call last):
    ...
    tokkit.errors.TokkitError: precompiled_charsmap: the trie needs 8 bytes, the blob has 0 after its size
    """
    if len(blob) < 4:
        raise TokkitError(f"{where}: the blob has {len(blob)} bytes, not even a trie size")
    size = int.from_bytes(blob[:4], "little")
    units = size // 4  # tokenizers reads size // 4 units; a remainder belongs to the pool
    if 4 + 4 * units > len(blob):
        raise TokkitError(f"{where}: the trie needs {size} bytes, the blob has {len(blob) - 4} after its size")
    if units == 0:
        raise TokkitError(f"{where}: the trie is empty")
    trie = np.frombuffer(blob, dtype="<u4", count=units, offset=4).astype(np.uint32)
    pool = bytes(blob[4 + 4 * units:])
    try:
        pool.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokkitError(f"{where}: the replacement pool is not UTF-8 (byte {exc.start})") from None
    _check_trie(trie, pool, where)
    return Charsmap(trie, pool)


def _check_trie(trie: np.ndarray, pool: bytes, where: str) -> None:
    """Walk every reachable node once (breadth first): each child block must lie inside the trie, and
    each value must start a character of the pool, so no walk can index outside either."""
    units = trie.astype(np.int64)
    n = len(units)
    offsets = (units >> 10) << ((units & 0x200) >> 6)
    labels = units & 0x800000FF
    child = np.flatnonzero((labels > 0) & (labels < 256))  # units a byte can lead to
    parent_base = child ^ labels[child]
    order = np.argsort(parent_base, kind="stable")
    child, parent_base = child[order], parent_base[order]
    starts = np.frombuffer(pool, dtype=np.uint8)
    seen = np.zeros(n, dtype=bool)
    seen[0] = True
    frontier = np.zeros(1, dtype=np.int64)
    while frontier.size:
        base = frontier ^ offsets[frontier]
        if np.any((base | 0xFF) >= n):
            raise TokkitError(f"{where}: a trie node's children lie outside the trie ({n} units)")
        leaf = base[((units[frontier] & 0x100) != 0) & (frontier != 0)]  # the root's bit is never read
        values = units[leaf] & 0x7FFFFFFF
        if np.any(values > len(pool)) or np.any((starts[values[values < len(pool)]] & 0xC0) == 0x80):
            raise TokkitError(f"{where}: a trie value points outside the replacement pool's characters")
        lo, hi = np.searchsorted(parent_base, base, "left"), np.searchsorted(parent_base, base, "right")
        kids = child[_ranges(lo, hi)]
        kids = np.unique(kids[~seen[kids]])
        seen[kids] = True
        frontier = kids


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Concatenated aranges lo[k]..hi[k]."""
    counts = hi - lo
    total = int(counts.sum())
    shift = np.repeat(lo - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
    return shift + np.arange(total)


def build_charsmap(rules: dict) -> bytes:
    """A precompiled_charsmap rewriting each key (str, or bytes for a raw byte prefix) to its value.

    For tests and tools: the units follow darts-clone's layout, so tokenizers reads the blob too.

    >>> transform(parse_charsmap(build_charsmap({"Å": "A"})), "Åb")
    'A'
    """
    keys = {(k.encode("utf-8") if isinstance(k, str) else bytes(k)): v for k, v in rules.items()}
    if any(not k or 0 in k for k in keys):
        raise TokkitError("build_charsmap: keys must be non-empty and free of NUL")
    pool, value = bytearray(), {}
    for k in sorted(keys):
        value[k] = len(pool)
        pool += keys[k].encode("utf-8") + b"\0"
    units = _double_array(keys, value)
    return (4 * len(units)).to_bytes(4, "little") + np.array(units, dtype="<u4").tobytes() + bytes(pool)


def _double_array(keys: dict, value: dict) -> list[int]:
    """Place the trie of `keys` breadth first: each node gets its own base, free at base ^ label for
    its children's labels and at base itself for its value unit."""
    prefixes = {k[:i] for k in keys for i in range(len(k) + 1)}
    units: dict[int, int] = {}
    used_bases: set[int] = set()
    queue = [(b"", 0)]
    for prefix, pos in queue:
        labels = sorted({k[len(prefix)] for k in prefixes if len(k) > len(prefix) and k.startswith(prefix)})
        base = 256
        while base in used_bases or base in units or any(base ^ c in units for c in labels):
            base += 1
        used_bases.add(base)
        if prefix in keys:
            units[base] = 0x80000000 | value[prefix]
        else:
            units[base] = 0x80000000  # reserved, never read: keeps this base to this node
        offset = pos ^ base
        assert offset < 1 << 21, "charsmap too large for this simple builder"
        units[pos] = (offset << 10) | (0x100 if prefix in keys else 0) | (prefix[-1] if prefix else 0)
        for c in labels:
            units[base ^ c] = 0  # placeholder, filled when the child is placed
            queue.append((prefix + bytes([c]), base ^ c))
    size = (max(units) // 256 + 1) * 256
    return [units.get(i, 0) for i in range(size)]
