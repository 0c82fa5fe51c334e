"""Byte-level training with the cl100k / qwen2 / o200k patterns: the compiled scanners count the words.

The file trained from the compiled counts is byte for byte the one the `regex` path gives, its merges
are those of tokenizers' own trainer with the same Split, and tokenizers (and gigatoken, when
installed) read it back with tokkit's ids.
"""
import json

import pytest
import regex
from helpers.paths import HAVE_CORPUS, SHARED

import tokkit
from tokkit._native.patterns import CL100K_PATTERN, NAMED, O200K_PATTERN, QWEN2_PATTERN
from tokkit.train.bytelevel import ByteLevel

tokenizers = pytest.importorskip("tokenizers")

SPECIALS = ["<|endoftext|>"]
# digits, contractions in both cases, case changes, CRLF, "/" after punctuation, runs of spaces
MADE_UP = ["HELLOworld, it's 1234567 don't DON'T they'LL\r\n", "McDonald's iPhone 3.14159 a/b !/\n",
           "  indented   text\twith\ttabs  \n", "\u4e2d\u6587 \u65e5\u672c\u8a9e caf\u00e9 na\u00efve \u00c9COLE\n",
           "\U0001F600\U0001F44D\U0001F3FD! x\u0301y \u0295 \U00011DE0\n"]


def corpus_lines(n_bytes: int) -> list[str]:
    """The start of the wiki corpus (or the embedded default corpus) plus made-up lines, each ending in \\n."""
    if HAVE_CORPUS:
        path = min((SHARED / "en" / "wiki").glob("*.txt"))
        with open(path, "rb") as f:
            data = f.read(n_bytes)
        text = data[: data.rfind(b"\n") + 1].decode("utf-8")
    else:
        from tokkit.text.default_corpus import default_texts

        text = "\n".join(default_texts())[:n_bytes] + "\n"
    return [line + "\n" for line in text.split("\n")[:-1]] + MADE_UP * 20  # (str.splitlines cuts at \r too)


@pytest.fixture(scope="module")
def lines():
    return corpus_lines(400_000)


def train_file(path, pattern, **options):
    return tokkit.train(path, algo="bytelevel", vocab_size=900, min_frequency=2, special_tokens=SPECIALS,
                        default_specials=False, pattern=pattern, **options)


@pytest.mark.parametrize("pattern", [CL100K_PATTERN, QWEN2_PATTERN, O200K_PATTERN])
def test_compiled_count_gives_the_regex_paths_file(lines, tmp_path, monkeypatch, pattern):
    # the `regex` package's Unicode is newer than tokenizers' engine's: on the few characters they
    # class differently the scanners follow tokenizers, so the regex path gets lines without them
    alike = [line for line in lines if regex.findall(pattern, line) == split_pieces(pattern, line)]
    assert len(alike) > 0.9 * len(lines)
    path = tmp_path / "corpus.txt"
    path.write_text("".join(alike), encoding="utf-8")
    assert ByteLevel(pattern=pattern).count_mode()[0] != "regex"
    train_file(path, pattern).save(tmp_path / "compiled")
    monkeypatch.setattr(ByteLevel, "count_mode", lambda self: ("regex", {"pattern": self.pattern}))
    train_file(path, pattern).save(tmp_path / "regex")
    for name in ("tokenizer.json", "vocab.json", "merges.txt"):
        assert (tmp_path / "compiled" / name).read_bytes() == (tmp_path / "regex" / name).read_bytes(), name


def split_pieces(pattern, line):
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    return [piece for piece, _ in split.pre_tokenize_str(line)]


def oracle_merges(path, pattern, vocab_size):
    """tokenizers' BpeTrainer with the pattern's Split and a ByteLevel that only maps bytes."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train([str(path)], trainer)
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in json.loads(tok.to_str())["model"]["merges"]]


def test_o200k_file_reads_back_with_the_same_ids(lines, tmp_path):
    held_out, train_lines = lines[-300:-100], lines[:-300] + lines[-100:]
    path = tmp_path / "corpus.txt"
    path.write_text("".join(train_lines), encoding="utf-8")
    tok = train_file(path, NAMED["o200k"])
    tok.save(tmp_path / "tok")
    merges = json.loads((tmp_path / "tok" / "tokenizer.json").read_text(encoding="utf-8"))["model"]["merges"]
    assert [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges] == \
        oracle_merges(path, O200K_PATTERN, 900)
    texts = held_out + MADE_UP + ["HELLOworld's 1234567!/\n/\n", "   \n\n  x", ""]
    ours = [tok.encode(t) for t in texts]
    assert sum(map(len, ours)) > 1000
    loaded = tokenizers.Tokenizer.from_file(str(tmp_path / "tok" / "tokenizer.json"))
    assert [e.ids for e in loaded.encode_batch(texts)] == ours
    try:
        import gigatoken
    except ImportError:
        return
    giga = gigatoken.Tokenizer(str(tmp_path / "tok" / "tokenizer.json"))
    assert [giga.encode(t).tolist() for t in texts] == ours
