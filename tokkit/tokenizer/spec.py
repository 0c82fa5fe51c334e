"""The data model every Tokenizer is built from: Spec, its added tokens and normalizer options.

>>> spec = Spec(kind="wordpiece", vocab=["[UNK]", "a", "##b"], merges=None,
...             added=[AddedToken(0, "[UNK]")], unk_token="[UNK]", normalizer=BertNorm())
>>> spec.token_ids()["##b"]
2
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit.errors import TokkitError
from tokkit.text.normalize import BertNorm

KINDS = ("wordpiece", "bpe", "bytelevel", "unigram", "wordlevel")
BERT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


@dataclass(frozen=True)
class AddedToken:
    """A token of tokenizers' `added_tokens`: matched in the raw text before normalisation (or, when
    `normalized`, in the normalized text); `single_word` only between non-word characters;
    `lstrip` / `rstrip` take the whitespace before / after it along."""

    id: int
    content: str
    special: bool = True
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False

    @property
    def plain(self) -> bool:
        """No flag beyond `special`: what the fast encode paths support."""
        return not (self.single_word or self.lstrip or self.rstrip or self.normalized)


@dataclass(frozen=True)
class Pipeline:
    """A tokenizer.json's components as tokkit.tokenizer.{normalizers, pre_tokenizers, models, decoders}
    read them; the general encode path (tokkit._native.pipeline) runs any combination of them."""

    normalizer: object
    pre_tokenizer: object
    model: object
    decoder: object


@dataclass(frozen=True)
class Template:
    """The post-processor: the special tokens around one text or a pair, and the offset trimming.

    `single` and `pair` list the row's parts in order as (name, type id): "$A" and "$B" stand for
    the texts, any other name is a special token. `trim_offsets` drops the spaces a byte-level
    token carries from its offsets (`add_prefix_space`: except the one space of a first token).
    `style` is the tokenizer.json type it is written back as. `ids` gives each special token's id
    as the post-processor says, which need not be the vocabulary's (nor the token in it).

    >>> t = bert_template("[CLS]", "[SEP]", ids={"[CLS]": 2, "[SEP]": 3})
    >>> t.pair
    (('[CLS]', 0), ('$A', 0), ('[SEP]', 0), ('$B', 1), ('[SEP]', 1))
    >>> t.specials(pair=True), t.id_of("[SEP]")
    (3, 3)
    """

    single: tuple[tuple[str, int], ...]
    pair: tuple[tuple[str, int], ...]
    trim_offsets: bool = False
    add_prefix_space: bool = False
    style: str = "TemplateProcessing"
    ids: tuple[tuple[str, int], ...] = ()

    def id_of(self, name: str) -> int:
        """The id a special token of the template is written as."""
        return dict(self.ids)[name]

    def parts(self, pair: bool) -> tuple[tuple[str, int], ...]:
        return self.pair if pair else self.single

    def specials(self, pair: bool) -> int:
        """How many special tokens a row gets (what truncation leaves room for)."""
        return sum(name not in SEQUENCES for name, _ in self.parts(pair))

    def tokens(self) -> list[str]:
        """The special tokens the template names, each once, in order of appearance."""
        return list(dict.fromkeys(n for n, _ in self.single + self.pair if n not in SEQUENCES))


SEQUENCES = ("$A", "$B")


def bert_template(cls: str, sep: str, style: str = "TemplateProcessing", *, ids: dict[str, int]) -> Template:
    """`cls $A sep` and `cls $A sep $B:1 sep:1`: BERT's template, `ids` giving the two tokens' ids."""
    return Template(single=((cls, 0), ("$A", 0), (sep, 0)),
                    pair=((cls, 0), ("$A", 0), (sep, 0), ("$B", 1), (sep, 1)), style=style,
                    ids=((cls, ids[cls]), (sep, ids[sep])))


@dataclass
class Spec:
    """Everything that defines a tokenizer, as plain data (what gets pickled and saved).

    `vocab` lists every token by id (model vocabulary and added tokens). `pattern` is None for
    the GPT-2 pattern; `add_prefix_space` puts a space before each byte-level text part (between
    added tokens) that does not start with one. `post` is the post-processor's Template, or None.
    A byte-level spec may also NFC-normalize its text (`nfc`) and emit a piece found whole in the
    vocabulary as that token without merging (`ignore_merges`); `source` then keeps the components
    it was read from, for the calls the fast path hands to the general one.
    """

    kind: str
    vocab: list[str]
    merges: list[tuple[str, str]] | None
    added: list[AddedToken]
    unk_token: str | None = None
    normalizer: BertNorm | None = None
    pattern: str | None = None
    add_prefix_space: bool = False
    prefix: str = "##"
    max_input_chars_per_word: int = 100
    suffix: str | None = None
    post: Template | None = None
    decoder_cleanup: bool = True
    model_max_length: int = 512
    extra: dict = field(default_factory=dict)
    pipeline: Pipeline | None = None
    nfc: bool = False
    ignore_merges: bool = False
    source: Pipeline | None = field(default=None, compare=False)

    def token_ids(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.vocab) if tok is not None}

    def with_options(self, **changes) -> "Spec":
        return replace(self, **changes)


def bert_post(vocab: list[str], specials: list[str]) -> Template | None:
    """The BERT template when both [CLS] and [SEP] are special tokens, else None."""
    if "[CLS]" not in specials or "[SEP]" not in specials:
        return None
    return bert_template("[CLS]", "[SEP]", ids={tok: vocab.index(tok) for tok in ("[CLS]", "[SEP]")})


def vocab_from_mapping(mapping: dict, where: str) -> list[str | None]:
    """Turn {token: id} into a list by id. Ids may leave gaps (None there), as tokenizers allows
    (OpenAI-style files leave ids unused below their special tokens); no id may be given twice.

    >>> vocab_from_mapping({"a": 0, "c": 2}, "v.json")
    ['a', None, 'c']
    """
    if not isinstance(mapping, dict) or not mapping:
        raise TokkitError(f"{where}: expected a non-empty object of token -> id")
    for token, idx in mapping.items():
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < MAX_ID:
            raise TokkitError(f"{where}: token {token!r} has id {idx!r}; ids must be integers from 0 to {MAX_ID - 1}")
    size = max(mapping.values()) + 1
    if size > HOLES_PER_TOKEN * len(mapping):
        raise TokkitError(f"{where}: ids run to {size - 1:,} for {len(mapping):,} tokens; tokkit reads "
                          f"vocabularies whose ids leave at most {HOLES_PER_TOKEN - 1} unused per token")
    vocab: list[str | None] = [None] * size
    for token, idx in mapping.items():
        if vocab[idx] is not None:
            raise TokkitError(f"{where}: id {idx} is given to both {vocab[idx]!r} and {token!r}")
        vocab[idx] = token
    return vocab


MAX_ID = 2**31 - 1  # ids are int32 in the encoders' outputs
HOLES_PER_TOKEN = 16  # a vocabulary list by id is made as long as its highest id: a few unused ids, not millions


def check_merge(pair: tuple[str, str], known: set[str], where: str) -> None:
    for side in pair:
        if side not in known:
            raise TokkitError(f"{where}: merge {' '.join(pair)!r} names unknown token {side!r}")
    if pair[0] + pair[1] not in known:
        raise TokkitError(f"{where}: merge {' '.join(pair)!r} makes {pair[0] + pair[1]!r}, which is not in the vocabulary")


def detect_kind(vocab: list[str], where: str) -> str:
    """`</w>` tokens mean char BPE; the full GPT-2 byte alphabet means bytelevel."""

    if any(tok and tok.endswith("</w>") for tok in vocab):
        return "bpe"
    if set(bytes_to_unicode()) <= set(vocab):
        return "bytelevel"
    raise TokkitError(f"{where}: cannot tell the BPE kind (no '</w>' tokens and not the full byte alphabet); "
                      "pass kind='bpe' or kind='bytelevel'")


def specials_in(vocab: list[str], extra: list[str] | None) -> list[AddedToken]:
    """The BERT specials present in `vocab` plus any extra ones asked for, as added tokens."""
    ids = {tok: i for i, tok in enumerate(vocab) if tok is not None}
    names = [t for t in BERT_SPECIALS if t in ids]
    for tok in extra or ():
        if tok not in ids:
            raise TokkitError(f"special token {tok!r} is not in the vocabulary")
        if tok not in names:
            names.append(tok)
    return sorted((AddedToken(ids[t], t) for t in names), key=lambda a: a.id)
