"""BERT inputs from text: `tokkit.encode` -> a mapping of numpy arrays.

The tokenizer's template (BERT's `[CLS] A [SEP]` / `[CLS] A [SEP] B [SEP]`, RoBERTa's, or any
TemplateProcessing of its tokenizer.json), truncation, padding, overlapping windows.
Texts are encoded on threads with the GIL released; the assembly into rows is vectorised numpy.

>>> from tokkit.tokenizer import Tokenizer
>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"],
...                              merges=None, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
>>> out = encode(tok, ["a b", "a"], ["b", "b a b"])
>>> out["input_ids"].tolist()
[[2, 4, 5, 3, 5, 3, 0], [2, 4, 3, 5, 4, 5, 3]]
>>> out["token_type_ids"][1].tolist(), out["word_ids"][0].tolist(), out["sequence_ids"][0].tolist()
([0, 0, 0, 1, 1, 1, 1], [-1, 0, 1, -1, 0, -1, -1], [-1, 0, 0, -1, 1, -1, -1])
>>> encode(tok, [["a", "b a"]], is_split_into_words=True)["word_ids"].tolist()
[[-1, 0, 1, 1, -1]]
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from tokkit._native.rows import place_runs
from tokkit._threads import run_sliced
from tokkit.errors import TokkitError
from tokkit.inputs.words import check_word_rows, regroup_words, word_texts
from tokkit.tokenizer import Tokenizer, check_texts
from tokkit.tokenizer.post import Template

TRUNCATIONS = ("longest_first", "only_first", "only_second")
PADDINGS = ("longest", "max_length")
# The widest rows padding="max_length" builds: 2**20 tokens, far above any encoder's context,
# while a row of it (five int32 arrays) stays at 20 MiB. Truncation alone has no such bound: a
# max_length above MAX_LENGTH acts as MAX_LENGTH, since no row holds more than 2**31 - 1 tokens.
MAX_PADDED_LENGTH = 1 << 20
MAX_LENGTH = (1 << 31) - 1


FROM_TOKENIZER = object()  # default of the options a tokenizer.json's truncation/padding may set

_BUILTIN_DEFAULTS = {"max_length": 512, "truncation": "longest_first", "padding": "longest",
                     "pad_to_multiple_of": None, "padding_side": "right", "stride": 0}


def encode(tokenizer: Tokenizer, texts: Sequence[str], text_pairs: Sequence[str] | None = None, *,
           max_length: int = FROM_TOKENIZER, truncation: str | None = FROM_TOKENIZER,
           padding: str | None = FROM_TOKENIZER, pad_to_multiple_of: int | None = FROM_TOKENIZER,
           padding_side: str = FROM_TOKENIZER, stride: int = FROM_TOKENIZER,
           return_overflowing: bool = False, return_offsets: bool = False, is_split_into_words: bool = False,
           num_threads: int | None = None) -> Mapping[str, np.ndarray]:
    """Encode a batch (or a batch of pairs) into BERT model inputs.

    Returns input_ids, token_type_ids, attention_mask, special_tokens_mask, word_ids (-1 for the
    template's specials and padding; each text's words count from 0, B's too, as in transformers)
    and sequence_ids (0 for A's tokens, 1 for B's, -1 elsewhere) as int32 arrays of shape
    (rows, width); `offsets` (rows, width, 2) on request; `overflow_to_sample_mapping` with
    `return_overflowing`. With `padding=None` each value is a list of 1-D arrays instead.

    `return_overflowing` cuts what truncation drops into more rows of the same example, each
    window `stride` tokens into the one before: a single text's tokens, or for pairs the side
    truncation cuts (`truncation="only_second"`: the question A whole in every row, the context B
    in windows, as question answering needs; "only_first" the other way round).

    `is_split_into_words=True`: each text (and pair) is a list of words, each word encoded on its
    own (see tokkit.inputs.words); word_ids give each token its word's index, offsets count within
    the word.

    Options left out come from the tokenizer's file when it sets them (a Hub tokenizer.json's
    `truncation` and `padding`), else max_length=512, truncation="longest_first",
    padding="longest", pad_to_multiple_of=None, padding_side="right", stride=0.
    `padding="max_length"` and `pad_to_multiple_of` pad to at most MAX_PADDED_LENGTH (2**20) tokens.
    """
    given = {"max_length": max_length, "truncation": truncation, "padding": padding,
             "pad_to_multiple_of": pad_to_multiple_of, "padding_side": padding_side, "stride": stride}
    if isinstance(tokenizer, Tokenizer) and any(v is FROM_TOKENIZER for v in given.values()):
        defaults = {**_BUILTIN_DEFAULTS, **tokenizer.encode_defaults}
        given = {k: defaults[k] if v is FROM_TOKENIZER else v for k, v in given.items()}
    else:
        given = {k: _BUILTIN_DEFAULTS[k] if v is FROM_TOKENIZER else v for k, v in given.items()}
    max_length, truncation, padding = given["max_length"], given["truncation"], given["padding"]
    pad_to_multiple_of, padding_side, stride = given["pad_to_multiple_of"], given["padding_side"], given["stride"]
    truncation, padding, max_length = _check_options(tokenizer, texts, text_pairs, max_length, truncation, padding,
                                         pad_to_multiple_of, padding_side, stride, return_overflowing)
    pair = text_pairs is not None
    n, flat = _encode_sides(tokenizer, texts, text_pairs, is_split_into_words, num_threads, return_offsets)
    lengths = np.diff(flat["ptr"])
    la = lengths[:n]
    lb = lengths[n:] if pair else None
    budget = max_length - tokenizer.template.specials(pair)

    src = np.arange(n)
    a0 = b0 = np.zeros(n, dtype=np.int64)
    if pair:
        ka, kb = truncate_pair(la, lb, budget, truncation)
        if return_overflowing and truncation:
            src, a0, b0, ka, kb = pair_windows(la, lb, budget, stride, truncation)
    else:
        if truncation == "only_second":
            raise TokkitError("truncation='only_second' needs text_pairs")
        ka, kb = (np.minimum(la, budget) if truncation else la), None
        if return_overflowing and truncation:
            src, a0, ka = windows(la, budget, stride)
    return assemble(tokenizer, flat, n, src, (a0, ka), (b0, kb) if pair else None, max_length, padding,
                    pad_to_multiple_of, padding_side, return_offsets, src if return_overflowing else None)


def _encode_sides(tokenizer, texts, text_pairs, split_words, num_threads, offsets) -> tuple[int, dict]:
    """Encode A and B as one batch (rows 0..n-1, then n..2n-1); returns n and encode_flat's arrays."""
    if split_words:
        rows = check_word_rows(texts, "texts")
        n = len(rows)
        if text_pairs is not None:
            rows = rows + _same_count(check_word_rows(text_pairs, "text_pairs"), n)
        words, counts, spaces = word_texts(tokenizer, rows)
        words, sizes = check_texts(words, "words")
        return n, regroup_words(encode_flat(tokenizer, words, sizes, num_threads, offsets=offsets), counts, spaces)
    texts, sizes = check_texts(texts)
    n = len(texts)
    if text_pairs is not None:
        pairs, pair_sizes = check_texts(text_pairs, "text_pairs")
        texts, sizes = texts + _same_count(pairs, n), np.concatenate([sizes, pair_sizes])
    return n, encode_flat(tokenizer, texts, sizes, num_threads, offsets=offsets)


def _same_count(pairs: list, n: int) -> list:
    if len(pairs) != n:
        raise TokkitError(f"texts has {n} items but text_pairs has {len(pairs)}")
    return pairs


def _check_options(tokenizer, texts, text_pairs, max_length, truncation, padding, pad_to_multiple_of,
                   padding_side, stride, return_overflowing):
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"tokenizer must be a tokkit.Tokenizer, not {type(tokenizer).__name__}")
    template_of(tokenizer)
    truncation = _switch("truncation", truncation, "do_not_truncate", TRUNCATIONS)
    padding = _switch("padding", padding, "do_not_pad", PADDINGS)
    if padding_side not in ("right", "left"):
        raise TokkitError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    if pad_to_multiple_of is not None and (not isinstance(pad_to_multiple_of, int) or pad_to_multiple_of < 1):
        raise TokkitError(f"pad_to_multiple_of must be a positive int, got {pad_to_multiple_of!r}")
    if pad_to_multiple_of is not None and pad_to_multiple_of > MAX_PADDED_LENGTH:
        raise TokkitError(f"pad_to_multiple_of={pad_to_multiple_of} is above the {MAX_PADDED_LENGTH:,} tokens "
                          "tokkit pads to (tokkit.inputs.encode.MAX_PADDED_LENGTH)")
    template = tokenizer.template.specials(text_pairs is not None)
    if isinstance(max_length, (int, np.integer)) and not isinstance(max_length, (bool, np.bool_)):
        max_length = int(max_length)
    if not isinstance(max_length, int) or max_length < max(template, 1):
        # tokenizers silently skips truncation here; tokkit refuses rather than overflow max_length.
        raise TokkitError(f"max_length={max_length!r} is below the {template} template tokens" if template
                         else f"max_length must be a positive int, got {max_length!r}")
    if padding == "max_length" and max_length > MAX_PADDED_LENGTH:
        # Every row would be max_length wide: refuse before numpy tries to allocate terabytes.
        raise TokkitError(f"padding='max_length' pads every row to max_length={max_length}, above the "
                          f"{MAX_PADDED_LENGTH:,} tokens tokkit pads to (tokkit.inputs.encode.MAX_PADDED_LENGTH); "
                          f"this tokenizer's model_max_length is {tokenizer.model_max_length}")
    max_length = min(max_length, MAX_LENGTH)  # a longer limit truncates nothing; numpy needs it in int64
    if return_overflowing and max_length == template:
        raise TokkitError(f"return_overflowing needs max_length above the {template} template tokens")
    if return_overflowing and text_pairs is not None and truncation == "longest_first":
        raise TokkitError("return_overflowing on pairs needs truncation='only_second' (windows over text_pairs, "
                         "as question answering uses) or 'only_first'")
    if stride and stride >= max_length - template:
        raise TokkitError(f"stride={stride} must be smaller than the window's token budget "
                         f"(max_length - {template} = {max_length - template})")
    if stride < 0:
        raise TokkitError(f"stride must be >= 0, got {stride}")
    return truncation, padding, max_length


def template_of(tokenizer: Tokenizer) -> Template:
    """The template tokkit.encode lays rows out with; a tokenizer without one is a TokkitError."""
    if tokenizer.template is None:
        raise TokkitError("this tokenizer has no [CLS]/[SEP] template (it was built without [CLS] and [SEP] "
                          "special tokens, and its tokenizer.json has no post_processor), so tokkit.encode "
                          "cannot build BERT inputs; use Tokenizer.encode")
    return tokenizer.template


def _switch(name: str, value, off: str, allowed: tuple):
    """An on/off option spelled as transformers does: False or `off` -> None, True -> `allowed[0]`."""
    if value is True:
        return allowed[0]
    if value in (False, off):
        return None
    if value is not None and value not in allowed:
        raise TokkitError(f"{name} must be one of {allowed} or None, got {value!r}")
    return value


def encode_flat(tokenizer: Tokenizer, texts: list[str], sizes: np.ndarray,
                num_threads: int | None, *, offsets: bool = True) -> dict[str, np.ndarray]:
    """Encode on threads; flat ids/words (and starts/ends with `offsets`) with row pointers `ptr`
    (row r: ptr[r]:ptr[r+1]).

    `sizes`: the texts' lengths, as check_texts returns them. Without `offsets` the encoder keeps
    no per-character spans, which spares it work on every character and token.
    """
    kernel = tokenizer._encoder
    parts = run_sliced(lambda a, b: kernel.encode_rows(texts, a, b, offsets).arrays(), sizes, num_threads)
    if len(parts) == 1:
        return parts[0]
    keys = ("ids", "starts", "ends", "words") if offsets else ("ids", "words")
    out = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    base = np.cumsum([0] + [p["ptr"][-1] for p in parts[:-1]])
    out["ptr"] = np.concatenate([parts[0]["ptr"][:1]] + [p["ptr"][1:] + b for p, b in zip(parts, base)])
    return out


def truncate_pair(la: np.ndarray, lb: np.ndarray, m: int, truncation: str | None):
    """Kept lengths of A and B under a budget of m tokens (the template's three excluded)."""
    if truncation is None:
        return la, lb
    over = la + lb > m
    if truncation == "longest_first":
        a_short = la <= lb  # A counts as the shorter one on ties
        s = np.where(a_short, la, lb)
        keep_s = np.where(s <= m - s, s, m // 2)
        keep_l = m - keep_s
        ka = np.where(over, np.where(a_short, keep_s, keep_l), la)
        kb = np.where(over, np.where(a_short, keep_l, keep_s), lb)
        return ka, kb
    # only_first / only_second: the chosen side absorbs the whole cut, and must keep a token
    first = truncation == "only_first"
    cut, other = (la, lb) if first else (lb, la)
    kept = np.where(over, m - other, cut)
    bad = np.flatnonzero(over & (kept < 1))
    if bad.size:
        i = bad[0]
        name, rest = ("texts", "its pair alone") if first else ("text_pairs", "its first text alone")
        raise TokkitError(f"truncation={truncation!r}: {name}[{i}] ({cut[i]} tokens) cannot absorb the cut; "
                         f"{rest} has {other[i]} of the {m} tokens allowed")
    return (kept, lb) if first else (la, kept)


def windows(la: np.ndarray, m, stride: int):
    """tokenizers' overflow: windows of m tokens stepping by m - stride until one reaches the end.

    `m`: the window's size, one for all rows or one per row. Returns (source row, first token,
    length) per window.

    >>> [x.tolist() for x in windows(np.array([5, 2]), 3, 1)]
    [[0, 0, 1], [0, 2, 0], [3, 3, 2]]
    """
    m = np.broadcast_to(np.asarray(m, dtype=np.int64), la.shape)
    over = la > m
    step = np.where(over, m - stride, 1)
    count = 1 + np.where(over, -(-(la - m) // step), 0)  # ceil((len - m) / step) extra windows
    src = np.repeat(np.arange(la.size), count)
    first_window = np.cumsum(count) - count
    k = np.arange(src.size) - np.repeat(first_window, count)
    a0 = k * step[src]
    return src, a0, np.minimum(m[src], la[src] - a0)


def pair_windows(la: np.ndarray, lb: np.ndarray, m: int, stride: int, truncation: str):
    """Overflow for pairs: the side `truncation` cuts goes into windows of the room the other side
    leaves (m minus its length), and each window is joined to the other side whole.

    Returns (source row, A's first token, B's first token, A's length, B's length) per window.
    truncate_pair has already refused rows where the cut side cannot keep a token.
    """
    second = truncation == "only_second"
    cut, whole = (lb, la) if second else (la, lb)
    room = m - whole
    tight = np.flatnonzero((cut > room) & (stride >= room))
    if tight.size:
        i = tight[0]
        name, other = ("text_pairs", "texts") if second else ("texts", "text_pairs")
        raise TokkitError(f"stride={stride} must be smaller than the {room[i]} tokens {name}[{i}] has in each window "
                         f"beside {other}[{i}] ({whole[i]} tokens, kept whole)")
    src, start, kept = windows(cut, room, stride)
    zero = np.zeros(src.size, dtype=np.int64)
    if second:
        return src, zero, start, la[src], kept
    return src, start, zero, kept, lb[src]


def _ragged(starts: np.ndarray, lengths: np.ndarray):
    """(row index, position within the run, flat source index) of runs starts[r]:starts[r]+lengths[r]."""
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    row = np.repeat(np.arange(lengths.size), lengths)
    pos = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return row, pos, np.repeat(starts, lengths) + pos


def pad_token_id(tokenizer: Tokenizer) -> int | None:
    """The padding id: the tokenizer.json's `padding.pad_id` when it sets one, else [PAD] or <pad>."""
    pad = tokenizer.spec.extra.get("padding") or {}
    if isinstance(pad.get("pad_id"), int) and tokenizer.id_to_token(pad["pad_id"]) is not None:
        return pad["pad_id"]
    for name in ("[PAD]", "<pad>"):
        if tokenizer.token_to_id(name) is not None:
            return tokenizer.token_to_id(name)
    return None


def assemble(tokenizer, flat, n, src, a_run, b_run, max_length, padding, multiple, side, return_offsets, sample_map):
    """Rows from the kept runs of A (and B) and the template's special tokens around them.

    `a_run`, `b_run`: (first token, length) of each row's run of A and of B (b_run None for single
    texts), counted within the source text `src` of the row.
    """
    ptr = flat["ptr"]
    rows = src.size
    pair = b_run is not None
    parts = tokenizer.template.parts(pair)
    runs = {"$A": (ptr[src] + a_run[0], a_run[1], 0)}
    if pair:
        runs["$B"] = (ptr[n + src] + b_run[0], b_run[1], 1)
    part_len = [runs[name][1] if name in runs else np.ones(rows, dtype=np.int64) for name, _ in parts]
    total = np.sum(part_len, axis=0) if parts else np.zeros(rows, dtype=np.int64)
    if padding == "max_length":
        width = max(max_length, int(total.max(initial=0)))
    else:
        width = int(total.max(initial=0))
    if multiple:
        width = -(-width // multiple) * multiple
    shift = (width - total) if side == "left" else np.zeros(rows, dtype=np.int64)
    pad_id = pad_token_id(tokenizer)
    if pad_id is None and padding is not None and bool((total < width).any()):
        raise TokkitError("padding needs a '[PAD]' or '<pad>' token (or a tokenizer.json padding.pad_id), "
                          "and this tokenizer has none")
    ids = np.full((rows, width), pad_id if pad_id is not None else 0, dtype=np.int32)
    types = np.zeros((rows, width), dtype=np.int32)
    attention = np.zeros((rows, width), dtype=np.int32)
    special = np.ones((rows, width), dtype=np.int32)
    words = np.full((rows, width), -1, dtype=np.int32)
    sequences = np.full((rows, width), -1, dtype=np.int32)
    offsets = np.zeros((rows, width, 2), dtype=np.int32) if return_offsets else None
    r = np.arange(rows)
    none = np.zeros(rows, dtype=np.int64)
    place_runs(attention, None, none, np.ascontiguousarray(total, dtype=np.int64),
               np.ascontiguousarray(shift, dtype=np.int64), fill=1)

    def place(starts, lengths, col0, type_id, sequence_id):
        # one short copy per row (compiled), not a (row, column) index pair per token
        starts, lengths, col0 = (np.ascontiguousarray(x, dtype=np.int64) for x in (starts, lengths, col0))
        place_runs(ids, flat["ids"], starts, lengths, col0)
        place_runs(special, None, starts, lengths, col0, fill=0)
        place_runs(words, flat["words"], starts, lengths, col0)
        place_runs(sequences, None, starts, lengths, col0, fill=sequence_id)
        if type_id:
            place_runs(types, None, starts, lengths, col0, fill=type_id)
        if offsets is not None:
            row, pos, flat_idx = _ragged(starts, lengths)
            col = col0[row] + pos
            offsets[row, col, 0], offsets[row, col, 1] = tokenizer.trimmed_offsets(
                flat["ids"][flat_idx], flat["starts"][flat_idx], flat["ends"][flat_idx], pos == 0)

    col0 = shift.copy()
    for (name, type_id), length in zip(parts, part_len):
        if name in runs:
            starts, lengths, sequence_id = runs[name]
            place(starts, lengths, col0, type_id, sequence_id)
        else:
            ids[r, col0] = tokenizer.template.id_of(name)  # the template's own id, as tokenizers writes it
            types[r, col0] = type_id
        col0 = col0 + length
    out = {"input_ids": ids, "token_type_ids": types, "attention_mask": attention,
           "special_tokens_mask": special, "word_ids": words, "sequence_ids": sequences}
    if offsets is not None:
        out["offsets"] = offsets
    if padding is None:
        out = {k: [v[i, shift[i]:shift[i] + total[i]] for i in range(rows)] for k, v in out.items()}
    if sample_map is not None:
        out["overflow_to_sample_mapping"] = sample_map.astype(np.int32)
    return out
