"""Hub-like folders of every kind (SentencePiece models converted by transformers, byte-level,
WordLevel and WordPiece files written by tokenizers) load in tokkit and encode, decode and fill their
templates as tokenizers does; a folder's files are read by precedence, and a JSON file's kind comes
from its structure."""
import json

import pytest
import test_hf_variants as hf_variants
import test_sentencepiece_model as spm_tests
from helpers.hub_files import KINDS, SPM_KINDS, hub_folder, model_file, texts

import tokkit
from tokkit.errors import TokkitError
from tokkit.tokenizer.load import json_kind, tokenizer_file

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, pre_tokenizers, trainers

TEXTS = texts(per_file=2) + hf_variants.TEXTS


@pytest.fixture(params=KINDS, scope="module")
def hub(request, tmp_path_factory):
    """(kind, folder, tokenizers' Tokenizer read from the folder's tokenizer.json)."""
    folder = hub_folder(request.param, tmp_path_factory)
    return request.param, folder, tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


@pytest.fixture
def on_hub_texts(monkeypatch):
    """test_hf_variants' comparison (ids, offsets, decoding, type ids and templates through
    tokkit.encode, single texts and pairs), run on the Hub text sets instead of its own."""
    monkeypatch.setattr(hf_variants, "texts_for", lambda hf: TEXTS)


def test_kind_loads_from_folder_and_file_as_tokenizers(hub, on_hub_texts):
    _, folder, hf = hub
    for source in (folder, folder / "tokenizer.json"):
        hf_variants.assert_same_as_tokenizers(tokkit.load(source), hf)


def test_kind_survives_a_save(hub, on_hub_texts, tmp_path):
    """What tokkit writes loads in tokenizers with the same ids, and back in tokkit."""
    _, folder, hf = hub
    tokkit.load(folder).save(tmp_path)
    saved = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in TEXTS:
        assert saved.encode(text).ids == hf.encode(text).ids, text
    hf_variants.assert_same_as_tokenizers(tokkit.load(tmp_path), saved)


@pytest.mark.parametrize("kind", SPM_KINDS)
def test_sentencepiece_kinds_model_file_gives_sentencepiece_ids(kind, tmp_path_factory):
    """The .model beside a converted tokenizer.json, loaded on its own, encodes as sentencepiece."""
    spm_tests.assert_loads_as_sentencepiece(model_file(kind, hub_folder(kind, tmp_path_factory)), TEXTS)


def _templates(kind, tmp_path_factory):
    folder = hub_folder(kind, tmp_path_factory)
    return tokkit.load(folder), tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))


def test_xlmr_pair_template(tmp_path_factory):
    """XLM-R: `<s> A </s>` and `<s> A </s></s> B </s>`, every type id 0."""
    tok, hf = _templates("xlmr", tmp_path_factory)
    a, b = "Hello world", "zweiter Satz"
    ids_a, ids_b = hf.encode(a, add_special_tokens=False).ids, hf.encode(b, add_special_tokens=False).ids
    assert hf.encode(a, b).ids == [0] + ids_a + [2, 2] + ids_b + [2]  # the fixture is XLM-R's
    got = tokkit.encode(tok, [a], [b], padding=None)
    assert got["input_ids"][0].tolist() == [0] + ids_a + [2, 2] + ids_b + [2]
    assert got["token_type_ids"][0].tolist() == [0] * (len(ids_a) + len(ids_b) + 4)
    assert tokkit.encode(tok, [a], padding=None)["input_ids"][0].tolist() == [0] + ids_a + [2]


def test_t5_template(tmp_path_factory):
    """T5: `A </s>` and `A </s> B </s>`, </s> being id 1."""
    tok, hf = _templates("t5", tmp_path_factory)
    a, b = "translate English to German: hello", "ja"
    ids_a, ids_b = hf.encode(a, add_special_tokens=False).ids, hf.encode(b, add_special_tokens=False).ids
    assert hf.encode(a).ids == ids_a + [1]
    assert tokkit.encode(tok, [a], padding=None)["input_ids"][0].tolist() == ids_a + [1]
    assert tokkit.encode(tok, [a], [b], padding=None)["input_ids"][0].tolist() == ids_a + [1] + ids_b + [1]


# ------------------------------------------------------------------------------ kind and precedence
def _gpt2_files(folder):
    """A byte-level vocab.json + merges.txt, written by tokenizers, whose vocabulary holds "model"."""
    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    lines = ["the model is a model of models", "model", "a language model, a vision model"] * 50
    hf.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf.model.save(str(folder))
    return hf


def test_a_vocab_json_holding_the_token_model_is_a_vocabulary(tmp_path):
    hf = _gpt2_files(tmp_path)
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    assert "model" in vocab and isinstance(vocab["model"], int)
    texts = ["model", "the model", "models of a model", "Hello, model world!", "  model  "]
    for source in (tmp_path, tmp_path / "vocab.json", tmp_path / "merges.txt"):
        tok = tokkit.load(source)
        for text in texts:
            assert tok.encode(text) == hf.encode(text).ids, (source, text)


@pytest.mark.parametrize("data, kind", [
    ({"model": {"type": "BPE", "vocab": {}}}, "tokenizer.json"),
    ({"model": {"vocab": {"a": 0}}}, "tokenizer.json"),
    ({"model": 3, "the": 0, "a": 1, "Ġmodel": 2}, "vocab.json"),
    ({"version": "1.0", "model": 5}, "tokenizer.json"),  # a broken one, for its reader to name the field
])
def test_json_kind_comes_from_structure(data, kind):
    assert json_kind(data) == kind


@pytest.mark.parametrize("data", [[], {}, "model", {"a": "b"}, {"a": 1, "b": True}])
def test_json_that_is_neither_kind_is_one_error(data, tmp_path):
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TokkitError, match="neither a tokenizer.json .* nor a vocab.json") as err:
        tokkit.load(path)
    assert str(path) in str(err.value)


def test_a_tokenizer_json_whose_model_is_not_an_object_names_the_field(tmp_path):
    (tmp_path / "tokenizer.json").write_text(json.dumps({"version": "1.0", "added_tokens": [], "model": 5}))
    with pytest.raises(TokkitError, match="'model'") as err:
        tokkit.load(tmp_path)
    assert str(err.value).startswith(str(tmp_path / "tokenizer.json"))


@pytest.mark.parametrize("present, chosen", [
    (["tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "spiece.model"], "tokenizer.json"),
    (["vocab.txt", "vocab.json", "merges.txt", "spiece.model"], "vocab.txt"),
    (["vocab.json", "merges.txt", "tokenizer.model"], "vocab.json"),
    (["vocab.json", "tokenizer.model"], "tokenizer.model"),  # a vocab.json alone is not a BPE
    (["tokenizer.model", "sentencepiece.bpe.model", "spiece.model"], "spiece.model"),
    (["tokenizer.model", "sentencepiece.bpe.model"], "sentencepiece.bpe.model"),
    (["tokenizer.model", "other.model"], "tokenizer.model"),
    (["only_one.model", "README.md"], "only_one.model"),
])
def test_folder_precedence(present, chosen, tmp_path):
    for name in present:
        (tmp_path / name).write_bytes(b"")
    assert tokenizer_file(tmp_path) == tmp_path / chosen


@pytest.mark.parametrize("present, message", [
    ([], "no tokenizer.json, vocab.txt, vocab.json \\+ merges.txt or SentencePiece .model in this folder"),
    (["vocab.json"], "a vocab.json needs a merges.txt beside it"),
    (["a.model", "b.model"], r"several SentencePiece models \(a.model, b.model\)"),
])
def test_folder_without_one_tokenizer_is_one_error(present, message, tmp_path):
    for name in present:
        (tmp_path / name).write_bytes(b"")
    with pytest.raises(TokkitError, match=message):
        tokkit.load(tmp_path)
