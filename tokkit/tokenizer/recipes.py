"""The pipelines tokkit puts together itself: what its trainers make, and what a vocab.txt or a
vocab.json + merges.txt stands for, built as tokenizers' BertWordPieceTokenizer, CharBPETokenizer
and ByteLevelBPETokenizer build theirs.

>>> spec = wordpiece_spec(["[UNK]", "[CLS]", "[SEP]", "a", "##b"], ["[UNK]", "[CLS]", "[SEP]"])
>>> spec.kind, spec.template.id_of("[SEP]"), type(spec.pipeline.normalizer).__name__
('wordpiece', 2, 'BertNormalizer')
"""
from __future__ import annotations

from tokkit._native.patterns import GPT2_PATTERN
from tokkit.errors import TokkitError
from tokkit.tokenizer import decoders, pre_tokenizers
from tokkit.tokenizer.models import BPE, WordPiece
from tokkit.tokenizer.normalizers import BertNormalizer
from tokkit.tokenizer.post import bert_processing
from tokkit.tokenizer.spec import AddedToken, Pipeline, Spec
from tokkit.tokenizer.vocab import token_ids

UNK = "[UNK]"
SUFFIX = "</w>"
PREFIX = "##"


def wordpiece_spec(vocab: list[str | None], specials: list[str], *, lowercase: bool = True, strip_accents=None,
                   model_max_length: int = 512) -> Spec:
    """BERT's WordPiece: BertNormalizer, BertPreTokenizer, WordPiece with `##`, the [CLS]/[SEP] template."""
    ids = _ids(vocab, specials, "wordpiece")
    pipeline = Pipeline(normalizer=BertNormalizer(True, True, strip_accents, lowercase),
                        pre_tokenizer=pre_tokenizers.BertPreTokenizer(),
                        model=WordPiece(vocab=tuple(vocab), unk_token=UNK, continuing_subword_prefix=PREFIX),
                        post=bert_post(specials, ids), decoder=decoders.WordPiece(prefix=PREFIX, cleanup=True))
    return Spec(pipeline, added_specials(specials, ids), model_max_length)


def char_bpe_spec(vocab: list[str | None], merges, specials: list[str], *, lowercase: bool = False, strip_accents=None,
                  model_max_length: int = 512) -> Spec:
    """Sennrich's character BPE: BertNormalizer, BertPreTokenizer, BPE with a `</w>` end-of-word suffix."""
    ids = _ids(vocab, specials, "bpe")
    pipeline = Pipeline(normalizer=BertNormalizer(True, True, strip_accents, lowercase),
                        pre_tokenizer=pre_tokenizers.BertPreTokenizer(),
                        model=BPE(vocab=tuple(vocab), merges=_pairs(merges), unk_token=UNK, end_of_word_suffix=SUFFIX),
                        post=bert_post(specials, ids), decoder=decoders.BPEDecoder(suffix=SUFFIX))
    return Spec(pipeline, added_specials(specials, ids), model_max_length)


def byte_level_spec(vocab: list[str | None], merges, specials: list[str], *, pattern: str | None = None,
                    model_max_length: int = 512) -> Spec:
    """GPT-2's byte-level BPE: ByteLevel (or a Split by `pattern`, then ByteLevel without its regex), no
    normalizer, no unknown token."""
    ids = _ids(vocab, specials, "bytelevel")
    if pattern is None or pattern == GPT2_PATTERN:
        pre = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    else:
        pre = pre_tokenizers.Sequence((pre_tokenizers.Split({"Regex": pattern}, "Isolated", False),
                                       pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                                                                use_regex=False)))
    pipeline = Pipeline(pre_tokenizer=pre, model=BPE(vocab=tuple(vocab), merges=_pairs(merges)),
                        post=bert_post(specials, ids),
                        decoder=decoders.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True))
    return Spec(pipeline, added_specials(specials, ids), model_max_length)


def bert_post(specials: list[str], ids: dict[str, int]):
    """BERT's template when both [CLS] and [SEP] are special tokens, else None (no post-processor)."""
    return bert_processing(ids) if "[CLS]" in specials and "[SEP]" in specials else None


def added_specials(specials: list[str], ids: dict[str, int]) -> tuple[AddedToken, ...]:
    """The special tokens as added tokens, by id."""
    return tuple(sorted((AddedToken(ids[t], t) for t in specials), key=lambda a: a.id))


def _ids(vocab: list[str | None], specials: list[str], kind: str) -> dict[str, int]:
    """token -> id, checked: no token twice, the special tokens in the vocabulary, [UNK] where the model needs it."""
    ids = token_ids(vocab)
    if len(ids) != sum(tok is not None for tok in vocab):
        raise TokkitError("vocabulary holds a token twice")
    missing = [t for t in specials if t not in ids]
    if missing:
        raise TokkitError(f"special tokens {missing} are not in the vocabulary")
    if kind != "bytelevel" and UNK not in ids:
        raise TokkitError(f"{kind} vocabulary without {UNK!r}")
    return ids


def _pairs(merges) -> tuple[tuple[str, str], ...]:
    return tuple(tuple(m) for m in merges or ())
