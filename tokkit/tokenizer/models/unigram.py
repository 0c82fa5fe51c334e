"""Unigram: the segmentation of a piece whose pieces' scores add up highest (Viterbi), as tokenizers finds it.

>>> m = Unigram(vocab=(("<unk>", 0.0), ("a", -1.0), ("b", -1.0), ("ab", -1.5)), unk_id=0)
>>> m.tokenize("abba")
[(3, 0, 2), (2, 2, 3), (1, 3, 4)]
>>> m.tokenize("a??b")
[(1, 0, 1), (0, 1, 3), (2, 3, 4)]
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property

from tokkit._native.pipeline import ModelKind, token_blob
from tokkit.errors import TokkitError
from tokkit.tokenizer.models.bpe import byte_ids, byte_token, metaspace_cut_is_safe
from tokkit.tokenizer.models.wordlevel import PlainState, check_type, json_field, json_object, json_uint

UNK_PENALTY = 10.0  # the unknown token scores this much below the lowest piece score
_NUMBER = re.compile(r"(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?)(\d+))?")
_POW10 = [float(f"1e{k}") for k in range(309)]


@dataclass(frozen=True)
class Unigram(PlainState):
    """tokenizers' Unigram model: (piece, score) in id order, the unknown token's id, byte fallback.

    Every position of the piece starts a node for each vocabulary piece found there, plus an
    unknown node over one character when no one-character piece is (scored at the lowest score of
    the vocabulary minus 10). The best path wins; among equal scores, the one that reached the
    position first (the longer last piece). Consecutive unknown nodes make one unknown token; with
    `byte_fallback` an unknown run becomes the <0xNN> tokens of its UTF-8 bytes, each spanning the
    whole run, when all of them are in the vocabulary. Without `unk_id` an unknown character is
    an error (as in tokenizers).

    >>> Unigram(vocab=(("<unk>", 0.0), ("<0xC3>", -5.0), ("<0xA9>", -5.0)), unk_id=0,
    ...         byte_fallback=True).tokenize("é")
    [(1, 0, 1), (2, 0, 1)]
    """

    vocab: tuple[tuple[str, float], ...]
    unk_id: int | None = None
    byte_fallback: bool = False

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "Unigram":
        at = f"{where}: model.Unigram"
        json_object(obj, at)
        check_type(obj, "Unigram", at)
        model = cls(vocab=read_pieces(json_field(obj, "vocab", (list,), at), at),
                    unk_id=json_field(obj, "unk_id", (int, type(None)), at, None),
                    byte_fallback=json_field(obj, "byte_fallback", (bool,), at, False))
        if model.unk_id is not None:
            json_uint(obj, "unk_id", at, 64)
            if model.unk_id >= len(model.vocab):
                raise TokkitError(f"{at}: unk_id {model.unk_id} is outside the vocabulary (size {len(model.vocab)})")
        return model

    def to_json(self) -> dict:
        return {"type": "Unigram", "unk_id": self.unk_id, "vocab": [[p, float(s)] for p, s in self.vocab],
                "byte_fallback": self.byte_fallback}

    @cached_property
    def ids(self) -> dict[str, int]:
        """piece -> id."""
        return {piece: i for i, (piece, _) in enumerate(self.vocab)}

    @property
    def tokens(self) -> tuple[str, ...]:
        """The pieces by id (without their scores)."""
        return tuple(piece for piece, _ in self.vocab)

    @cached_property
    def cuts_at_metaspace(self) -> bool:
        """Whether the compiled path may cut pieces before each U+2581 (see models.bpe.metaspace_cut_is_safe)."""
        return metaspace_cut_is_safe(self.tokens)

    def native(self) -> dict:
        """The compiled model's description (tokkit._native.pipeline.PipelineEncoder.build)."""
        return {"kind": ModelKind.M_UNIGRAM, "unk_id": -1 if self.unk_id is None else self.unk_id,
                "byte_fallback": self.byte_fallback, "scores": [score for _, score in self.vocab],
                "unk_score": self.unk_score, "byte_ids": byte_ids(self.ids),
                "cut_at_metaspace": self.cuts_at_metaspace,
                "tokens": token_blob([piece for piece, _ in self.vocab])}

    @cached_property
    def unk_score(self) -> float:
        return min(score for _, score in self.vocab) - UNK_PENALTY

    @cached_property
    def longest(self) -> int:
        """The longest piece in characters: how far a match can reach."""
        return max(len(piece) for piece, _ in self.vocab)

    def tokenize(self, piece: str) -> list[tuple[int, int, int]]:
        """[(id, start, end)] for one piece, offsets in characters ("" gives no tokens)."""
        out, pos = [], 0
        for part in self.segment(piece):
            end = pos + len(part)
            out.extend((tid, pos, end) for tid in self.part_ids(part))
            pos = end
        return out

    def part_ids(self, part: str) -> list[int]:
        """The id of one segment; a fused unknown run is its byte tokens or the unknown token."""
        if part in self.ids:
            return [self.ids[part]]
        if self.byte_fallback:
            ids = [self.ids.get(byte_token(b)) for b in part.encode("utf-8", "surrogatepass")]
            if None not in ids:
                return ids
        return [self._unk()]

    def segment(self, piece: str) -> list[str]:
        """The best segmentation as strings, unknown runs fused into one string each."""
        best = self.best_paths(piece)
        parts: list[str] = []
        end, run = len(piece), ""
        while end > 0:
            _, start, tid = best[end]
            if tid == self.unk_id:  # an unknown node, or the unknown token's own piece: fused
                run = piece[start:end] + run
            else:
                parts += [run, piece[start:end]] if run else [piece[start:end]]
                run = ""
            end = start
        return (parts + [run] if run else parts)[::-1]

    def best_paths(self, piece: str) -> list:
        """For each position, (score, start, id) of the best path ending there (Viterbi, left to right)."""
        ids, vocab = self.ids, self.vocab
        best: list = [(0.0, None, None)] + [None] * len(piece)
        for start in range(len(piece)):
            here = best[start][0]
            single = False
            for end in range(start + 1, min(len(piece), start + self.longest) + 1):
                tid = ids.get(piece[start:end])
                if tid is not None:
                    _offer(best, end, vocab[tid][1] + here, start, tid)
                    single = single or end == start + 1
            if not single:
                _offer(best, start + 1, self.unk_score + here, start, self._unk())
        return best

    def _unk(self) -> int:
        if self.unk_id is None:
            raise TokkitError("Unigram: a character is not in the vocabulary and the model has no unk_id")
        return self.unk_id


def _offer(best: list, end: int, score: float, start: int, tid: int) -> None:
    """Keep the new path to `end` only when it scores strictly higher (ties keep the first)."""
    if best[end] is None or score > best[end][0]:
        best[end] = (score, start, tid)


def read_pieces(items: list, where: str) -> tuple[tuple[str, float], ...]:
    """The "vocab" list of [piece, score] pairs: scores finite numbers, no piece twice."""
    if not items:
        raise TokkitError(f"{where}: field 'vocab' must hold at least one [piece, score] pair")
    seen: dict[str, int] = {}
    for k, item in enumerate(items):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], (int, float)) and not isinstance(item[1], bool)
                and math.isfinite(item[1])):
            raise TokkitError(f"{where}: vocab[{k}] must be [piece, score] with a finite score, got {item!r}"[:300])
        if item[0] in seen:
            raise TokkitError(f"{where}: vocab[{k}] repeats the piece {item[0]!r} of vocab[{seen[item[0]]}]")
        seen[item[0]] = k
    # an integer score is exact below 2**64; serde_json reads a longer one as a float's digits
    return tuple((piece, serde_float(str(score), where) if isinstance(score, int) and abs(score) >= 1 << 64
                  else float(score)) for piece, score in items)


def serde_float(text: str, where: str = "JSON") -> float:
    """A JSON number read as tokenizers reads it (serde_json without exact float parsing).

    tokenizers multiplies or divides the decimal significand by a power of ten, which can land one
    step away from the nearest double (about one score in eight of a SentencePiece vocabulary), so
    `json.loads(text, parse_float=serde_float)` gives the scores tokenizers' Viterbi adds up. A
    number past the largest double is a TokkitError naming `where` (tokenizers refuses it too).

    >>> serde_float("-15.774467468261719"), float("-15.774467468261719")
    (-15.77446746826172, -15.774467468261719)
    """
    negative = text.startswith("-")
    whole, _, frac = text[negative:].partition(".")
    if len(whole) + len(frac) <= 19 and whole.isdigit() and frac.isdigit():
        # the common case, as serde_json computes it: 19 digits fit its u64, then one division
        value = float(int(whole + frac)) / _POW10[len(frac)]
        return -value if negative else value
    m = _NUMBER.fullmatch(text)
    if m is None:
        raise TokkitError(f"{where}: not a JSON number: {text[:40]!r}")
    sign, whole, frac, exp_sign, exp = m.groups()
    significand, exponent = _significand(whole, frac or "")
    out_of_range = TokkitError(f"{where}: the number {text[:40]} is out of range (tokenizers reads 64-bit floats)")
    if exp is not None:
        if int(exp) >= 1 << 31:
            if significand and exp_sign != "-":
                raise out_of_range
            return -0.0 if sign else 0.0
        exponent = max(-(1 << 31), min((1 << 31) - 1, exponent + (-int(exp) if exp_sign == "-" else int(exp))))
    value = _from_parts(significand, exponent)
    if value is None:
        raise out_of_range
    return -value if sign else value


def _significand(whole: str, frac: str) -> tuple[int, int]:
    """The digits as a u64 and a power of ten: integer digits past u64 count as tens, fraction ones are dropped."""
    significand, exponent = 0, 0
    for digit in whole:
        if exponent or significand * 10 + int(digit) >= 1 << 64:
            exponent += 1
        else:
            significand = significand * 10 + int(digit)
    for digit in frac:
        if significand * 10 + int(digit) >= 1 << 64:
            break
        significand, exponent = significand * 10 + int(digit), exponent - 1
    return significand, exponent


def _from_parts(significand: int, exponent: int) -> float | None:
    """significand x 10**exponent as serde_json's f64_from_parts computes it; None past the largest double."""
    value = float(significand)
    while abs(exponent) > 308:
        if value == 0.0:
            return value
        if exponent >= 0:
            return None
        value /= 1e308
        exponent += 308
    value = value * _POW10[exponent] if exponent >= 0 else value / _POW10[-exponent]
    return None if math.isinf(value) else value
