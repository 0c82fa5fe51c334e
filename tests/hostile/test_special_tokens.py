"""Special tokens that no vocabulary file can hold, or that are not text, are refused before training."""
import os
import subprocess
import sys

import pytest

import tokkit
from tokkit.errors import TokkitError

from .conftest import one_error_line

BAD = [
    ("a\nb", "line break"),
    ("[X]\r", "line break"),
    ("x\u2028y", "line break"),
    ("x\x85y", "line break"),
    (" [X]", "whitespace"),
    ("[X] ", "whitespace"),
    ("[X]\t", "whitespace"),
    ("a\x00b", "control character"),
    ("\udcff", "not valid text"),
    ("[\ud800]", "not valid text"),
]


@pytest.mark.parametrize("token, why", BAD)
@pytest.mark.parametrize("algo", ["wordpiece", "bpe", "bytelevel"])
def test_api_refuses_before_reading_the_corpus(tmp_path, token, why, algo):
    # The corpus does not exist: an error about the token shows it was checked first.
    with pytest.raises(TokkitError, match=why) as info:
        tokkit.train(str(tmp_path / "missing.txt"), algo=algo, vocab_size=300, special_tokens=[token])
    assert "special token" in str(info.value)


def test_api_refuses_a_single_string_and_non_strings():
    with pytest.raises(TokkitError, match="list of str"):
        tokkit.train(texts=["a b"], special_tokens="[X]")
    with pytest.raises(TokkitError, match="not str"):
        tokkit.train(texts=["a b"], special_tokens=[b"[X]"])


def test_tokens_a_vocab_txt_can_hold_still_train_and_round_trip(tmp_path):
    tok = tokkit.train(texts=["the cat sat"] * 10, vocab_size=60, special_tokens=["<|end of text|>", "[É]"])
    tok.save(tmp_path)
    back = tokkit.load(tmp_path / "vocab.txt", special_tokens=["<|end of text|>", "[É]"])
    assert back.special_tokens == tok.special_tokens
    assert back.encode("cat <|end of text|>") == tok.encode("cat <|end of text|>")


@pytest.mark.parametrize("token, why", BAD[:8])
def test_cli_one_line_exit_2_and_nothing_written(tmp_path, cli, token, why, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 20)
    code, out, err = cli("train", "c.txt", "--vocab-size", "100", "--special-token", token, "-o", "out")
    assert code == 2 and why in one_error_line(err)
    assert sorted(os.listdir(tmp_path)) == ["c.txt"]


def test_cli_undecodable_byte_from_the_command_line(tmp_path):
    # b"\xff" reaches Python as the lone surrogate U+DCFF (surrogateescape).
    (tmp_path / "c.txt").write_text("the cat sat on the mat\n" * 20)
    proc = subprocess.run([sys.executable, "-m", "tokkit.cli", "train", "c.txt", "--special-token", b"\xff",
                           "-o", "out"], cwd=tmp_path, capture_output=True)
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc.stderr.decode("utf-8", "backslashreplace"))
    assert "not valid text" in line and "0xFF" in line
    assert sorted(os.listdir(tmp_path)) == ["c.txt"]
