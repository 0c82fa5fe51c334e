"""tokenizer.json's `decoder`: the components that turn tokens back into text, as tokenizers chains them.

Each decoder maps the list of tokens to a new list (`decode_chain`); a Sequence runs them in turn and
the text is the join of the last list. Where tokenizers panics (a Strip cutting past the token),
tokkit gives the empty string instead.

>>> llama = decoder_from_json({"type": "Sequence", "decoders": [
...     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
...     {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "t.json")
>>> decode_tokens(llama, ["▁Hello", "▁w", "<0xC3>", "<0xB6>", "rld"])
'Hello wörld'
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Union

from tokkit._native.byte_symbols import decode_symbols
from tokkit.errors import TokkitError
from tokkit.tokenizer.models.wordlevel import check_type, json_field, json_object, json_uint
from tokkit.tokenizer.onig_regex import regex_of

SCHEMES = ("first", "never", "always")
# The cleanup of tokenizers' WordPiece decoder, applied to each token in this order.
CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
           (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def _char(obj: dict, key: str, where: str) -> str:
    """A field holding one character (a Rust `char`)."""
    value = json_field(obj, key, (str,), where)
    if len(value) != 1 or "\ud800" <= value <= "\udfff":
        raise TokkitError(f"{where}: field '{key}' must be one character, got {value!r}")
    return value


@dataclass(frozen=True)
class Metaspace:
    """The replacement character becomes a space again; in the first token it is dropped, every one of them.

    (`prepend_scheme` "never" keeps them as spaces in the first token too.)

    >>> Metaspace().decode_chain(["▁Hey", "▁friend", "!"])
    ['Hey', ' friend', '!']
    """

    replacement: str = "▁"
    prepend_scheme: str = "always"
    split: bool = True

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "Metaspace":
        at = f"{where}: decoder.Metaspace"
        scheme = json_field(obj, "prepend_scheme", (str,), at, "always")
        if scheme not in SCHEMES:
            raise TokkitError(f"{at}: field 'prepend_scheme' must be one of {', '.join(SCHEMES)}, got {scheme!r}")
        json_field(obj, "str_rep", (str, type(None)), at, None)  # written by old versions, unused
        if json_field(obj, "add_prefix_space", (bool, type(None)), at, None) is False and scheme != "never":
            raise TokkitError(f"{at}: add_prefix_space false does not match prepend_scheme {scheme!r}")
        split = json_field(obj, "split", (bool, type(None)), at, None)
        return cls(replacement=_char(obj, "replacement", at), prepend_scheme=scheme, split=split is not False)

    def to_json(self) -> dict:
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme,
                "split": self.split}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        first = "" if self.prepend_scheme != "never" else " "
        return [tok.replace(self.replacement, " " if i else first) for i, tok in enumerate(tokens)]


@dataclass(frozen=True)
class ByteFallback:
    """Runs of <0xNN> tokens become the text their bytes spell; bytes that are not UTF-8 give one U+FFFD each.

    A byte token is six bytes long, "<0x", two hex digits (either case, or "+" and one digit, as
    Rust reads a radix-16 u8) and ">". A whole run that is not valid UTF-8 becomes one U+FFFD per byte.

    >>> ByteFallback().decode_chain(["<0xE2>", "<0x98>", "<0x83>", "a", "<0xC3>", "<0x41>"])
    ['☃', 'a', '�', '�']
    """

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "ByteFallback":
        return cls()

    def to_json(self) -> dict:
        return {"type": "ByteFallback"}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        run = bytearray()
        for tok in tokens:
            value = byte_value(tok)
            if value is not None:
                run.append(value)
                continue
            out += _bytes_text(run)
            run.clear()
            out.append(tok)
        return out + _bytes_text(run)


def byte_value(token: str) -> int | None:
    """The byte a <0xNN> token stands for, or None.

    >>> byte_value("<0x4A>"), byte_value("<0x+F>"), byte_value("<0x4A"), byte_value("<0xéé>")
    (74, 15, None, None)
    """
    if not (len(token) in (5, 6) and token.startswith("<0x") and token.endswith(">")):
        return None
    digits = token[3:-1]
    if len(digits.encode("utf-8", "surrogatepass")) != 2:
        return None
    digits = digits[1:] if digits[0] == "+" else digits
    return int(digits, 16) if all(c in "0123456789abcdefABCDEF" for c in digits) else None


def _bytes_text(run: bytearray) -> list[str]:
    if not run:
        return []
    try:
        return [run.decode("utf-8")]
    except UnicodeDecodeError:
        return ["\ufffd"] * len(run)


@dataclass(frozen=True)
class Fuse:
    """All tokens joined into one.

    >>> Fuse().decode_chain(["a", "b"])
    ['ab']
    """

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "Fuse":
        return cls()

    def to_json(self) -> dict:
        return {"type": "Fuse"}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]


@dataclass(frozen=True)
class Strip:
    """Up to `start` leading and `stop` trailing `content` characters cut from each token.

    >>> Strip(" ", 1, 0).decode_chain(["  a ", " b"])
    [' a ', 'b']
    """

    content: str = " "
    start: int = 0
    stop: int = 0

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "Strip":
        at = f"{where}: decoder.Strip"
        return cls(content=_char(obj, "content", at), start=json_uint(obj, "start", at, 64),
                   stop=json_uint(obj, "stop", at, 64))

    def to_json(self) -> dict:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [self._strip(tok) for tok in tokens]

    def _strip(self, tok: str) -> str:
        head = len(tok) - len(tok.lstrip(self.content))
        tail = len(tok) - len(tok.rstrip(self.content))
        if tail == len(tok) and self.stop > len(tok) or min(head, self.start) + min(tail, self.stop) > len(tok):
            return ""  # tokenizers panics here: the cuts run past each other
        return tok[min(head, self.start):len(tok) - min(tail, self.stop)]


@dataclass(frozen=True)
class Replace:
    """Every match of `pattern` ({"String": ...} or {"Regex": ...}) in each token replaced by `content`.

    Regex matches are found as tokenizers' Oniguruma loop finds them: an empty match right where
    the previous match ended is skipped. An empty token stays empty.

    >>> Replace(("String", "▁"), " ").decode_chain(["▁Hey", "▁you"])
    [' Hey', ' you']
    >>> Replace(("Regex", "x*"), "-").decode_chain(["abxd", ""])
    ['-a-b-d-', '']
    """

    pattern: tuple[str, str]
    content: str

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "Replace":
        at = f"{where}: decoder.Replace"
        pattern = json_field(obj, "pattern", (dict,), at)
        if len(pattern) != 1 or next(iter(pattern)) not in ("String", "Regex") \
                or not isinstance(next(iter(pattern.values())), str):
            raise TokkitError(f"{at}: field 'pattern' must be {{\"String\": ...}} or {{\"Regex\": ...}}, got {pattern!r}")
        decoder = cls(pattern=next(iter(pattern.items())), content=json_field(obj, "content", (str,), at))
        regex_of(dict(pattern), at)  # read as Oniguruma reads it; a bad pattern is one error naming it
        return decoder

    def to_json(self) -> dict:
        return {"type": "Replace", "pattern": {self.pattern[0]: self.pattern[1]}, "content": self.content}

    @cached_property
    def _regex(self):
        return regex_of(dict([self.pattern]))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        kind, text = self.pattern
        if kind == "String" and text:  # a literal: the same leftmost, non-overlapping matches
            return [tok.replace(text, self.content) for tok in tokens]
        return [self._replace(tok) for tok in tokens]

    def _replace(self, tok: str) -> str:
        out, done = [], 0
        for start, end in match_spans(self._regex, tok):
            out += [tok[done:start], self.content]
            done = end
        return "".join(out) + tok[done:]


def match_spans(pattern, text: str) -> list[tuple[int, int]]:
    """The matches of `pattern` in `text` as Oniguruma's iteration gives them to tokenizers."""
    spans: list[tuple[int, int]] = []
    pos, last_end = 0, None
    while text and pos <= len(text):
        m = pattern.search(text, pos)
        if m is None:
            break
        if m.start() == m.end() == last_end:  # no empty match where the last one ended
            pos += 1
            continue
        spans.append(m.span())
        pos = last_end = m.end()
    return spans


@dataclass(frozen=True)
class ByteLevel:
    """The GPT-2 byte symbols read back as bytes (a token that is not all symbols as its own UTF-8), joined.

    The bytes become text as Rust's from_utf8_lossy does: each invalid stretch gives one U+FFFD.
    The fields are the pre-tokenizer's, written back unchanged.

    >>> ByteLevel().decode_chain(["Hello", "Ġw", "Ã¶", "rld", "Ã"])
    ['Hello wörld�']
    """

    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "ByteLevel":
        at = f"{where}: decoder.ByteLevel"
        return cls(add_prefix_space=json_field(obj, "add_prefix_space", (bool,), at),
                   trim_offsets=json_field(obj, "trim_offsets", (bool,), at),
                   use_regex=json_field(obj, "use_regex", (bool,), at, True))

    def to_json(self) -> dict:
        return {"type": "ByteLevel", "add_prefix_space": self.add_prefix_space, "trim_offsets": self.trim_offsets,
                "use_regex": self.use_regex}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return [b"".join(map(token_bytes, tokens)).decode("utf-8", "replace")]


@lru_cache(maxsize=1 << 16)
def token_bytes(token: str) -> bytes:
    """A byte-level token's bytes: its GPT-2 symbols read back, or its own UTF-8 when it is not all symbols.

    >>> token_bytes("Ġw"), token_bytes("[CLS]"), token_bytes("中")
    (b' w', b'[CLS]', b'\\xe4\\xb8\\xad')
    """
    raw = decode_symbols(token)
    return token.encode("utf-8", "surrogatepass") if raw is None else raw


@dataclass(frozen=True)
class WordPiece:
    """A token starting with `prefix` is glued to the previous one (prefix cut), any other gets a space.

    With `cleanup`, each token then goes through BERT's detokenizing replacements (" ." -> ".", ...).

    >>> WordPiece().decode_chain(["un", "##aff", "##able", "!"])
    ['un', 'aff', 'able', '!']
    """

    prefix: str = "##"
    cleanup: bool = True

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "WordPiece":
        at = f"{where}: decoder.WordPiece"
        return cls(prefix=json_field(obj, "prefix", (str,), at), cleanup=json_field(obj, "cleanup", (bool,), at))

    def to_json(self) -> dict:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, tok in enumerate(tokens):
            if i:
                tok = tok[len(self.prefix):] if tok.startswith(self.prefix) else " " + tok
            if self.cleanup:
                for old, new in CLEANUP:
                    tok = tok.replace(old, new)
            out.append(tok)
        return out


@dataclass(frozen=True)
class BPEDecoder:
    """Every `suffix` in a token becomes a space, or nothing in the last token.

    >>> BPEDecoder().decode_chain(["hel", "lo</w>", "you</w>"])
    ['hel', 'lo ', 'you']
    """

    suffix: str = "</w>"

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "BPEDecoder":
        return cls(suffix=json_field(obj, "suffix", (str,), f"{where}: decoder.BPEDecoder"))

    def to_json(self) -> dict:
        return {"type": "BPEDecoder", "suffix": self.suffix}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        last = len(tokens) - 1
        return [tok.replace(self.suffix, "" if i == last else " ") for i, tok in enumerate(tokens)]


@dataclass(frozen=True)
class Sequence:
    """The decoders in turn, each on the list the one before it made.

    >>> Sequence((ByteFallback(), Fuse())).decode_chain(["a", "<0x62>"])
    ['ab']
    """

    decoders: tuple

    @classmethod
    def from_json(cls, obj: dict, where: str) -> "Sequence":
        items = json_field(obj, "decoders", (list,), f"{where}: decoder.Sequence")
        return cls(tuple(_from_json(item, f"{where}: decoder.Sequence.decoders[{k}]") for k, item in enumerate(items)))

    def to_json(self) -> dict:
        return {"type": "Sequence", "decoders": [d.to_json() for d in self.decoders]}

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens


Decoder = Union[Metaspace, ByteFallback, Fuse, Strip, Replace, ByteLevel, WordPiece, BPEDecoder, Sequence]
DECODERS = {cls.__name__: cls for cls in (Metaspace, ByteFallback, Fuse, Strip, Replace, ByteLevel, WordPiece,
                                          BPEDecoder, Sequence)}


def decoder_from_json(obj: dict | None, where: str) -> Decoder | None:
    """The decoder a tokenizer.json `decoder` object describes (None for null)."""
    return None if obj is None else _from_json(obj, where)


def _from_json(obj, where: str) -> Decoder:
    json_object(obj, f"{where}: decoder")
    kind = json_field(obj, "type", (str,), f"{where}: decoder")
    if kind not in DECODERS:
        raise TokkitError(f"{where}: decoder type {kind!r} is not supported ({', '.join(DECODERS)})")
    check_type(obj, kind, f"{where}: decoder")
    return DECODERS[kind].from_json(obj, where)


def decoder_to_json(decoder: Decoder | None) -> dict | None:
    """The `decoder` object as tokenizers writes it (None for no decoder)."""
    return None if decoder is None else decoder.to_json()


def decode_tokens(decoder: Decoder | None, tokens: list[str]) -> str:
    """The text of `tokens`: the decoder's chain joined, or the tokens joined by spaces without a decoder.

    >>> decode_tokens(None, ["a", "b"]), decode_tokens(Fuse(), ["a", "b"])
    ('a b', 'ab')
    """
    return " ".join(tokens) if decoder is None else "".join(decoder.decode_chain(list(tokens)))
