"""What a Tokenizer is made of: its pipeline of components, its added tokens and a few settings of its own.

The components (tokkit.tokenizer.normalizers, pre_tokenizers, models, post, decoders) are the only
form a tokenizer takes in memory: tokenizer.json is read into them and written from them
(hf_json.py), and plan.py picks the compiled code that runs them. Everything else about a tokenizer
(its kind, its vocabulary by id, its template) is read off them.

>>> from tokkit.tokenizer.models import WordLevel
>>> spec = Spec(Pipeline(model=WordLevel(vocab=("[UNK]", "hi"), unk_token="[UNK]")), added=(AddedToken(0, "[UNK]"),))
>>> spec.kind, spec.token_ids()["hi"]
('wordlevel', 1)
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from tokkit.errors import TokkitError
from tokkit.tokenizer import decoders, pre_tokenizers
from tokkit.tokenizer.models import BPE, Unigram, WordLevel, WordPiece
from tokkit.tokenizer.post import Template, post_template
from tokkit.tokenizer.vocab import BERT_SPECIALS, token_ids

KINDS = ("wordpiece", "bpe", "bytelevel", "unigram", "wordlevel")


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
    """A tokenizer's components in the order they run: tokkit.tokenizer.normalizers, pre_tokenizers,
    models, post (the post-processor) and decoders; None where a file has none (but the model)."""

    model: object
    normalizer: object = None
    pre_tokenizer: object = None
    post: object = None
    decoder: object = None


@dataclass(frozen=True)
class Spec:
    """A tokenizer as plain data (what gets pickled and saved): its pipeline, its added tokens (with
    the ids tokenizers gives them), `model_max_length` (transformers' tokenizer_config.json), `extra`
    (the file's `truncation` and `padding` objects: tokkit.encode's defaults, written back on save)
    and, for a trained Unigram, the same vocabulary as a SentencePiece model (saved as tokenizer.model).
    """

    pipeline: Pipeline
    added: tuple[AddedToken, ...] = ()
    model_max_length: int = 512
    extra: dict = field(default_factory=dict)
    sentencepiece_model: bytes | None = field(default=None, compare=False)  # a side file: no part of encoding

    @property
    def kind(self) -> str:
        """The model's family as a label: "wordpiece", "bpe", "bytelevel" (a BPE whose pre-tokenizer or
        decoder is ByteLevel), "unigram" or "wordlevel"."""
        model = self.pipeline.model
        if isinstance(model, BPE):
            byte_level = has_part(self.pipeline.pre_tokenizer, pre_tokenizers.ByteLevel) or \
                has_part(self.pipeline.decoder, decoders.ByteLevel)
            return "bytelevel" if byte_level else "bpe"
        return {Unigram: "unigram", WordLevel: "wordlevel", WordPiece: "wordpiece"}[type(model)]

    @property
    def vocab(self) -> list[str | None]:
        """Every token by id: the model's, then the added tokens' (None at an id nothing holds, up to
        the highest id the tokenizer writes, a template's included)."""
        vocab = list(self.pipeline.model.tokens)
        template = self.template
        top = max([a.id for a in self.added] + [i for _, i in (template.ids if template else ())], default=-1)
        vocab.extend([None] * (top + 1 - len(vocab)))
        for a in self.added:
            vocab[a.id] = a.content
        return vocab

    def token_ids(self) -> dict[str, int]:
        """token -> id: an added token's id where it has one (tokenizers looks those up first)."""
        return {**self.pipeline.model.ids, **{a.content: a.id for a in self.added}}

    @property
    def template(self) -> Template | None:
        """The post-processor's Template (the special tokens around a text or a pair), or None."""
        return post_template(self.pipeline.post, "post_processor")

    def with_options(self, **changes) -> "Spec":
        return replace(self, **changes)


def has_part(component, cls) -> bool:
    """Whether `component`, or a part of it when it is a Sequence, is a `cls`.

    >>> has_part(pre_tokenizers.Sequence((pre_tokenizers.Digits(False), pre_tokenizers.ByteLevel(False, True, False))),
    ...          pre_tokenizers.ByteLevel)
    True
    """
    if isinstance(component, cls):
        return True
    parts = getattr(component, "pretokenizers", None) or getattr(component, "decoders", None) or ()
    return any(has_part(part, cls) for part in parts)


def specials_in(vocab: list[str | None], extra: list[str] | None) -> tuple[AddedToken, ...]:
    """The BERT specials present in `vocab` plus any extra ones asked for, as added tokens by id.

    >>> [(a.id, a.content) for a in specials_in(["[PAD]", "a", "[UNK]"], ["a"])]
    [(0, '[PAD]'), (1, 'a'), (2, '[UNK]')]
    """
    ids = token_ids(vocab)
    names = [t for t in BERT_SPECIALS if t in ids]
    for tok in extra or ():
        if tok not in ids:
            raise TokkitError(f"special token {tok!r} is not in the vocabulary")
        if tok not in names:
            names.append(tok)
    return tuple(sorted((AddedToken(ids[t], t) for t in names), key=lambda a: a.id))
