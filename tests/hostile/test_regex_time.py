"""A custom pre-tokenizer pattern that backtracks exponentially stops at its time limit with one
clear error naming the pattern, in encoding, in training and in the CLI."""
import json

import pytest

import tokkit
from tokkit._native import regex_limit
from tokkit.errors import TokkitError

from .conftest import one_error_line

SLOW = r"(a|aa)+$"
BAD_TEXT = "a" * 40 + "b"  # about 2**28 steps for `regex`: minutes without a limit


@pytest.fixture
def short_limit(monkeypatch):
    """A 20 ms base limit, so each test stops within a fraction of a second."""
    monkeypatch.setattr(regex_limit, "BASE_SECONDS", 0.02)


@pytest.fixture
def slow_folder(tmp_path):
    """A byte-level tokenizer.json whose Split pattern is SLOW (tokkit writes it as tokenizers does)."""
    tok = tokkit.train(texts=["aab ab b"] * 20, algo="bytelevel", vocab_size=260, pattern=r"\w+|\s+")
    tok.save(tmp_path)
    data = json.loads((tmp_path / "tokenizer.json").read_text())
    data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = SLOW
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    return tmp_path


def test_an_ordinary_text_still_encodes(slow_folder, short_limit):
    tok = tokkit.load(slow_folder)
    assert tok.decode(tok.encode("aab b")) == "aab b"


def test_encoding_raises_instead_of_hanging(slow_folder, short_limit):
    tok = tokkit.load(slow_folder)
    for run in (lambda: tok.encode(BAD_TEXT), lambda: tok.encode_batch(["aab", BAD_TEXT], num_threads=2),
                lambda: tok.encode_with_offsets("[CLS]" + BAD_TEXT)):
        with pytest.raises(TokkitError, match=r"pattern '\(a\|aa\)\+\$' is too slow on this input"):
            run()


def test_training_with_the_pattern_raises(tmp_path, short_limit):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("aab ab\n" + BAD_TEXT + "\n")
    with pytest.raises(TokkitError, match="too slow on this input") as err:
        tokkit.train(str(corpus), algo="bytelevel", vocab_size=300, pattern=SLOW, workers=1)
    assert str(corpus) in str(err.value)
    with pytest.raises(TokkitError, match="too slow on this input"):
        tokkit.train(texts=[BAD_TEXT], algo="bytelevel", vocab_size=300, pattern=SLOW, workers=1)


def test_cli_prints_one_error_line(tmp_path, slow_folder, short_limit, cli):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(BAD_TEXT + "\n")
    code, out, err = cli("encode", "-t", str(slow_folder), str(corpus))
    assert code == 2 and out == ""
    assert "(a|aa)+$" in one_error_line(err)
    code, _, err = cli("train", "--algo", "bytelevel", "--pattern", SLOW, "--vocab-size", "300", str(corpus),
                       "-o", str(tmp_path / "out"))
    assert code == 2 and "too slow on this input" in one_error_line(err)
    assert not (tmp_path / "out").exists()


def test_the_limit_grows_with_the_text():
    assert regex_limit.time_limit(0) == regex_limit.BASE_SECONDS
    assert regex_limit.time_limit(1_000_000) == pytest.approx(regex_limit.BASE_SECONDS + 10.0)
