"""A run ends in a model transformers loads: RUN/model/ and `tokkit export`, through AutoTokenizer,
AutoModelForMaskedLM, AutoModel and pipeline("fill-mask"), for both architectures."""
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers.bert import pretrain_folder, tiny_corpus, wordpiece_tokenizer  # noqa: E402
from helpers.cli import run_cli  # noqa: E402

import tokkit  # noqa: E402
from tokkit.bert import PretrainConfig, embed, pretrain  # noqa: E402
from tokkit.bert.export import export_run, load_trained  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

TINY = dict(num_layers=2, hidden_size=32, num_heads=2, intermediate_size=32, max_position_embeddings=64)
TEXTS = ["the cat sat on a mat while the dog ran", "people walk along the river every morning"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One short run of each architecture: {arch: run folder}, and the inputs folder."""
    d = pretrain_folder(tmp_path_factory.mktemp("export"))
    out = {}
    for arch in ("modernbert", "bert"):
        cfg = PretrainConfig(arch=arch, steps=6, batch_size=8, max_length=32, warmup_steps=2, checkpoint_every=0,
                             threads=1, model=TINY)
        pretrain(d / "tok", [d / "corpus.txt"], d / arch, config=cfg, progress=False)
        out[arch] = d / arch
    return d, out


@pytest.mark.parametrize("arch", ["modernbert", "bert"])
def test_the_run_folder_holds_a_model_transformers_loads(runs, arch):
    d, folders = runs
    model_dir = folders[arch] / "model"
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
            "special_tokens_map.json", "vocab.txt"} <= {p.name for p in model_dir.iterdir()}
    tok = tokkit.load(d / "tok")
    auto_tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    assert auto_tok(TEXTS[0])["input_ids"][1:-1] == tok.encode(TEXTS[0])
    ours, _ = load_trained(folders[arch] / "checkpoint")
    hf = transformers.AutoModelForMaskedLM.from_pretrained(model_dir).eval()
    batch = auto_tok(TEXTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        theirs = hf(**batch).logits
        mine = ours(batch["input_ids"], batch.get("token_type_ids"), batch["attention_mask"]).mlm_logits
    keep = batch["attention_mask"].bool()
    assert torch.allclose(theirs[keep], mine[keep], atol=1e-4)


@pytest.mark.parametrize("arch", ["modernbert", "bert"])
def test_fill_mask_pipeline_predicts_what_the_model_does(runs, arch):
    d, folders = runs
    model_dir = str(folders[arch] / "model")
    fill = transformers.pipeline("fill-mask", model=model_dir, tokenizer=model_dir, top_k=3)
    predictions = fill("the cat sat on the [MASK] .")
    assert len(predictions) == 3 and all("[MASK]" not in p["sequence"] for p in predictions)
    ours, _ = load_trained(folders[arch] / "checkpoint")
    tok = tokkit.load(d / "tok")
    ids = [tok.token_to_id("[CLS]")] + tok.encode("the cat sat on the [MASK] .") + [tok.token_to_id("[SEP]")]
    with torch.no_grad():
        logits = ours(torch.tensor([ids])).mlm_logits[0, ids.index(tok.token_to_id("[MASK]"))]
    assert [p["token"] for p in predictions] == logits.topk(3).indices.tolist()


@pytest.mark.parametrize("arch", ["modernbert", "bert"])
def test_auto_model_gives_the_sentence_embeddings_of_embed(runs, arch):
    d, folders = runs
    model_dir = folders[arch] / "model"
    auto_tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    base = transformers.AutoModel.from_pretrained(model_dir).eval()
    batch = auto_tok(TEXTS, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = base(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    pooled = ((hidden * mask).sum(1) / mask.sum(1)).numpy()
    ours, _ = load_trained(folders[arch] / "checkpoint")
    assert np.allclose(pooled, embed(ours, tokkit.load(d / "tok"), TEXTS), atol=1e-4)


def test_modernbert_tokenizer_hands_no_token_types(runs):
    _, folders = runs
    config = json.loads((folders["modernbert"] / "model" / "tokenizer_config.json").read_text())
    assert config["model_input_names"] == ["input_ids", "attention_mask"]
    assert "token_type_ids" not in transformers.AutoTokenizer.from_pretrained(folders["modernbert"] / "model")("a cat")


@pytest.mark.parametrize("arch", ["modernbert", "bert"])
def test_export_command_writes_the_same_folder(runs, tmp_path, arch):
    _, folders = runs
    assert run_cli(["export", str(folders[arch]), "-o", str(tmp_path / "out")]) == 0
    written = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    assert written == {p.name: p.read_bytes() for p in (folders[arch] / "model").iterdir()}
    assert run_cli(["export", str(folders[arch] / "checkpoint"), "-o", str(tmp_path / "out")]) == 0  # replaced


def test_export_checks_the_tokenizer_and_refuses_its_own_input(runs, tmp_path, capsys):
    d, folders = runs
    other = wordpiece_tokenizer(tmp_path / "other", texts=tiny_corpus(240, seed=3).splitlines(), vocab_size=150)
    with pytest.raises(TokkitError, match="another tokenizer|vocab size"):
        export_run(folders["bert"], tmp_path / "x", tokenizer=other)
    assert not (tmp_path / "x").exists()
    for bad in (folders["bert"], folders["bert"] / "checkpoint", folders["bert"] / "checkpoint" / "inside"):
        assert run_cli(["export", str(folders["bert"]), "-o", str(bad)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("tokkit: error:") and "write it elsewhere" in err[0]
    assert json.loads((folders["bert"] / "checkpoint" / "state.json").read_text())["step"] == 6
