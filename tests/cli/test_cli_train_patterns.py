"""`tokkit train --algo bytelevel --pattern NAME`: today's named patterns, written as the Hub spells
them, read back by tokenizers with the same ids."""
import json
import subprocess
import sys

import pytest
from tokenizers import Tokenizer

import tokkit
from tokkit._native.patterns import NAMED

LINES = ["Hello World/path\n", "  spaced   out  text 12345 and 3.14159\n", "naïve café résumé über\n",
         "don't can't I'M WE'LL\n", "中文字符 한국어 😀👍🏽\n"] * 40


@pytest.mark.parametrize("name", ["llama3", "qwen2", "o200k"])
def test_named_patterns_train_files_tokenizers_reads_alike(tmp_path, name):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(LINES), encoding="utf-8")
    out = tmp_path / "tok"
    result = subprocess.run([sys.executable, "-m", "tokkit.cli", "train", "--algo", "bytelevel", "--pattern", name,
                             "--vocab-size", "400", "-q", "-o", str(out), str(corpus)], capture_output=True)
    assert result.returncode == 0, result.stderr.decode()
    data = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    assert data["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] == NAMED[name]
    hf, tok = Tokenizer.from_file(str(out / "tokenizer.json")), tokkit.load(out)
    for line in LINES[:5] + ["x" * 50, "a\r\n\r\n b//c", "ÀBC déF GhI"]:
        assert tok.encode(line) == hf.encode(line, add_special_tokens=False).ids
