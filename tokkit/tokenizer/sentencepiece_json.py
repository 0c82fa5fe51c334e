"""A SentencePiece model as the tokenizer.json pipeline that encodes as the `sentencepiece` package does.

`tokenizer_json_from_sentencepiece(read_model(path))` is what `tokkit.load("x.model")` reads: the
normalizer, Metaspace pre-tokenizer, Unigram or BPE model and decoder that reproduce sentencepiece's
ids (see sentencepiece_model.py for the reader, and its docstring for what no component can say).

>>> merges_from_pieces((Piece("a", 0.0, "NORMAL"), Piece("b", 0.0, "NORMAL"), Piece("ab", -1.0, "NORMAL")))
[('a', 'b')]
"""
from __future__ import annotations

import base64
import struct

from tokkit.errors import TokkitError
from tokkit.tokenizer.aligned import aligned
from tokkit.tokenizer.normalizers import normalizer_from_json
from tokkit.tokenizer.precompiled import parse_charsmap, transform
from tokkit.tokenizer.sentencepiece_model import Piece, SentencePieceModel

SPACE = "\u2581"  # sentencepiece's visible space
_FLT_MIN = 1.1754943508222875e-38  # where sentencepiece starts its search for the highest piece score


def tokenizer_json_from_sentencepiece(model: SentencePieceModel, where: str = "model") -> dict:
    """The tokenizer.json object (the `tokenizers` schema) that encodes as sentencepiece's `encode(text)`.

    No post-processor (sentencepiece adds no BOS/EOS by default); decoding with special tokens
    skipped gives sentencepiece's `decode`. The module docstring lists the few inputs where no
    combination of components gives sentencepiece's ids.

    >>> from tokkit.tokenizer.sentencepiece_model import model_from_bytes
    >>> unk, a = b"\\n\\x09\\n\\x05<unk>\\x18\\x02", b"\\n\\x0b\\n\\x04\\xe2\\x96\\x81a\\x15\\x00\\x00\\x80\\xbf"
    >>> d = tokenizer_json_from_sentencepiece(model_from_bytes(unk + a + b"\\x12\\x00\\x1a\\x00", "tiny.model"))
    >>> [n["type"] for n in d["normalizer"]["normalizers"]], d["model"]["vocab"]
    (['Replace', 'Replace', 'Replace', 'Replace', 'Prepend'], [['<unk>', 0.0], ['▁a', -1.0]])
    """
    ts, ns = model.trainer_spec, model.normalizer_spec
    if ts.model_type == "word":
        raise TokkitError(f"{where}: trainer_spec.model_type 'word' is not supported (unigram, bpe or char)")
    for i, p in enumerate(model.pieces):
        if p.score != p.score or abs(p.score) == float("inf"):
            raise TokkitError(f"{where}: piece {i} ({p.piece!r}) has a score that is not a finite number")
    # Outside Unigram, a user-defined symbol can only stay whole as an added token. Matched in the
    # normalized text, it lets the dummy prefix go before the whole text only, as sentencepiece puts it
    # (before a space or a symbol there too), from a normalizer step that leaves the symbols alone (_prefix).
    users = tuple(p.piece for p in model.pieces if p.type == "USER_DEFINED") if ts.model_type != "unigram" else ()
    in_normalized = bool(users) and not ts.treat_whitespace_as_suffix
    normalizer = _normalizer(model, users, where)
    if in_normalized and normalizer is not None:
        # one the normalizer turns into nothing (spaces only) never matches in sentencepiece either
        steps = normalizer_from_json(normalizer, where)
        users = tuple(u for u in users if steps.normalize(aligned(u))[0])
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": _added_tokens(model, users, normalized=in_normalized or not ns.add_dummy_prefix),
            "normalizer": normalizer, "pre_tokenizer": _pre_tokenizer(model),
            "post_processor": None, "decoder": _decoder(model),
            "model": _unigram(model) if ts.model_type == "unigram" else _bpe(model)}


def _added_tokens(model: SentencePieceModel, users: tuple[str, ...], normalized: bool) -> list[dict]:
    """Control pieces as special tokens; the user-defined ones in `users` too (where the model cannot
    keep them whole)."""
    out = []
    for i, p in enumerate(model.pieces):
        if p.type == "CONTROL" or (p.type == "USER_DEFINED" and p.piece in users):
            user = p.type == "USER_DEFINED"
            out.append({"id": i, "content": p.piece, "single_word": False, "lstrip": False, "rstrip": False,
                        "normalized": user and normalized, "special": not user})
    return out


def _replace(pattern: str, content: str, regex: bool = False) -> dict:
    return {"type": "Replace", "pattern": {"Regex" if regex else "String": pattern}, "content": content}


def _normalizer(model: SentencePieceModel, users: tuple[str, ...], where: str) -> dict | None:
    """sentencepiece's normalizer in order: character map, spaces, escaping, trailing spaces, dummy prefix."""
    ns = model.normalizer_spec
    space = SPACE if ns.escape_whitespaces else " "
    marked = _marks_dummy(model, where)
    suffix = model.trainer_spec.treat_whitespace_as_suffix
    steps = _dummy_mark(() if suffix else users) if marked else []
    if ns.precompiled_charsmap:
        protect, restore = _symbols_kept(ns.precompiled_charsmap, model, where)
        steps += protect + [{"type": "Precompiled", "precompiled_charsmap": base64.b64encode(
            ns.precompiled_charsmap).decode("ascii")}] + restore
    if ns.remove_extra_whitespaces:
        steps += [_replace(" {2,}", " ", regex=True), _replace(r"\A ", "", regex=True)]
    if ns.escape_whitespaces:
        steps.append(_replace(" ", SPACE))
    if ns.remove_extra_whitespaces:  # sentencepiece drops trailing U+2581 too, typed or escaped
        steps.append(_replace(space + r"+\z" + _unless_one_symbol(space, users), "", regex=True))
    if ns.add_dummy_prefix:
        steps += _dummy(space, users, suffix, marked)
    return {"type": "Sequence", "normalizers": steps} if steps else None


DUMMY = "\uffff"  # a noncharacter (never text) standing for the dummy prefix until it is written


def _marks_dummy(model: SentencePieceModel, where: str) -> bool:
    """Whether the dummy prefix is marked (DUMMY) before the character map runs. sentencepiece adds it
    when the text it reads is not empty, even if the map then removes every char ("\\x01" gives "▁");
    a Prepend after the map sees an empty text and adds nothing. remove_extra_whitespaces would strip
    that lone prefix again, so only models without it need the mark (and a map that leaves it alone)."""
    ns = model.normalizer_spec
    if not ns.add_dummy_prefix or ns.remove_extra_whitespaces:
        return False
    charsmap = ns.precompiled_charsmap
    return not charsmap or transform(parse_charsmap(charsmap, f"{where}: normalizer_spec.precompiled_charsmap"),
                                     DUMMY) is None


def _dummy_mark(users: tuple[str, ...]) -> list[dict]:
    """The first steps where the dummy prefix is marked: DUMMY before the text, then off again before
    a text that is exactly one user-defined symbol as typed (its own text, normalized too, must stay
    itself). A Prepend and a deletion: tokenizers' Precompiled panics after an empty match's insertion."""
    mark = [{"type": "Prepend", "prepend": DUMMY}]
    return mark + [_replace(rf"\A{DUMMY}(?=(?:{_alternatives(users)})\z)", "", regex=True)] if users else mark


def _dummy(space: str, users: tuple[str, ...], suffix: bool, marked: bool) -> list[dict]:
    """The last steps, which write the dummy prefix (a suffix with treat_whitespace_as_suffix);
    `marked`: in place of the DUMMY the first step put."""
    if suffix:
        return [_replace(r"\z", space, regex=True)] + ([_replace(DUMMY, "")] if marked else [])
    return [_replace(DUMMY, space)] if marked else [_prefix(space, users)]


CODE_START, CODE_DIGITS = "\ufdd0", [chr(c) for c in range(0xFDD1, 0xFDF0)]  # noncharacters: never text


def _symbols_kept(charsmap: bytes, model: SentencePieceModel, where: str) -> tuple[list[dict], list[dict]]:
    """Replace steps before and after the character map that keep user-defined symbols as written.

    sentencepiece finds user-defined symbols in the raw text before it applies the map, so a symbol
    the map would change ("\\n" and "\\t" into spaces, "ﬁ" into "fi", U+2581 into a space) stays whole.
    Each such symbol becomes a code of noncharacters (U+FDD0, then digits from U+FDD1) that the map
    leaves alone, and is written back after it; longer symbols are replaced first.
    """
    symbols = [p.piece for p in model.pieces if p.type == "USER_DEFINED"]
    if not symbols:
        return [], []
    cm = parse_charsmap(charsmap, f"{where}: normalizer_spec.precompiled_charsmap")
    symbols = sorted((u for u in symbols if any(transform(cm, ch) is not None for ch in u)), key=lambda u: -len(u))
    width = 1
    while len(CODE_DIGITS) ** width < len(symbols):
        width += 1
    codes = [CODE_START + "".join(CODE_DIGITS[k // len(CODE_DIGITS) ** i % len(CODE_DIGITS)] for i in range(width))
             for k in range(len(symbols))]
    if any(transform(cm, ch) is not None for ch in [CODE_START] + CODE_DIGITS) or \
            any(CODE_START <= ch <= CODE_DIGITS[-1] for u in symbols for ch in u):
        raise TokkitError(f"{where}: normalizer_spec.precompiled_charsmap changes the noncharacters "
                          "U+FDD0-U+FDEF, or a user-defined symbol holds one: tokkit cannot keep the symbols whole")
    return ([_replace(u, code) for u, code in zip(symbols, codes)],
            [_replace(code, u) for u, code in zip(symbols, codes)])


def _unless_one_symbol(space: str, users: tuple[str, ...]) -> str:
    """A look-behind that stops the trailing-space removal on a text that is one symbol ending in
    `space` (an added token's own text must stay itself to be found)."""
    ending = [onig_escape(u) for u in users if u.endswith(space)]
    return "(?<!" + "|".join(r"\A" + u for u in ending) + ")" if ending else ""


def _prefix(space: str, users: tuple[str, ...]) -> dict:
    """The dummy prefix before the text. With user-defined symbols (added tokens matched in the
    normalized text, whose own text the normalizer runs over too) it skips a text that is exactly
    one symbol: the symbol's own text must stay itself to be found.

    >>> print(_prefix("\u2581", ("<a>", "x.y"))["pattern"]["Regex"])
    \\A(?!(?:<a>|x\\.y)\\z)
    """
    if not users:
        return {"type": "Prepend", "prepend": space}
    return _replace(rf"\A(?!(?:{_alternatives(users)})\z)", space, regex=True)


def _alternatives(users: tuple[str, ...]) -> str:
    """A pattern matching any of `users`, the longest first."""
    return "|".join(onig_escape(u) for u in sorted(users, key=len, reverse=True))


def onig_escape(text: str) -> str:
    """`text` as an Oniguruma pattern matching itself: its metacharacters escaped.

    >>> print(onig_escape("[INST] a.b"))
    \\[INST\\] a\\.b
    """
    return "".join("\\" + c if c in _META else c for c in text)


_META = frozenset("\\^$.|?*+()[]{}")


def _pre_tokenizer(model: SentencePieceModel) -> dict | None:
    """Metaspace, splitting before each U+2581 where no piece holds one inside and U+2581 is never
    unknown (so splitting changes nothing: an unknown U+2581 is fused with the unknown chars around
    it, across any cut)."""
    # a Unigram keeps user-defined pieces whole by their score (no added tokens), so they count too
    whole = ("NORMAL", "UNUSED", "USER_DEFINED") if model.trainer_spec.model_type == "unigram" else ("NORMAL", "UNUSED")
    known = model.trainer_spec.byte_fallback or any(p.piece == SPACE and p.type in whole for p in model.pieces)
    split = (model.normalizer_spec.escape_whitespaces and not model.trainer_spec.treat_whitespace_as_suffix
             and known and all(SPACE not in p.piece[1:] for p in model.pieces if p.type in whole))
    if not split:
        return None
    return {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "never", "split": True}


def _decoder(model: SentencePieceModel) -> dict:
    """Spaces back, bytes joined into text, the unknown piece shown as sentencepiece shows it, the
    dummy prefix's space dropped (only the dummy's: an unknown piece first keeps unk_surface's space)."""
    ns, ts = model.normalizer_spec, model.trainer_spec
    steps = [_replace(SPACE, " ")] if ns.escape_whitespaces else []
    if ts.byte_fallback:
        steps.append({"type": "ByteFallback"})
    steps += [_replace(_unknown(model)[1], ts.unk_surface), {"type": "Fuse"}]
    if ns.add_dummy_prefix and not ts.treat_whitespace_as_suffix:
        steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    return {"type": "Sequence", "decoders": steps}


def _unknown(model: SentencePieceModel) -> tuple[int, str]:
    return next((i, p.piece) for i, p in enumerate(model.pieces) if p.type == "UNKNOWN")


def _unigram(model: SentencePieceModel) -> dict:
    """Unigram with sentencepiece's scores; a user-defined piece gets the score sentencepiece gives it
    when encoding (bytes x highest normal score - 0.1, which keeps it whole)."""
    normal = [p.score for p in model.pieces if p.type == "NORMAL"]
    best = _f32(max([_FLT_MIN] + normal))
    scores = [_f32(len(p.piece.encode()) * best) - 0.1 if p.type == "USER_DEFINED" else p.score
              for p in model.pieces]
    vocab = [[p.piece, _json_float(score)] for p, score in zip(model.pieces, scores)]
    return {"type": "Unigram", "unk_id": _unknown(model)[0], "vocab": vocab,
            "byte_fallback": model.trainer_spec.byte_fallback}


def _json_float(x: float) -> float:
    """`x` to 15 significant digits. tokenizers reads JSON numbers with serde_json's fast path, which
    can land an ulp away from the true double when the digits exceed 2**53; with 15 digits both it and
    Python read the same double, so a Unigram breaks exact ties alike in both."""
    return float(f"{x:.15g}")


def _f32(x: float) -> float:
    """`x` rounded to a 32-bit float, as sentencepiece computes scores."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _bpe(model: SentencePieceModel) -> dict:
    """BPE over the pieces (a char model is BPE without merges); unknown characters fused, as
    sentencepiece joins runs of unknown pieces."""
    merges = merges_from_pieces(model.pieces) if model.trainer_spec.model_type == "bpe" else []
    return {"type": "BPE", "dropout": None, "unk_token": _unknown(model)[1], "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": model.trainer_spec.byte_fallback,
            "ignore_merges": False, "vocab": {p.piece: i for i, p in enumerate(model.pieces)},
            "merges": [[a, b] for a, b in merges]}


def merges_from_pieces(pieces: tuple[Piece, ...]) -> list[tuple[str, str]]:
    """BPE merges for a sentencepiece BPE vocabulary: each split of a normal piece into two normal
    pieces, pieces of higher score first (sentencepiece merges the best-scoring pair first).

    The work grows with the vocabulary's characters (see _splits), whatever the pieces' lengths, and
    so does the number of merges (a piece of n characters has at most n - 1 splits).

    >>> merges_from_pieces((Piece("a", -1), Piece("b", -2), Piece("c", -3), Piece("bc", -4), Piece("abc", -5)))
    [('b', 'c'), ('a', 'bc')]
    """
    normal = [(i, p.piece) for i, p in enumerate(pieces) if p.type == "NORMAL"]
    ids = {piece: i for i, piece in normal}
    splits = _splits(ids)
    normal.sort(key=lambda entry: (-pieces[entry[0]].score, entry[0]))
    out = []
    for _, piece in normal:  # a piece's splits by the id of their left side
        out += sorted(splits(piece), key=lambda pair: ids[pair[0]])
    return out


SHORT_PIECE = 64  # a piece up to this long is split by cutting out each prefix and suffix


def _splits(ids: dict[str, int]):
    """piece -> its splits into two keys of `ids`. A short piece's prefixes are cut out and looked
    up (at most SHORT_PIECE times its length); a longer one walks a trie of the pieces and, reversed,
    one of the reversed pieces, once each, so no piece costs its length squared."""
    tries: list[dict] = []

    def split(piece: str) -> list[tuple[str, str]]:
        if len(piece) <= SHORT_PIECE:
            return [(piece[:cut], piece[cut:]) for cut in range(1, len(piece))
                    if piece[:cut] in ids and piece[cut:] in ids]
        if not tries:
            tries.extend((_trie((key, key) for key in ids), _trie((key[::-1], key) for key in ids)))
        lefts = dict(_prefixes(tries[0], piece))
        return [(lefts[len(piece) - cut], right) for cut, right in _prefixes(tries[1], piece[::-1])
                if len(piece) - cut in lefts]

    return split


def _trie(keys) -> dict:
    """A trie of (key, piece) pairs: a dict per node, char -> node, and "" -> the piece of the key ending there."""
    root: dict = {}
    for key, piece in keys:
        node = root
        for ch in key:
            node = node.setdefault(ch, {})
        node[""] = piece
    return root


def _prefixes(trie: dict, text: str):
    """(length, piece) of each key of `trie` that is a proper prefix of `text`."""
    node = trie
    for k, ch in enumerate(text[:-1], 1):
        node = node.get(ch)
        if node is None:
            return
        if "" in node:
            yield k, node[""]
