"""Hub-like tokenizer folders, made the way the Hub makes them, and the texts to compare them on.

SentencePiece kinds: `sentencepiece` trains a small model on a few thousand lines (the shared
corpus's wiki and multilingual files when present, generated multilingual text otherwise) and
transformers' converter turns it into tokenizer.json; the .model stays beside it under its Hub name.
Byte-level, WordLevel and WordPiece kinds are trained and written by `tokenizers` itself. Every
vocabulary is small (1-4k), so each kind builds in a second or two.

Each `build_<kind>(folder)` writes into `folder` and returns it. Tests get each kind built once per
test session through `hub_folder(kind, tmp_path_factory)`:

    @pytest.fixture(params=KINDS)
    def hub(request, tmp_path_factory):
        return request.param, hub_folder(request.param, tmp_path_factory)

`spm_model(variant, tmp_path_factory)` does the same for bare .model files (SPM_VARIANTS: unigram,
BPE, char; byte fallback, user-defined symbols, the normalizer options), and `texts()` /
`edge_texts()` give the texts for equality tests.
"""
from __future__ import annotations

import io
import json
import random
from functools import lru_cache
from pathlib import Path

from helpers.oracles import WORDS, training_lines
# the Split patterns as the Hub's files spell them (Llama 3 uses cl100k's, Qwen2 splits digits one by one)
from tokkit._native.patterns import CL100K_PATTERN, O200K_PATTERN, QWEN2_PATTERN
from helpers.paths import HAVE_CORPUS, SHARED

SPM_KINDS = ("xlmr", "t5", "albert", "llama")
KINDS = SPM_KINDS + ("modernbert", "llama3", "qwen2", "o200k", "wordlevel", "wordpiece")
MODEL_NAMES = {"xlmr": "sentencepiece.bpe.model", "t5": "spiece.model", "albert": "spiece.model",
               "llama": "tokenizer.model"}


# ------------------------------------------------------------------------------ training text
@lru_cache(maxsize=None)
def spm_lines() -> tuple[str, ...]:
    """About 1,800 lines: the start of the wiki slice and the multilingual files (the end of
    `training_lines`), or generated multilingual text when the corpus is absent."""
    if not HAVE_CORPUS:
        return tuple(generated_lines())
    lines = [line for line in training_lines() if line.strip()]
    return tuple(lines[:600] + lines[-1200:])


SYLLABLES = {
    "latin": [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiouéäö"],
    "cyrillic": [c + v for c in "бвгдзклмнпрст" for v in "аеиоуыя"],
    "greek": [c + v for c in "βγδκλμνπρστ" for v in "αεηιοωυ"],
    "hangul": [chr(0xAC00 + i * 28 * 3) for i in range(120)],
    "cjk": [chr(0x4E00 + i * 37) for i in range(300)],
}


def generated_lines(n: int = 3000) -> list[str]:
    """Lines of made-up words in five scripts, Zipf-distributed, with digits and punctuation: enough
    distinct text for SentencePiece to fill a 2,000-piece vocabulary."""
    rng = random.Random(3)
    words = {script: ["".join(rng.choice(syl) for _ in range(rng.randint(1, 4))) for _ in range(2500)]
             for script, syl in SYLLABLES.items()}
    weights = [1 / (rank + 1) for rank in range(2500)]
    lines = []
    for _ in range(n):
        script = rng.choice(list(words))
        line = rng.choices(words[script], weights, k=rng.randint(3, 18))
        line += rng.choices(["1999", "3.14", ",", ".", "!", "(x)", rng.choice(WORDS)], k=rng.randint(0, 3))
        rng.shuffle(line)
        lines.append(("" if script in ("hangul", "cjk") and rng.random() < 0.5 else " ").join(line))
    return lines


def train_spm(path: Path, **options) -> Path:
    """Train a small SentencePiece model on `spm_lines()` and write it to `path`."""
    import sentencepiece as spm

    args = dict(model_type="unigram", vocab_size=2000, character_coverage=0.995, num_threads=1,
                minloglevel=2, seed_sentencepiece_size=30000, num_sub_iterations=1, hard_vocab_limit=False)
    args.update(options)
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(spm_lines()), model_writer=out, **args)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out.getvalue())
    return path


# ------------------------------------------------------------------------------ SentencePiece kinds
def _converted(folder: Path, kind: str, cls_name: str, train_options: dict, **tokenizer_options) -> Path:
    """Train the .model, let transformers' converter write tokenizer.json beside it."""
    import transformers

    train_spm(folder / MODEL_NAMES[kind], **train_options)
    tok = getattr(transformers, cls_name).from_pretrained(str(folder), **tokenizer_options)
    tok.save_pretrained(str(folder))
    return folder


def build_xlmr(folder: Path) -> Path:
    """XLM-R: Unigram + Precompiled + Metaspace; `<s> A </s></s> B </s>`; `<mask>` after the pieces."""
    return _converted(folder, "xlmr", "XLMRobertaTokenizer", {})


def build_t5(folder: Path) -> Path:
    """T5: pad 0, eos 1, unk 2, no bos; `A </s>`; extra ids at the end."""
    return _converted(folder, "t5", "T5Tokenizer", dict(pad_id=0, eos_id=1, unk_id=2, bos_id=-1), extra_ids=10)


def build_albert(folder: Path) -> Path:
    """ALBERT: Unigram behind quote replacement, NFKD, accent stripping and lowercasing; `[CLS] A [SEP]`."""
    return _converted(folder, "albert", "AlbertTokenizer",
                      dict(pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, control_symbols=["[CLS]", "[SEP]", "[MASK]"]))


def build_llama(folder: Path) -> Path:
    """Llama 2: SentencePiece BPE with byte fallback, digits split, no normalization, spaces kept."""
    return _converted(folder, "llama", "LlamaTokenizerFast",
                      dict(model_type="bpe", vocab_size=1500, byte_fallback=True, split_digits=True,
                           normalization_rule_name="identity", remove_extra_whitespaces=False,
                           allow_whitespace_only_pieces=True), from_slow=True)


# ------------------------------------------------------------------------------ tokenizers-made kinds
def _trained(folder: Path, tok, trainer, post=None) -> Path:
    tok.train_from_iterator(spm_lines(), trainer)
    if post is not None:
        tok.post_processor = post(tok)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    return folder


def _bpe_trainer(specials: list[str], vocab_size: int = 2000):
    from tokenizers import pre_tokenizers, trainers

    return trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False,
                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


def _template(single: str, pair: str, specials: list[str]):
    from tokenizers import processors

    return lambda tok: processors.TemplateProcessing(single=single, pair=pair,
                                                     special_tokens=[(t, tok.token_to_id(t)) for t in specials])


def _split_bytelevel(pattern: str):
    from tokenizers import Regex, pre_tokenizers

    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def build_modernbert(folder: Path) -> Path:
    """ModernBERT / OLMo style: NFC + ByteLevel BPE, `[CLS] A [SEP]`."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "<|endoftext|>"]
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return _trained(folder, tok, _bpe_trainer(specials),
                    _template("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", ["[CLS]", "[SEP]"]))


def build_llama3(folder: Path) -> Path:
    """Llama 3 style: cl100k Split + ByteLevel(use_regex=false), ignore_merges, ByteLevel then template post."""
    from tokenizers import Tokenizer, decoders, models, processors

    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>"]
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = _split_bytelevel(CL100K_PATTERN)
    tok.decoder = decoders.ByteLevel()
    template = _template("<|begin_of_text|> $A", "<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
                         ["<|begin_of_text|>"])
    return _trained(folder, tok, _bpe_trainer(specials),
                    lambda t: processors.Sequence([processors.ByteLevel(trim_offsets=False), template(t)]))


def build_qwen2(folder: Path) -> Path:
    """Qwen2 style: NFC, Qwen2's Split + ByteLevel(use_regex=false), ByteLevel post-processor."""
    from tokenizers import Tokenizer, decoders, models, normalizers, processors

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = _split_bytelevel(QWEN2_PATTERN)
    tok.decoder = decoders.ByteLevel()
    return _trained(folder, tok, _bpe_trainer(["<|endoftext|>", "<|im_start|>", "<|im_end|>"]),
                    lambda t: processors.ByteLevel(trim_offsets=False, add_prefix_space=False, use_regex=False))


def build_o200k(folder: Path) -> Path:
    """o200k's Split pattern + ByteLevel(use_regex=false), no normalizer, a ByteLevel post-processor
    (as the Hub's GPT-4o conversions have)."""
    from tokenizers import Tokenizer, decoders, models, processors

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = _split_bytelevel(O200K_PATTERN)
    tok.decoder = decoders.ByteLevel()
    return _trained(folder, tok, _bpe_trainer(["<|endoftext|>"]),
                    lambda t: processors.ByteLevel(trim_offsets=False, add_prefix_space=False, use_regex=False))


def build_wordlevel(folder: Path) -> Path:
    """WordLevel over Whitespace words, lowercased, with `[CLS] A [SEP]`."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return _trained(folder, tok, trainers.WordLevelTrainer(vocab_size=3000, special_tokens=specials,
                                                           show_progress=False),
                    _template("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", ["[CLS]", "[SEP]"]))


def build_wordpiece(folder: Path) -> Path:
    """BERT: BertNormalizer + BertPreTokenizer + WordPiece, `[CLS] A [SEP]`."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return _trained(folder, tok, trainers.WordPieceTrainer(vocab_size=2000, special_tokens=specials,
                                                           show_progress=False),
                    _template("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", ["[CLS]", "[SEP]"]))


BUILDERS = {name: globals()[f"build_{name}"] for name in KINDS}


@lru_cache(maxsize=None)
def _built(kind: str, base: str) -> Path:
    return BUILDERS[kind](Path(base) / "hub" / kind)


def hub_folder(kind: str, tmp_path_factory) -> Path:
    """The folder of `kind`, built once per test session under pytest's temporary folder."""
    return _built(kind, str(tmp_path_factory.getbasetemp()))


def model_file(kind: str, folder: Path) -> Path:
    """The .model a SentencePiece kind keeps beside its tokenizer.json."""
    return folder / MODEL_NAMES[kind]


# ------------------------------------------------------------------------------ bare .model files
SPM_VARIANTS = {
    "unigram": {},
    "unigram-bytes-user": dict(byte_fallback=True, user_defined_symbols=["<sym>", "[MASK]", "foo"],
                               control_symbols=["<ctl>"]),
    "bpe": dict(model_type="bpe"),
    "bpe-bytes": dict(model_type="bpe", byte_fallback=True),
    "bpe-user": dict(model_type="bpe", user_defined_symbols=["<sym>", "[MASK]", "foo"], control_symbols=["<ctl>"]),
    "char": dict(model_type="char"),
    "bpe-spaces-kept": dict(model_type="bpe", remove_extra_whitespaces=False, allow_whitespace_only_pieces=True),
    "bpe-no-prefix": dict(model_type="bpe", add_dummy_prefix=False),
    "bpe-identity": dict(model_type="bpe", normalization_rule_name="identity"),
    "bpe-suffix": dict(model_type="bpe", treat_whitespace_as_suffix=True),
    "bpe-inner-spaces": dict(model_type="bpe", split_by_whitespace=False),
    "unigram-casefold-digits": dict(normalization_rule_name="nmt_nfkc_cf", split_digits=True),
}
USER_SYMBOLS = ("<sym>", "[MASK]", "foo")


@lru_cache(maxsize=None)
def _trained_model(variant: str, base: str) -> Path:
    return train_spm(Path(base) / "spm" / f"{variant}.model", **SPM_VARIANTS[variant])


def spm_model(variant: str, tmp_path_factory) -> Path:
    """A .model file of one of SPM_VARIANTS, trained once per test session."""
    return _trained_model(variant, str(tmp_path_factory.getbasetemp()))


# ------------------------------------------------------------------------------ texts
EMOJI = ["👨‍👩‍👧‍👦 family", "🏳️‍🌈 and 🏴‍☠️", "👩🏽‍💻👍🏿", "🧑‍🤝‍🧑", "❤️‍🔥", "🇯🇵🇫🇷🇧🇷", "1️⃣ #️⃣", "a😀b",
         "\U0001F600" * 12]
ODD = ["e\u0301cole", "a\u0300\u0301\u0302b", "\u0301 leading mark", "nbsp\u00a0here", "crlf\r\nline\r\n",
       "tabs\tand\t\ttabs", "a" + " " * 40 + "b", "   leading", "trailing   ", " \t \n ", "", " ", "x",
       "\U0001D54F\U0001D560 math", "\ue000\U000f0000 private", "𓀀 hieroglyph", "zero\u200bwidth\ufeffbom",
       "ǅemal ǈ", "ᄀ\u1161\u11a8 jamo", "ｶﾞｷﾞ halfwidth", "ＡＢＣ fullwidth", "ﬁ ﬂ ligatures", "½ ① ㎏ Ⅻ",
       "\x00\x01\x7f controls", "line\u2028sep\u2029para", "1234567890 3.14159 1,000,000",
       "\u2581literal\u2581lower block", "don't can't I'm we've", "UPPER lower MiXeD", "İstanbul ΣΑΣ Straße",
       "hello   world\t\tfoo\r\nbar", "\u3000ideographic\u3000space", "a\u00adb soft hyphen"]
MULTILINGUAL_FALLBACK = ["Привет, как дела?", "中文字符测试。", "日本語のテキストです。", "한국어 문장입니다.",
                         "مرحبا بالعالم", "नमस्ते दुनिया", "Γειά σου Κόσμε", "שלום עולם", "สวัสดีชาวโลก",
                         "Xin chào thế giới", "Ἐν ἀρχῇ ἦν ὁ λόγος", "Tiếng Việt có dấu", "ქართული ენა"]


def multilingual_lines(per_file: int = 3) -> list[str]:
    """The first lines of each multilingual corpus file, or a fixed multilingual set without it."""
    if not HAVE_CORPUS:
        rng = random.Random(2)
        return MULTILINGUAL_FALLBACK + [" ".join(rng.choice(WORDS + MULTILINGUAL_FALLBACK)
                                                 for _ in range(rng.randint(1, 12))) for _ in range(200)]
    lines = []
    for path in sorted((SHARED / "multilingual").rglob("*")):
        if path.is_file() and path.name != "README.md":
            lines += [line for line in path.read_text(encoding="utf-8", errors="replace").split("\n")
                      if line.strip()][:per_file]
    return lines


def edge_texts() -> list[str]:
    """Emoji ZWJ sequences and odd Unicode: combining marks, NBSP, CR LF, tabs, long space runs,
    characters outside any small vocabulary."""
    return EMOJI + ODD


def texts(per_file: int = 3) -> list[str]:
    """Everything equality tests run on: the edge texts and the multilingual lines."""
    return edge_texts() + multilingual_lines(per_file)


def tokenizer_json(folder: Path) -> dict:
    return json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
