"""Random pipelines built by `tokenizers` and every route tokkit's planner has for them, compared.

Shared by tests/tokenizer/test_routes_differential.py (seeded, through hypothesis) and
benchmarks/fuzz_routes.py (for as long as it is given). A pipeline is one of five shapes, each
trained by tokenizers' own trainer on a small corpus, with random options and random added tokens
(special, normalized, single_word, lstrip, rstrip); tokenizers saves it as the Hub makes files.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from functools import lru_cache

import tokenizers
from tokenizers import AddedToken, decoders, models, normalizers, pre_tokenizers, trainers

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer.encoders import routes

# hostile atoms (joiners, marks, CR LF, space runs, U+2581, BOM) and multilingual ones
ATOMS = ["a", "b", "ab", "the", "The", "hello", "Hello", "HELLO", "world", "wor", "ld", "1", "42", "!", ",", "'s",
         " ", "  ", "   ", "\t", "\n", "\r\n", "\u200b", "\u200d", "\ufeff", "\u00a0", "\u0301", "e\u0301", "\u00e9",
         "\u00c9COLE", "\u00e9cole", "\u2581", "\u2581the", "\ufb01", "\u03a3", "\u0130", "\u65e5\u672c\u8a9e",
         "\ud55c\uad6d\uc5b4", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\u0915\u094d\u0937", "\u0e44\u0e17\u0e22",
         "\U0001f600", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1eb\U0001f1f7", "<x>", "[new]", "<|eot|>",
         "\u3000", "\u2000", "=\u0338", "_", "\u203f"]
# added tokens: words of the corpus (in the model's vocabulary) and ones past it ("zebra", "\u2581qq")
# and tokens of spaces (GPT-NeoX's), a <mask> (MPNet's) and one NFC changes
CONTENTS = ["<x>", "Hello", "hello", "wor", "ld", "[new]", " ab", "\U0001f600", "<|eot|>", "\u00c9COLE", "\u2581the",
            "the", "zebra", "\u2581qq", "  ", "   ", "<mask>", "e\u0301"]
UNSEEN = ["Zebra", "ZEBRA", "zebra", "\u2581QQ", "\u2581qq", "qq"]  # in texts, never in the corpus
TEXT_ATOMS = ATOMS + CONTENTS + UNSEEN
SHAPES = ("bert", "charbpe", "bytelevel", "sentencepiece", "mixed")
VARIANTS = 16  # options drawn per shape
FLAGS = ("special", "normalized", "single_word", "lstrip", "rstrip")


@lru_cache(maxsize=None)
def corpus() -> tuple[str, ...]:
    """Training lines: the atoms in a fixed random order (the same lines on every run)."""
    rng = random.Random(7)
    return tuple(" ".join(rng.choice(ATOMS).strip() or "x" for _ in range(rng.randint(3, 12))) for _ in range(400))


@lru_cache(maxsize=None)
def trained(shape: str, variant: int) -> str:
    """One shape's pipeline (variant picks its options), trained by tokenizers, as its JSON."""
    rng = random.Random(variant)
    if shape == "bert":
        tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = _bert_normalizer(rng)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]", "[CLS]", "[SEP]"])
    elif shape == "charbpe":
        suffix = {"end_of_word_suffix": "</w>"} if rng.random() < 0.5 else {}
        tok = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]", **suffix))
        tok.normalizer = _bert_normalizer(rng)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"], **suffix)
    elif shape == "bytelevel":
        tok = tokenizers.Tokenizer(models.BPE())
        tok.normalizer = rng.choice([None, normalizers.NFC()])
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=rng.random() < 0.5)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    elif shape == "mixed":
        tok, trainer = _mixed(rng)
    else:
        unigram = rng.random() < 0.5
        tok = tokenizers.Tokenizer(models.Unigram() if unigram else models.BPE(unk_token="<unk>", byte_fallback=True,
                                                                               fuse_unk=True))
        steps = [normalizers.NFKC()] if rng.random() < 0.5 else []
        steps += [normalizers.Replace(tokenizers.Regex(" {2,}"), " ")] if rng.random() < 0.5 else []
        tok.normalizer = normalizers.Sequence(steps) if steps else None
        tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=rng.choice(["always", "first", "never"]),
                                                     split=rng.random() < 0.7)
        tok.decoder = decoders.Metaspace()
        trainer = (trainers.UnigramTrainer(vocab_size=300, special_tokens=["<unk>"], unk_token="<unk>")
                   if unigram else trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>"]))
    tok.train_from_iterator(corpus(), trainer)
    return tok.to_str()


def _bert_normalizer(rng: random.Random):
    """BERT's normalizer with random options, or (a quarter of the time) none."""
    if rng.random() < 0.25:
        return None
    return normalizers.BertNormalizer(lowercase=rng.random() < 0.7, strip_accents=rng.choice([None, True, False]))


def _mixed(rng: random.Random):
    """Any normalizer and pre-tokenizer steps in a Sequence, before a Unigram or WordPiece model."""
    norms = [normalizers.NFD(), normalizers.NFKC(), normalizers.Lowercase(), normalizers.StripAccents(),
             normalizers.Strip(left=rng.random() < 0.5, right=True), normalizers.Replace("a", "e"),
             normalizers.Replace(tokenizers.Regex(" {2,}"), " "), normalizers.Prepend("\u2581"), normalizers.Nmt()]
    pres = [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation(),
            pre_tokenizers.Digits(individual_digits=rng.random() < 0.5), pre_tokenizers.Split(" ", "isolated"),
            pre_tokenizers.Metaspace(replacement=rng.choice(["\u2581", "_"]),
                                     prepend_scheme=rng.choice(["always", "first", "never"]), split=rng.random() < 0.5),
            pre_tokenizers.Split(tokenizers.Regex(r"\w+|[^\w\s]+"), rng.choice(["isolated", "removed"])),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=rng.random() < 0.5)]
    unigram = rng.random() < 0.5
    tok = tokenizers.Tokenizer(models.Unigram() if unigram else models.WordPiece(unk_token="[UNK]"))
    steps = rng.sample(norms, rng.randint(0, 3))
    tok.normalizer = normalizers.Sequence(steps) if steps else None
    tok.pre_tokenizer = pre_tokenizers.Sequence(rng.sample(pres, rng.randint(1, 3)))
    trainer = (trainers.UnigramTrainer(vocab_size=300, special_tokens=["<unk>"], unk_token="<unk>") if unigram
               else trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]"]))
    return tok, trainer


@dataclass(frozen=True)
class Case:
    """A pipeline: its shape and variant, and its added tokens as (content, flags) pairs."""

    shape: str
    variant: int
    added: tuple[tuple[str, tuple[bool, ...]], ...]


def random_case(rng: random.Random) -> Case:
    contents = rng.sample(CONTENTS, rng.randint(0, 4))
    added = tuple((c, _flags(rng)) for c in contents)
    return Case(rng.choice(SHAPES), rng.randrange(VARIANTS), added)


def _flags(rng: random.Random) -> tuple[bool, ...]:
    """No flag, `special` alone (what the fast engines take) or any flags, a third of the time each."""
    pick = rng.randrange(3)
    return tuple(k == 0 for k in range(len(FLAGS))) if pick == 1 else tuple(
        pick == 2 and rng.random() < 0.5 for _ in FLAGS)


def random_texts(rng: random.Random, count: int = 6) -> list[str]:
    return ["".join(rng.choice(TEXT_ATOMS) for _ in range(rng.randint(0, 14))) for _ in range(count)]


def with_added_forms(case: Case, texts: list[str]) -> list[str]:
    """`texts`, joined, and each added token's content in other cases and beside spaces (what a
    normalizer may turn into it, and what lstrip, rstrip and single_word read)."""
    forms = [f(c) for c, _ in case.added for f in (str.upper, str.title, str.lower, lambda c: f" {c.title()} x{c}",
                                                  lambda c: f"x{c}y {c}{c} \u3000{c}\u00a0 _{c}_ e\u0301{c}=\u0338")]
    return texts + [" ".join(texts), "  ".join(texts)] + forms


def _equal_normalized_forms(oracle: tokenizers.Tokenizer, case: Case) -> bool:
    """Whether two normalized added tokens normalize alike ("Hello" and "hello" behind a lowercasing
    normalizer): tokenizers then picks one by its hash map's order, which changes from run to run,
    so there is no one answer to compare with (tokkit takes the first in the file)."""
    normalized = FLAGS.index("normalized")
    forms = [oracle.normalizer.normalize_str(c) if oracle.normalizer else c
             for c, flags in case.added if flags[normalized]]
    return len(set(forms)) < len(forms)


def build(case: Case, folder) -> tuple[tokenizers.Tokenizer, object]:
    """(tokenizers' Tokenizer, tokkit's) from the file tokenizers saves for `case`; tokkit's is None
    where it refuses the file (a normalized added token the normalizer turns into nothing) or where
    tokenizers has no one answer (_equal_normalized_forms)."""
    built = tokenizers.Tokenizer.from_str(trained(case.shape, case.variant))
    built.add_tokens([AddedToken(c, **dict(zip(FLAGS, flags))) for c, flags in case.added])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tokenizer.json"
    built.save(str(path))
    oracle = tokenizers.Tokenizer.from_file(str(path))
    if _equal_normalized_forms(oracle, case):
        return oracle, None
    try:
        return oracle, tokkit.load(path)
    except TokkitError as exc:
        if "normalizer turns" not in str(exc) and "normalizes to nothing" not in str(exc):
            raise
        return oracle, None


def disagreements(oracle: tokenizers.Tokenizer, tok, texts: list[str]) -> list[tuple]:
    """(route, way, text, got, want) for every way a route's ids or offsets differ from tokenizers':
    encode, encode_numpy, encode_flat (encode_batch_flat's), encode_many and encode_full (offsets)."""
    wants = []
    for text in texts:
        try:
            e = oracle.encode(text, add_special_tokens=False)
        except BaseException as exc:  # pyo3's PanicException: tokenizers has no answer for this text
            if type(exc).__name__ != "PanicException":
                raise
            e = None
        wants.append(e)
    kept = [(t, w) for t, w in zip(texts, wants) if w is not None]
    texts = [t for t, _ in kept]
    out = []
    for name, enc in routes(tok.spec, tok.split_special_tokens).items():
        ids, ptr = enc.encode_flat(texts, 0, len(texts))
        many = enc.encode_many(texts, 0, len(texts))
        for k, (text, want) in enumerate(kept):
            got = {"encode": enc.encode(text), "encode_numpy": enc.encode_numpy(text).tolist(),
                   "encode_flat": ids[ptr[k]:ptr[k + 1]].tolist(), "encode_many": many[k]}
            for way, value in got.items():
                if value != want.ids:
                    out.append((name, way, text, value, want.ids))
            full_ids, starts, ends, _ = enc.encode_full(text)
            if (full_ids, list(zip(starts, ends))) != (want.ids, [tuple(o) for o in want.offsets]):
                out.append((name, "encode_full", text, (full_ids, list(zip(starts, ends))),
                            (want.ids, want.offsets)))
    return out


def describe(case: Case) -> str:
    return json.dumps({"shape": case.shape, "variant": case.variant,
                       "added": [[c, dict(zip(FLAGS, f))] for c, f in case.added]}, ensure_ascii=True)
