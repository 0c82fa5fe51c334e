"""BPE: the piece's characters merged pair by pair, the lowest-ranked merge first.

The twin follows tokenizers' model step by step: each character becomes a symbol (with the
continuing-subword prefix after the first and the end-of-word suffix on the last), unknown ones
become byte tokens or the unknown token, then merges run in rank order, leftmost first.

>>> m = BPE(vocab=("a", "b", "c", "ab", "abc"), merges=(("a", "b"), ("ab", "c")))
>>> m.tokenize("abcab")
[(4, 0, 3), (3, 3, 5)]
"""
from __future__ import annotations

import bisect
import heapq
import itertools
import operator
from array import array
from dataclasses import dataclass
from functools import cached_property

from tokkit._native.pipeline import ModelKind, token_blob
from tokkit.errors import TokkitError
from tokkit.tokenizer.models.wordlevel import (PlainState, check_type, json_field, json_kind, json_object, read_vocab,
                                               with_file_ids)
from tokkit.tokenizer.vocab import check_merge, token_ids


def byte_token(byte: int) -> str:
    """The byte-fallback token of one byte value: "<0x41>" (two upper-case hex digits).

    >>> byte_token(0xC3)
    '<0xC3>'
    """
    return f"<0x{byte:02X}>"


def byte_ids(ids: dict[str, int]) -> list[int]:
    """The ids of the 256 byte-fallback tokens by byte value (-1 where the vocabulary has none)."""
    return [ids.get(byte_token(b), -1) for b in range(256)]


def metaspace_cut_is_safe(tokens) -> bool:
    """Whether no token holds U+2581 past its first char while U+2581 is a token itself: no piece of
    the model can then cross a U+2581 (nor join unknown chars across it), so the compiled path may cut
    the text before each one and remember words instead of whole lines (a Metaspace without split, or
    a Replace of " " by U+2581 with no pre-tokenizer).

    >>> metaspace_cut_is_safe(["\u2581", "\u2581a", "b"]), metaspace_cut_is_safe(["\u2581", "a\u2581"])
    (True, False)
    """
    if "\u2581" not in tokens:
        return False
    present = list(filter(None, tokens))
    # a token holds U+2581 past its first char when it holds more of them than the one it may start with
    marks = itertools.repeat("\u2581")
    return sum(map(str.count, present, marks)) == sum(map(str.startswith, present, marks))


def utf8_len(ch: str) -> int:
    """Bytes of one character in UTF-8 (a lone surrogate counts 3, as surrogatepass writes it)."""
    code = ord(ch)
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


@dataclass(frozen=True)
class BPE(PlainState):
    """tokenizers' BPE model: the vocabulary in id order, the merges in rank order, and the options.

    `unk_token` (or None: unknown characters are dropped), `fuse_unk` (consecutive unknown
    characters make one unknown token), `byte_fallback` (an unknown character becomes its UTF-8 bytes
    as <0xNN> tokens when all of them are in the vocabulary), `ignore_merges` (a piece that is a
    vocabulary token is that token, no merges run). `dropout` is None or 0: a positive dropout is
    random, and refused.

    >>> BPE(vocab=("<unk>", "a"), merges=(), unk_token="<unk>", fuse_unk=True).tokenize("a??a")
    [(1, 0, 1), (0, 1, 3), (1, 3, 4)]
    """

    vocab: tuple[str | None, ...]  # by id; None at an id the file leaves unused
    merges: tuple[tuple[str, str], ...]
    dropout: float | None = None
    unk_token: str | None = None
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    fuse_unk: bool = False
    byte_fallback: bool = False
    ignore_merges: bool = False

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "BPE":
        at = f"{where}: model.BPE"
        json_object(obj, at)
        check_type(obj, "BPE", at)
        opt_str = (str, type(None))
        model = cls(vocab=read_vocab(obj, at), merges=read_merges(obj, at),
                    dropout=json_field(obj, "dropout", (float, type(None)), at, None),
                    unk_token=json_field(obj, "unk_token", opt_str, at, None),
                    continuing_subword_prefix=json_field(obj, "continuing_subword_prefix", opt_str, at, None),
                    end_of_word_suffix=json_field(obj, "end_of_word_suffix", opt_str, at, None),
                    **{key: json_field(obj, key, (bool,), at, False)
                       for key in ("fuse_unk", "byte_fallback", "ignore_merges")})
        with_file_ids(model, obj).check(at)
        return model

    def check(self, where: str) -> None:
        """What tokenizers refuses at load, or fails on later (an unk_token outside the vocabulary)."""
        if self.dropout is not None and self.dropout != 0:
            raise TokkitError(f"{where}: dropout {self.dropout!r} is not supported (only null or 0: "
                              "a positive dropout makes encoding random)")
        if self.unk_token is not None and self.unk_token not in self.ids:
            raise TokkitError(f"{where}: unk_token {self.unk_token!r} is not in the vocabulary")
        if self.byte_fallback and (self.continuing_subword_prefix or self.end_of_word_suffix):
            # tokenizers spells the prefix/suffix in bytes too, and its offsets run past the word's end
            raise TokkitError(f"{where}: byte_fallback together with continuing_subword_prefix or "
                              "end_of_word_suffix is not supported")
        # the check finds the merges' ids: kept as `merge_ids` (not looked up twice)
        self.__dict__["merge_ids"] = merge_ids(self.vocab, self.ids, self.merges, self.continuing_subword_prefix,
                                             where)

    def to_json(self) -> dict:
        return {"type": "BPE", "dropout": None if self.dropout is None else float(self.dropout),
                "unk_token": self.unk_token, "continuing_subword_prefix": self.continuing_subword_prefix,
                "end_of_word_suffix": self.end_of_word_suffix, "fuse_unk": self.fuse_unk,
                "byte_fallback": self.byte_fallback, "ignore_merges": self.ignore_merges,
                "vocab": token_ids(self.vocab), "merges": [list(pair) for pair in self.written_merges]}

    @cached_property
    def ids(self) -> dict[str, int]:
        """token -> id."""
        return token_ids(self.vocab)

    @cached_property
    def merge_ids(self) -> tuple[array, array, array]:
        """The left, right and merged ids of the merges by rank (int32 arrays)."""
        return merge_ids(self.vocab, self.ids, self.merges, self.continuing_subword_prefix, "BPE")

    @cached_property
    def ranks(self) -> dict[tuple[int, int], tuple[int, int]]:
        """(left id, right id) -> (rank, merged id); a merge listed twice keeps its last rank."""
        return {(a, b): (rank, m) for rank, (a, b, m) in enumerate(zip(*self.merge_ids))}

    @property
    def written_merges(self) -> list[tuple[str, str]]:
        """The merges as tokenizers writes them back: each pair once, at its last rank."""
        return [self.merges[rank] for rank, _ in sorted(self.ranks.values())]

    @property
    def tokens(self) -> tuple[str | None, ...]:
        """The tokens by id."""
        return self.vocab

    @cached_property
    def cuts_at_metaspace(self) -> bool:
        """Whether the compiled path may cut pieces before each U+2581 (see metaspace_cut_is_safe)."""
        plain = not (self.ignore_merges or self.continuing_subword_prefix or self.end_of_word_suffix)
        return plain and metaspace_cut_is_safe(self.vocab)

    def native(self) -> dict:
        """The compiled model's description (tokkit._native.pipeline.PipelineEncoder.build)."""
        return {"kind": ModelKind.M_BPE, "unk_id": -1 if self.unk_token is None else self.ids[self.unk_token],
                "prefix": (self.continuing_subword_prefix or "").encode("utf-8", "surrogatepass"),
                "suffix": (self.end_of_word_suffix or "").encode("utf-8", "surrogatepass"),
                "byte_fallback": self.byte_fallback, "fuse_unk": self.fuse_unk, "ignore_merges": self.ignore_merges,
                "byte_ids": byte_ids(self.ids), "cut_at_metaspace": self.cuts_at_metaspace,
                "tokens": token_blob(self.vocab), "merges": self.merge_ids}

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """[(id, start, end)] for one piece, offsets in characters as tokenizers reports them."""
        if not piece:
            return []
        if self.ignore_merges and piece in self.ids:  # the piece as it is: no prefix, no suffix
            return [(self.ids[piece], 0, len(piece))]
        return char_offsets(piece, merge_symbols(self.symbols(piece), self.ranks))

    def symbols(self, piece: str) -> list[tuple[int, int]]:
        """The piece before merging: (id, bytes covered) for each character, byte token or unknown run."""
        ids, out, unk = self.ids, [], None
        for i, ch in enumerate(piece):
            token = (self.continuing_subword_prefix or "") + ch if i else ch
            if i == len(piece) - 1 and self.end_of_word_suffix:
                token += self.end_of_word_suffix
            if token in ids:
                if unk:
                    out.append(unk)
                    unk = None
                out.append((ids[token], utf8_len(ch)))
                continue
            if self.byte_fallback:
                pieces = [ids.get(byte_token(b)) for b in token.encode("utf-8", "surrogatepass")]
                if None not in pieces:  # tokenizers leaves a pending unknown run open across these
                    out.extend((tid, 1) for tid in pieces)
                    continue
            if self.unk_token is not None:
                if unk and self.fuse_unk:
                    unk = (unk[0], unk[1] + utf8_len(ch))
                else:
                    if unk:
                        out.append(unk)
                    unk = (ids[self.unk_token], utf8_len(ch))
        return out + [unk] if unk else out


def read_merges(obj: dict, where: str) -> tuple[tuple[str, str], ...]:
    """The "merges" list: [left, right] pairs, or the older "left right" strings (all one form)."""
    merges = json_field(obj, "merges", (list,), where)
    if _pairs_of_strings(merges):
        return tuple(map(tuple, merges))
    if all(isinstance(m, str) for m in merges):
        pairs = [m.split(" ") for m in merges]
        bad = next((k for k, p in enumerate(pairs) if len(p) != 2), None)
        if bad is not None:
            raise TokkitError(f"{where}: merges[{bad}] {merges[bad]!r} must be two tokens separated by one space")
        return tuple((a, b) for a, b in pairs)
    for k, m in enumerate(merges):
        if not (isinstance(m, list) and len(m) == 2 and all(isinstance(s, str) for s in m)):
            raise TokkitError(f"{where}: merges[{k}] must be a list of two strings (or every merge "
                              f"one \"left right\" string), got {json_kind(m)} {m!r}"[:300])
    return tuple((a, b) for a, b in merges)


def _pairs_of_strings(merges: list) -> bool:
    """Whether every merge is a list of two strings (tokenizers' current form), checked in C loops."""
    if set(map(type, merges)) != {list} or set(map(len, merges)) != {2}:
        return False
    return set(map(type, itertools.chain.from_iterable(merges))) == {str}


def merge_ids(vocab, ids: dict[str, int], merges, prefix: str | None, where: str) -> tuple[array, array, array]:
    """The left, right and merged ids of each merge by rank (int32 arrays), checking every merge as
    tokenizers does at load; the lookups run in C loops (a 128k-merge file loads through them).

    The merged token is left + right with the first len(prefix) bytes of right cut off, whatever
    they are (tokenizers' rule when there is a continuing-subword prefix).

    >>> [list(side) for side in merge_ids(["a", "b", "ab"], {"a": 0, "b": 1, "ab": 2}, [("a", "b")], None, "m")]
    [[0], [1], [2]]
    """
    cut = len(prefix.encode()) if prefix else 0
    lefts, rights = list(map(operator.itemgetter(0), merges)), list(map(operator.itemgetter(1), merges))
    merged: list[int | None] = []
    for a, b in _join_blocks(lefts, rights):
        if cut:
            joined = [_merged_with_prefix(merges[rank], ids, cut, f"{where}: merges[{rank}]") for rank in range(a, b)]
        else:
            joined = list(map(operator.add, lefts[a:b], rights[a:b]))
        merged += merged_token_ids(vocab, ids, joined)
    try:  # an array takes no None: a merge naming no token stops it
        return array("i", list(map(ids.get, lefts))), array("i", list(map(ids.get, rights))), array("i", merged)
    except TypeError:  # checked again one by one for the error's message
        for rank, pair in enumerate(merges):
            check_merge(pair, ids.keys(), f"{where}: merges[{rank}]")
        raise


JOIN_BLOCK = 1 << 22  # chars of merged tokens spelled out at once


def _join_blocks(lefts: list[str], rights: list[str]) -> list[tuple[int, int]]:
    """Ranges of merges whose merged tokens add up to about JOIN_BLOCK chars: merge_ids spells out one
    range at a time. Their total length can be the square of the file's (SentencePiece's BPE pieces
    "a", "aa", ... have a merge per split), which at once would take gigabytes.

    >>> _join_blocks(["a"] * 5, ["b"] * 5)
    [(0, 5)]
    """
    if sum(map(len, lefts)) + sum(map(len, rights)) <= JOIN_BLOCK:  # the usual file: one range
        return [(0, len(lefts))] if lefts else []
    ends = list(itertools.accumulate(map(operator.add, map(len, lefts), map(len, rights))))
    blocks, a = [], 0
    while a < len(ends):
        b = max(bisect.bisect_right(ends, (ends[a - 1] if a else 0) + JOIN_BLOCK), a + 1)
        blocks.append((a, b))
        a = b
    return blocks


def merged_token_ids(vocab, ids: dict[str, int], tokens: list[str]) -> list[int | None]:
    """ids.get of each token the merges make. Trainers give those tokens consecutive ids in rank
    order, so each is first compared with the token at the id after the previous one's (a string
    compare in a C loop, cheaper than hashing it and probing the dict), and only the others are
    looked up; the guess holds only when no token is listed at two ids.

    >>> merged_token_ids(["a", "b", "ab", "ba", "x"], {"a": 0, "b": 1, "ab": 2, "ba": 3, "x": 4}, ["ab", "ba", "bb"])
    [2, 3, None]
    """
    first = ids.get(tokens[0]) if tokens else None
    if first is None or len(ids) != len(vocab) - vocab.count(None):
        return list(map(ids.get, tokens))
    out = list(range(first, first + len(tokens)))
    same = list(map(operator.eq, tokens, vocab[first:first + len(tokens)]))
    same += [False] * (len(tokens) - len(same))  # past the vocabulary's end
    for k in itertools.compress(range(len(tokens)), map(operator.not_, same)):
        out[k] = ids.get(tokens[k])
    return out


def _merged_with_prefix(pair: tuple[str, str], ids: dict[str, int], cut: int, where: str) -> str:
    for side in pair:
        if side not in ids:
            raise TokkitError(f"{where}: merge {' '.join(pair)!r} names unknown token {side!r}")
    right = pair[1].encode()
    try:
        merged = pair[0] + right[cut:].decode() if len(right) >= cut else None
    except UnicodeDecodeError:
        merged = None
    if merged not in ids:
        raise TokkitError(f"{where}: merge {' '.join(pair)!r} makes no vocabulary token once the "
                          f"{cut}-byte prefix is cut from its right side")
    return merged


def merge_symbols(symbols: list[tuple[int, int]], ranks: dict) -> list[tuple[int, int]]:
    """Apply the merges: the lowest rank first, the leftmost first among equal ranks."""
    ids = [s[0] for s in symbols]
    size = [s[1] for s in symbols]  # bytes covered; 0 marks a symbol merged into its left neighbour
    nxt = list(range(1, len(symbols))) + [-1]
    prev = list(range(-1, len(symbols) - 1))
    queue = [(ranks[pair][0], i, ranks[pair][1]) for i, pair in enumerate(zip(ids, ids[1:])) if pair in ranks]
    heapq.heapify(queue)
    while queue:
        rank, pos, new = heapq.heappop(queue)
        right = nxt[pos]
        if not size[pos] or right == -1 or ranks.get((ids[pos], ids[right]), (0, -1))[1] != new:
            continue  # an entry made stale by an earlier merge
        ids[pos], size[pos], nxt[pos], size[right] = new, size[pos] + size[right], nxt[right], 0
        if nxt[pos] != -1:
            prev[nxt[pos]] = pos
        for left in (prev[pos], pos):  # the pairs the new symbol forms with its neighbours
            if left >= 0 and nxt[left] != -1 and (ids[left], ids[nxt[left]]) in ranks:
                rank, new = ranks[ids[left], ids[nxt[left]]]
                heapq.heappush(queue, (rank, left, new))
    return [(i, n) for i, n in zip(ids, size) if n]


def char_offsets(piece: str, symbols: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(id, start, end) in characters from each symbol's byte count, as tokenizers reports offsets.

    A symbol's bytes are laid end to end from 0; a span that cuts a character (a byte-fallback token)
    widens to the characters it touches, so each byte token of "é" has the span of "é".
    """
    char_of = [i for i, ch in enumerate(piece) for _ in range(utf8_len(ch))]
    out, pos = [], 0
    for tid, n in symbols:
        out.append((tid, char_of[pos], char_of[pos + n - 1] + 1))
        pos += n
    return out
