"""Loading and saving: folder precedence, options, kind detection, clear errors, byte-identical output."""
import json

import pytest
from helpers.oracles import sample_lines

import tokkit
from tokkit._native.byte_symbols import bytes_to_unicode
from tokkit.errors import TokkitError
from tokkit.tokenizer import Tokenizer

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WP_VOCAB = SPECIALS + ["a", "b", "##b", "ab", "hello", "##lo", "hel", ",", ".", "é", "e", "##s"]


def wordpiece(**kw):
    return Tokenizer.from_trained(kind="wordpiece", vocab=WP_VOCAB, merges=None, special_tokens=SPECIALS, **kw)


def bytelevel(specials=("[PAD]", "[CLS]", "[SEP]")):
    vocab = list(specials) + sorted(bytes_to_unicode()) + ["Ġh", "Ġhe", "ll", "llo"]
    merges = [("Ġ", "h"), ("Ġh", "e"), ("l", "l"), ("ll", "o")]
    return Tokenizer.from_trained(kind="bytelevel", vocab=vocab, merges=merges, special_tokens=list(specials))


def charbpe():
    vocab = SPECIALS + ["a", "b", "c", "a</w>", "b</w>", "c</w>", "ab", "ab</w>", "abc</w>"]
    merges = [("a", "b"), ("ab", "c</w>"), ("a", "b</w>")]
    return Tokenizer.from_trained(kind="bpe", vocab=vocab, merges=merges, special_tokens=SPECIALS)


@pytest.mark.parametrize("make", [wordpiece, bytelevel, charbpe])
def test_save_is_deterministic_and_roundtrips(make, tmp_path):
    tok = make()
    tok.save(tmp_path / "one")
    tok.save(tmp_path / "two")
    names = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert not [n for n in names if "tmp" in n]
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert tokkit.load(tmp_path / "one") == tok
    expected = {"wordpiece": "vocab.txt"}.get(tok.kind, "merges.txt")
    assert expected in names and "tokenizer_config.json" in names and "special_tokens_map.json" in names
    if tok.kind != "wordpiece":
        assert (tmp_path / "one" / "merges.txt").read_text().startswith("#version: 0.2\n")
        vocab = json.loads((tmp_path / "one" / "vocab.json").read_text())
        assert list(vocab.values()) == list(range(len(vocab)))


@pytest.mark.parametrize("make", [wordpiece, bytelevel, charbpe])
def test_saved_tokenizer_loads_in_tokenizers_and_transformers(make, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    tok = make()
    tok.save(tmp_path)
    text = "Hello, ab [SEP] abb hello élan abc"
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert ref.encode(text, add_special_tokens=False).ids == tok.encode(text)
    auto = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    expected = tokkit.encode(tok, [text], ["abc hello"], padding=None)
    got = auto(text, "abc hello")
    assert got["input_ids"] == expected["input_ids"][0].tolist()
    assert auto.pad_token == "[PAD]"


def test_bytelevel_without_template_has_null_post_processor(tmp_path):
    tok = bytelevel(specials=("[PAD]",))
    tok.save(tmp_path)
    assert json.loads((tmp_path / "tokenizer.json").read_text())["post_processor"] is None
    with pytest.raises(TokkitError, match="template"):
        tokkit.encode(tok, ["a"])


def test_folder_precedence(tmp_path, oracle_paths):
    wp = oracle_paths["wordpiece"]
    # tokenizer.json wins over vocab.txt: make them disagree on lowercasing
    data = json.loads((wp / "tokenizer.json").read_text())
    data["normalizer"]["lowercase"] = False
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    (tmp_path / "vocab.txt").write_text((wp / "vocab.txt").read_text())
    assert tokkit.load(tmp_path).spec.pipeline.normalizer.lowercase is False
    (tmp_path / "tokenizer.json").unlink()
    assert tokkit.load(tmp_path).spec.pipeline.normalizer.lowercase is True  # bert-base-uncased default
    assert tokkit.load(tmp_path, lowercase=False).spec.pipeline.normalizer.lowercase is False
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False, "model_max_length": 128}))
    tok = tokkit.load(tmp_path)
    assert tok.spec.pipeline.normalizer.lowercase is False and tok.model_max_length == 128
    assert tokkit.load(tmp_path, lowercase=True).spec.pipeline.normalizer.lowercase is True


def test_kind_detection(tmp_path, oracle_paths):
    assert tokkit.load(oracle_paths["bpe"] / "vocab.json").kind == "bpe"
    assert tokkit.load(oracle_paths["bytelevel"] / "merges.txt").kind == "bytelevel"
    (tmp_path / "vocab.json").write_text(json.dumps({"[UNK]": 0, "a": 1, "b": 2, "ab": 3}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n")
    with pytest.raises(TokkitError, match="kind="):
        tokkit.load(tmp_path)
    assert tokkit.load(tmp_path, kind="bpe").kind == "bpe"


def test_merges_both_forms_in_tokenizer_json(tmp_path, oracle_paths):
    data = json.loads((oracle_paths["bytelevel"] / "tokenizer.json").read_text())
    data["model"]["merges"] = [" ".join(pair) for pair in data["model"]["merges"]]
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    texts = sample_lines(3)
    assert tokkit.load(tmp_path).encode_batch(texts) == tokkit.load(oracle_paths["bytelevel"]).encode_batch(texts)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("content, message", [
    ("[PAD]\n[UNK]\na\nb\na\n", r"vocab.txt: line 5: duplicate token 'a' \(first on line 3\)"),
    ("[PAD]\n\n[UNK]\n", "vocab.txt: line 2: empty token"),
    ("[PAD]\na\nb\n", "without '\\[UNK\\]'"),
])
def test_vocab_txt_errors_name_file_and_line(tmp_path, content, message):
    with pytest.raises(TokkitError, match=message):
        tokkit.load(_write(tmp_path / "vocab.txt", content))


def test_vocab_json_and_merges_errors(tmp_path):
    vocab = _write(tmp_path / "vocab.json", '{"[UNK]": 0, "a</w>": 1,\n "b": 2, "ab": 3\n')
    _write(tmp_path / "merges.txt", "#version: 0.2\na b\n")
    with pytest.raises(TokkitError, match="vocab.json: line 3: invalid JSON"):
        tokkit.load(tmp_path)
    _write(vocab, '{"[UNK]": 0, "a</w>": 1, "b": 2, "a": 2}')
    with pytest.raises(TokkitError, match="id 2 is given to both"):
        tokkit.load(tmp_path)
    _write(vocab, '{"[UNK]": 0, "a</w>": 1, "b": 2, "a": 3, "ab": 4}')
    _write(tmp_path / "merges.txt", "#version: 0.2\na b\nb c\n")
    with pytest.raises(TokkitError, match="merges.txt: line 3: merge 'b c' names unknown token 'c'"):
        tokkit.load(tmp_path)
    _write(tmp_path / "merges.txt", "#version: 0.2\na b\na b\n")
    with pytest.raises(TokkitError, match="line 3: duplicate merge"):
        tokkit.load(tmp_path)
    _write(tmp_path / "merges.txt", "#version: 0.2\na b c\n")
    with pytest.raises(TokkitError, match="line 2: expected 'left right'"):
        tokkit.load(tmp_path)
    assert tokkit.load(_write(tmp_path / "merges.txt", "#version: 0.2\na b\n").parent).kind == "bpe"


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["model"].__setitem__("dropout", 0.1), "model.BPE: dropout 0.1 is not supported"),
    (lambda d: d["model"].__setitem__("byte_fallback", True), "model.BPE: byte_fallback together with"),
    (lambda d: d.__setitem__("normalizer", {"type": "ByteLevel"}), "normalizer type 'ByteLevel'"),
    (lambda d: d.__setitem__("post_processor", {"type": "RobertaProcessing"}), "RobertaProcessing"),
    (lambda d: d["model"]["merges"].append(["zzz", "q"]), "unknown token 'zzz'"),
    (lambda d: d.__setitem__("truncation", {"max_length": "5"}), "'truncation.max_length' must be an integer"),
])
def test_unsupported_tokenizer_json_fields_are_named(tmp_path, oracle_paths, edit, message):
    data = json.loads((oracle_paths["bpe"] / "tokenizer.json").read_text())
    edit(data)
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(TokkitError, match=message):
        tokkit.load(tmp_path)


def test_truncated_tokenizer_json(tmp_path, oracle_paths):
    text = (oracle_paths["wordpiece"] / "tokenizer.json").read_text()
    (tmp_path / "tokenizer.json").write_text(text[: len(text) // 2])
    with pytest.raises(TokkitError, match=r"tokenizer.json: line \d+: invalid JSON"):
        tokkit.load(tmp_path)


def test_missing_paths(tmp_path):
    with pytest.raises(TokkitError, match="no such file"):
        tokkit.load(tmp_path / "nope")
    with pytest.raises(TokkitError, match="no tokenizer.json, vocab.txt"):
        tokkit.load(tmp_path)
