"""Fill an Encoder's tables from a tokkit.formats.Spec (Python-level preparation, done once).

>>> from tokkit.formats import Spec, AddedToken
>>> spec = Spec(kind="wordpiece", vocab=["[UNK]", "a"], merges=None, added=[AddedToken(0, "[UNK]")],
...             unk_token="[UNK]")
>>> build_kernel(spec).encode("a [UNK] b")
[1, 0, 0]
"""
from tokkit._encode cimport Encoder
from tokkit._encode_maps cimport StrMap, PairMap

WORDPIECE, CHARBPE, BYTELEVEL = 0, 1, 2  # the kind codes of _encode.pyx


def prefix_table(tokens) -> StrMap:
    """UTF-8 of each token -> its id, and of each proper prefix (by character) -> -2."""
    table = {}
    for token, _ in tokens:
        for k in range(1, len(token)):
            table.setdefault(token[:k].encode("utf-8", "surrogatepass"), -2)
    for token, idx in tokens:
        key = token.encode("utf-8", "surrogatepass")
        if table.get(key, -2) == -2:  # the first of two equal tokens keeps the id
            table[key] = idx
    return StrMap(list(table), list(table.values()))


def build_kernel(spec, bint split_special_tokens=False) -> Encoder:
    """Compile a tokkit.formats.Spec into read-only lookup tables."""
    from tokkit.errors import TokkitError

    cdef Encoder e = Encoder.__new__(Encoder)
    vocab = spec.vocab
    ids = spec.token_ids()
    e.kind = {"wordpiece": WORDPIECE, "bpe": CHARBPE, "bytelevel": BYTELEVEL}[spec.kind]
    norm = spec.normalizer
    e.opts.clean_text = norm is not None and norm.clean_text
    e.opts.handle_chinese_chars = norm is not None and norm.handle_chinese_chars
    e.opts.strip_accents = norm is not None and norm.strips_accents
    e.opts.lowercase = norm is not None and norm.lowercase
    e.unk_id = ids[spec.unk_token] if spec.unk_token is not None else -1
    e.max_chars = spec.max_input_chars_per_word
    e.max_token_chars = max(len(t) for t in vocab)
    e.pattern = None
    e.ints = tuple(range(len(vocab)))
    utf8 = [t.encode("utf-8", "surrogatepass") for t in vocab]
    if e.kind == WORDPIECE:
        p = spec.prefix
        e.vocab = prefix_table([(t, i) for i, t in enumerate(vocab)])
        e.cont = prefix_table([(t[len(p):], i) for i, t in enumerate(vocab) if t.startswith(p) and len(t) > len(p)])
        e.merges = PairMap([], [])
    else:
        try:
            pairs = [(ids[a], ids[b]) for a, b in spec.merges or ()]
            merged = [ids[a + b] for a, b in spec.merges or ()]
        except KeyError as exc:
            raise TokkitError(f"a merge names or makes {exc.args[0]!r}, which is not in the vocabulary") from None
        e.merges = PairMap(pairs, merged)
        if e.kind == BYTELEVEL:
            from tokkit.bytes import bytes_to_unicode, decode_symbols

            raw = [decode_symbols(t) for t in vocab]
            keys = [(r, i) for i, r in enumerate(raw) if r is not None]
            e.vocab = StrMap([r for r, _ in keys], [i for _, i in keys])
            for byte, sym in enumerate(bytes_to_unicode()):
                e.byte_ids[byte] = ids.get(sym, -1)
            words = raw
            if spec.pattern is not None:
                import regex

                e.pattern = regex.compile(spec.pattern)
        else:
            e.vocab = StrMap(utf8, range(len(vocab)))
            suffix = (spec.suffix or "").encode()
            for ch in suffix:
                e.suffix.push_back(ch)
            words = [u[: len(u) - len(suffix)] if u.endswith(suffix) and len(u) > len(suffix) else None
                     for u in utf8]
        e.compute_direct(words)
    added = [a for a in spec.added if not (split_special_tokens and a.special)]
    e.sp_start.push_back(0)
    top = max([ord(a.content[0]) for a in added] or [0])
    e.first.assign(top // 8 + 1, 0)
    for a in added:
        for ch in a.content:
            e.sp_chars.push_back(ord(ch))
        e.sp_start.push_back(e.sp_chars.size())
        e.sp_ids.push_back(a.id)
        e.first[ord(a.content[0]) >> 3] |= 1 << (ord(a.content[0]) & 7)
    return e
