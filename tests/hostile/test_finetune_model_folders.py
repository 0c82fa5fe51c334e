"""Hostile model folders for `-m` (evaluate, predict, finetune) and model options torch cannot take:
each is one error line naming the file and the field (exit 2, nothing written), or one TokkitError."""
import json
import shutil

import pytest

import tokkit

from .conftest import one_error_line
from .finetune_kit import TINY, classify_rows, ft_work, listing, scratch, write_jsonl  # noqa: F401 - a fixture

torch = pytest.importorskip("torch")
from tokkit.bert import load_finetuned  # noqa: E402


@pytest.fixture(scope="session")
def tuned(tmp_path_factory, wp_dir):
    """A tiny fine-tuned classifier folder (BERT, so token types and positions are learned)."""
    from tokkit.bert import FinetuneConfig, finetune

    d = tmp_path_factory.mktemp("tuned")
    write_jsonl(d / "train.jsonl", classify_rows(8))
    finetune(None, d / "train.jsonl", d / "out", config=FinetuneConfig(task="classify", epochs=1, threads=1, max_length=32),
             tokenizer=wp_dir, from_scratch=True, arch="bert", progress=False,
             model_settings={"num_layers": 1, "hidden_size": 16, "num_heads": 2, "intermediate_size": 16,
                             "max_position_embeddings": 64})
    return d / "out"


def edited(ft_work, tuned, edit):
    """A copy of the tuned folder at ft_work/m with config.json edited by `edit(dict)`."""
    shutil.copytree(tuned, ft_work / "m", ignore=shutil.ignore_patterns("checkpoint", "*.png", "metrics.jsonl"))
    path = ft_work / "m" / "config.json"
    config = json.loads(path.read_text())
    edit(config)
    path.write_text(json.dumps(config))
    return ft_work / "m"


def every_command_refuses(cli, ft_work, *words):
    """evaluate, predict and finetune -m m each print one error line holding `words`; nothing is written."""
    (ft_work / "in.txt").write_text("the cat sat\n", encoding="utf-8")
    before = listing(ft_work)
    for args in (["evaluate", "-m", "m", "dev.jsonl"], ["predict", "-m", "m", "in.txt"],
                 ["finetune", "-m", "m", "train.jsonl", "--task", "classify", "-o", "out", "--epochs", "1", "-q",
                  "--threads", "1", "--max-length", "32"]):
        code, out, err = cli(*args)
        line = one_error_line(err)
        assert code == 2 and out == "", (args, err)
        assert all(w in line for w in words), (args, line)
    assert listing(ft_work) == before
    with pytest.raises(tokkit.TokkitError):
        load_finetuned(ft_work / "m")


@pytest.mark.parametrize("edit, field", [
    (lambda c: c.__setitem__("tokkit", [1]), "tokkit"),
    (lambda c: c.__setitem__("num_attention_heads", 0), "num_attention_heads"),
    (lambda c: c.__setitem__("hidden_size", "32"), "hidden_size"),
    (lambda c: c.__setitem__("max_position_embeddings", 10**12), "max_position_embeddings"),
    (lambda c: c.__setitem__("intermediate_size", 10**12), "intermediate_size"),
    (lambda c: c.__setitem__("num_hidden_layers", True), "num_hidden_layers"),
    (lambda c: c.__setitem__("hidden_act", [1]), "hidden_act"),
    (lambda c: c.__setitem__("id2label", [1]), "id2label"),
    (lambda c: c.__setitem__("architectures", [5]), "architectures"),
    (lambda c: c.__setitem__("layer_norm_eps", -1), "layer_norm_eps"),
    (lambda c: c.__setitem__("hidden_dropout_prob", "0.1"), "hidden_dropout_prob"),
    (lambda c: c.__setitem__("type_vocab_size", 0), "type_vocab_size"),
    (lambda c: c.__setitem__("pad_token_id", 100000), "pad_token_id"),
    (lambda c: c.__setitem__("classifier_pooling", "max"), "pooling"),
    (lambda c: c["tokkit"].__setitem__("max_length", 10**6), "max_length"),
    (lambda c: c["tokkit"].__setitem__("stride", "x"), "stride"),
    (lambda c: c.update(model_type="modernbert", layer_types=5), "layer_types"),
    (lambda c: c.update(model_type="modernbert", rope_parameters={"full_attention": 7}), "rope_parameters"),
])
def test_a_hostile_config_json_is_one_error_line_naming_the_field(ft_work, tuned, cli, edit, field):
    edited(ft_work, tuned, edit)
    every_command_refuses(cli, ft_work, "config.json", field)


@pytest.mark.parametrize("text, words", [
    ("{", ["config.json", "invalid JSON"]),
    ("[1, 2]", ["config.json", "not a JSON object"]),
    (b"\xff{}", ["config.json", "invalid UTF-8"]),
    ('{"hidden_size": %s}' % ("9" * 5000), ["config.json", "digits"]),
])
def test_a_config_json_that_is_no_object_is_one_error_line(ft_work, tuned, cli, text, words):
    folder = edited(ft_work, tuned, lambda c: None)
    path = folder / "config.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    every_command_refuses(cli, ft_work, *words)


@pytest.mark.parametrize("index, words", [
    ("{", ["index.json", "invalid JSON"]),
    ('{"metadata": {}}', ["index.json", "weight_map"]),
    ('{"weight_map": {"a": 5}}', ["index.json", "shard 5"]),
    ('{"weight_map": {"a": "../model.safetensors"}}', ["index.json", "../model.safetensors"]),
    ('{"weight_map": {"a": "gone.safetensors"}}', ["index.json", "missing"]),
])
def test_a_broken_safetensors_index_is_one_error_line(ft_work, tuned, cli, index, words):
    folder = edited(ft_work, tuned, lambda c: None)
    (folder / "model.safetensors").rename(ft_work / "model.safetensors")
    (folder / "model.safetensors.index.json").write_text(index)
    every_command_refuses(cli, ft_work, *words)


def test_a_tokenizer_larger_than_the_embeddings_is_refused(ft_work, tuned, cli):
    folder = edited(ft_work, tuned, lambda c: None)
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8")
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").write_text(vocab + "".join(f"extra{i}\n" for i in range(5)), encoding="utf-8")
    every_command_refuses(cli, ft_work, "config.json", "vocab_size", "tokenizer")


def test_nan_weights_are_refused_not_predicted_as_nan(ft_work, tuned, cli):
    from safetensors.torch import load_file, save_file

    folder = edited(ft_work, tuned, lambda c: None)
    weights = load_file(str(folder / "model.safetensors"))
    name = "bert.embeddings.word_embeddings.weight"
    weights[name][5, 0] = float("nan")
    save_file(weights, str(folder / "model.safetensors"))
    every_command_refuses(cli, ft_work, "m", "word_embeddings", "NaN")


def test_an_untouched_copy_still_predicts(ft_work, tuned, cli):
    edited(ft_work, tuned, lambda c: None)
    (ft_work / "in.txt").write_text("the cat sat\n", encoding="utf-8")
    code, out, err = cli("predict", "-m", "m", "in.txt")
    assert code == 0, err
    assert json.loads(out)["label"] in ("pos", "neg")


@pytest.mark.parametrize("option, value", [
    ("--ffn", "1000000000000"), ("--hidden", str(10**12)), ("--heads", "0"), ("--layers", str(10**6)),
    ("--seed", str(2**64)), ("--seed", "-1"), ("--threads", str(2**63)), ("--threads", "0"),
])
def test_options_torch_cannot_take_are_usage_errors(ft_work, cli, option, value):
    args = scratch()
    if option in args:
        i = args.index(option)
        del args[i:i + 2]
    before = listing(ft_work)
    code, out, err = cli(*args, option, value)
    assert code == 2 and option in one_error_line(err)
    code, out, err = cli("pretrain", "-t", "tok", "-o", "run", "train.jsonl", "--steps", "1", "-q", option, value)
    assert code == 2 and option in one_error_line(err)
    assert listing(ft_work) == before


@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_threads_torch_cannot_take_are_usage_errors_when_scoring_too(ft_work, cli, command):
    for value in (str(2**63), "0"):
        code, out, err = cli(command, "-m", "nowhere", "dev.jsonl", "--threads", value)
        assert code == 2 and "--threads" in one_error_line(err)


@pytest.mark.parametrize("extra, words", [
    (["--steps", str(10**23)], "steps"), (["--steps", str(10**9)], "--max-time"), (["--batch-size", str(10**20)], "batch_size"),
])
def test_pretraining_counts_past_what_its_loop_takes_are_refused(ft_work, cli, extra, words):
    before = listing(ft_work)
    code, _, err = cli("pretrain", "-t", "tok", "-o", "run", "train.jsonl", "-q", *extra)
    assert code == 2 and words in one_error_line(err)
    assert listing(ft_work) == before


def test_a_shape_in_range_but_too_large_to_build_is_refused(ft_work, cli):
    before = listing(ft_work)
    code, _, err = cli(*scratch(), "--hidden", "4000000", "--ffn", "4000000")
    assert code == 2 and "parameters" in one_error_line(err)
    assert listing(ft_work) == before
    from tokkit.bert import FinetuneConfig

    for bad in ({"seed": 2**64}, {"threads": 2**63}):
        with pytest.raises(tokkit.TokkitError, match=next(iter(bad))):
            FinetuneConfig(task="classify", **bad)
