"""Oracle tokenizers trained by `tokenizers` itself, shared by the encoder tests.

When ../shared/corpus is absent they are trained on text built here, so every test still runs.
"""
import random
from pathlib import Path

from helpers.paths import HAVE_CORPUS, SHARED

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

EDGE_CASES = [
    "", " ", "   \t\n ", "a", "a" * 150, "x" * 99 + "y", "hello [SEP] world[CLS]x[SEP]", "[SEP][SEP]",
    "[sep] [Sep] [MASK]", "\u0000\ufffd a\u200db\u200c", "e\u0301cole Ünïcödé ÀÉÎÕÜ ǅ ß ﬁ İstanbul ΣΑΣ",
    "😀👍🏽👨‍👩‍👧 🏳️‍🌈", "中文字符テスト한국어", "مرحبا بالعالم", "नमस्ते दुनिया", "\t\r\n\x0b\x0c\x1c\x85\u2028",
    "don't can't I'm we've they're it's", "1234567 3.14159 1,000,000", "a\u0300\u0301\u0302b",
    "\U0001F600" * 30, "Hello, world! How are you?", "  leading and trailing  ", "\u00a0nbsp\u3000ideo",
    "tab\tseparated\tvalues", "ﬀ ﬃ ㎏ ½ ①", "\U000e0001\U000e0041 tags", "\ue000 private use \U000f0000",
    "a" * 1000, "^" * 300, "The\u0085next\u2029para",
]

WORDS = ("the of and to in a is was for on that with as by at from his her an were which are this be "
         "had it not or have one their they new first also two been its after who has but more time "
         "school city during other world year state national university people used united war music "
         "don't it's 1999 2024 3.14 naïve café résumé über Straße").split()
EXTRA = ["中文", "日本語のテキスト", "한국어 문장", "مرحبا", "नमस्ते", "Привет мир", "😀👍🏽", "ÀÉÎ", "\u200b", "½"]


def training_lines() -> list[str]:
    """About 1.5 MB of text: the wiki slice and every multilingual file, or generated text."""
    if HAVE_CORPUS:
        lines = []
        wiki = sorted((SHARED / "en" / "wiki").glob("*.txt"))[0]
        lines += wiki.read_text(encoding="utf-8")[:500_000].split("\n")
        for path in sorted((SHARED / "multilingual").rglob("*")):
            if path.is_file() and path.name != "README.md":
                lines += path.read_text(encoding="utf-8", errors="replace")[:2500].split("\n")
        return lines
    rng = random.Random(0)
    return [" ".join(rng.choice(WORDS + EXTRA * (rng.random() < 0.1)) for _ in range(rng.randint(3, 30)))
            for _ in range(20000)]


def sample_lines(limit_per_file: int | None = 30) -> list[str]:
    """Lines to compare on: the multilingual corpus (first `limit_per_file` lines of each file, all
    with None) plus the edge cases; generated text when the corpus is absent."""
    lines = list(EDGE_CASES)
    if HAVE_CORPUS:
        for path in sorted((SHARED / "multilingual").rglob("*")):
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace").split("\n")
                lines += text if limit_per_file is None else text[:limit_per_file]
        wiki = sorted((SHARED / "en" / "wiki").glob("*.txt"))[1]
        lines += wiki.read_text(encoding="utf-8")[:200_000].split("\n")
    else:
        rng = random.Random(1)
        lines += [" ".join(rng.choice(WORDS + EXTRA) for _ in range(rng.randint(0, 40))) for _ in range(2000)]
    return lines




def _template(tok):
    from tokenizers import processors

    ids = [(t, tok.token_to_id(t)) for t in ("[CLS]", "[SEP]")]
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=ids)


def train_oracles(out: Path, vocab_size: int = 4000) -> dict[str, Path]:
    """Train WordPiece, char BPE and byte-level BPE with `tokenizers` and save each tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    lines = training_lines()
    wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    wp.decoder = decoders.WordPiece()
    wp.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS))
    cb = Tokenizer(models.BPE(unk_token="[UNK]", end_of_word_suffix="</w>"))
    cb.normalizer = normalizers.BertNormalizer(lowercase=False)
    cb.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cb.decoder = decoders.BPEDecoder(suffix="</w>")
    cb.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS,
                                                      end_of_word_suffix="</w>"))
    bl = Tokenizer(models.BPE())
    bl.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bl.decoder = decoders.ByteLevel()
    bl.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS,
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    paths = {}
    for kind, tok in (("wordpiece", wp), ("bpe", cb), ("bytelevel", bl)):
        _template(tok)
        paths[kind] = out / kind
        paths[kind].mkdir(parents=True, exist_ok=True)
        tok.save(str(paths[kind] / "tokenizer.json"))
        tok.model.save(str(paths[kind]))  # vocab.txt, or vocab.json + merges.txt
    return paths
