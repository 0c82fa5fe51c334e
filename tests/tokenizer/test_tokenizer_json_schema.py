"""Malformed tokenizer.json and side files: one TokkitError naming the file and the field, never a raw exception."""
import json

import numpy as np
import pytest

import tokkit
from tokkit.errors import TokkitError

tokenizers = pytest.importorskip("tokenizers")


def saved(tmp_path, oracle_paths, kind, edit):
    data = json.loads((oracle_paths[kind] / "tokenizer.json").read_text())
    edit(data)
    folder = tmp_path / kind
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(data))
    return folder


def set_path(*keys_value):
    *keys, value = keys_value

    def edit(d):
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return edit


CASES = [
    ("wordpiece", set_path("normalizer", "BertNormalizer"), "'normalizer' must be an object or null"),
    ("wordpiece", set_path("normalizer", ["BertNormalizer"]), "'normalizer' must be an object or null"),
    ("wordpiece", set_path("decoder", "WordPiece"), "'decoder' must be an object or null"),
    ("wordpiece", set_path("post_processor", []), "'post_processor' must be an object or null"),
    ("wordpiece", set_path("added_tokens", ["[PAD]"]), r"'added_tokens\[0\]' must be an object"),
    ("wordpiece", set_path("added_tokens", 0, "lstrip", 1), r"'added_tokens\[0\].lstrip' must be true or false"),
    ("wordpiece", set_path("added_tokens", 1, "special", None), r"'added_tokens\[1\].special' must be true or false"),
    ("wordpiece", set_path("post_processor", {"type": "BertProcessing"}), "post_processor.BertProcessing: field 'sep' is missing"),
    ("wordpiece", set_path("model", "max_input_chars_per_word", 10**30), "'max_input_chars_per_word' must be an integer from 0 to"),
    ("wordpiece", set_path("model", "max_input_chars_per_word", "100"), "model.WordPiece: field 'max_input_chars_per_word' must be an integer"),
    ("wordpiece", set_path("model", "continuing_subword_prefix", 7), "model.WordPiece: field 'continuing_subword_prefix' must be a string"),
    ("wordpiece", set_path("normalizer", "lowercase", "yes"), "normalizer.BertNormalizer: field 'lowercase' must be true or false"),
    ("bpe", set_path("model", []), "not a tokenizer.json \\(no 'model' object\\)"),
    ("bpe", set_path("model", "merges", "a b"), "model.BPE: field 'merges' must be a list"),
    ("wordpiece", set_path("padding", {"strategy": "Sometimes"}), "padding.strategy"),
]


@pytest.mark.parametrize("kind,edit,message", CASES)
def test_wrong_json_types_are_named(tmp_path, oracle_paths, kind, edit, message):
    folder = saved(tmp_path, oracle_paths, kind, edit)
    with pytest.raises(TokkitError, match=message):
        tokkit.load(folder)


def test_invalid_split_regex_is_named(tmp_path, oracle_paths):
    def edit(d):
        d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "(unclosed"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    folder = saved(tmp_path, oracle_paths, "bytelevel", edit)
    with pytest.raises(TokkitError, match="pre_tokenizer.Split: field 'pattern' is not a valid regular expression"):
        tokkit.load(folder)


def test_deep_nesting_is_one_error(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(TokkitError, match="nested too deeply"):
        tokkit.load(tmp_path)


def test_tokenizer_config_that_is_a_list(tmp_path, oracle_paths):
    (tmp_path / "vocab.txt").write_text((oracle_paths["wordpiece"] / "vocab.txt").read_text())
    (tmp_path / "tokenizer_config.json").write_text("[1, 2]")
    with pytest.raises(TokkitError, match="tokenizer_config.json: must hold a JSON object"):
        tokkit.load(tmp_path / "vocab.txt")


def test_cli_reports_a_bad_tokenizer_json_in_one_line(tmp_path, oracle_paths, capsys):
    from helpers.cli import run_cli

    folder = saved(tmp_path, oracle_paths, "wordpiece", set_path("decoder", "WordPiece"))
    assert run_cli(["encode", "-t", str(folder), str(oracle_paths["wordpiece"] / "vocab.txt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tokkit: error:") and "'decoder'" in err[0]


def test_hub_truncation_and_padding_are_loaded_used_and_saved(tmp_path, oracle_paths):
    """A Hub folder sets truncation and padding: they become tokkit.encode's defaults and survive save."""
    hf = tokenizers.Tokenizer.from_file(str(oracle_paths["wordpiece"] / "tokenizer.json"))
    hf.enable_truncation(max_length=12)
    hf.enable_padding(length=12, pad_id=hf.token_to_id("[PAD]"), pad_token="[PAD]")
    folder = tmp_path / "hub"
    folder.mkdir()
    hf.save(str(folder / "tokenizer.json"))
    tok = tokkit.load(folder)
    texts = ["the quick brown fox jumps over the lazy dog " * 3, "a b"]
    batch = tokkit.encode(tok, texts)
    assert batch["input_ids"].shape == (2, 12)
    expected = [e.ids for e in hf.encode_batch(texts)]
    assert batch["input_ids"].tolist() == expected
    assert tokkit.encode(tok, texts, max_length=20, padding="longest")["input_ids"].shape[1] <= 20
    tok.save(tmp_path / "again")
    data = json.loads((tmp_path / "again" / "tokenizer.json").read_text())
    assert data["truncation"]["max_length"] == 12 and data["padding"]["strategy"] == {"Fixed": 12}
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "again" / "tokenizer.json"))
    assert np.array_equal([e.ids for e in again.encode_batch(texts)], expected)
