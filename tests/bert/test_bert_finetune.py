"""tokkit finetune / evaluate / predict end to end, on small generated tasks a tiny model can learn."""
import json
import random

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers.bert import WORDS, pretrain_folder, wordpiece_tokenizer  # noqa: E402
from helpers.cli import run_cli  # noqa: E402

from tokkit.bert import FinetuneConfig, finetune, load_finetuned, predict_rows  # noqa: E402
from tokkit.bert.finetune_model import depth, layerwise_optimizer  # noqa: E402
from tokkit.bert.heads import HeadConfig, TaskModel  # noqa: E402
from tokkit.bert.modernbert import ModernBertConfig  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

TINY = ["--layers", "2", "--hidden", "32", "--heads", "2", "--ffn", "48"]
POSITIVE = {"cat", "dog", "bird"}


def sentences(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def classify_rows(n, seed):
    return [{"text": t, "label": "pets" if POSITIVE & set(t.split()) else "none"} for t in sentences(n, seed)]


def tag_rows(n, seed):
    return [{"tokens": t.split(), "tags": ["A" if w in POSITIVE else "D" if w in ("the", "a") else "O"
                                           for w in t.split()]} for t in sentences(n, seed)]


def qa_rows(n, seed):
    rows = []
    for i, t in enumerate(sentences(n, seed)):
        context = t + " and the answer is park"
        rows.append({"id": f"q{i}", "question": "what is the answer", "context": context,
                     "answers": {"text": ["park"], "answer_start": [context.rindex("park")]}})
    return rows


@pytest.fixture(scope="module")
def task_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("tasks")
    wordpiece_tokenizer(d / "tok", vocab_size=120)
    write_jsonl(d / "train.jsonl", classify_rows(240, 1))
    write_jsonl(d / "dev.jsonl", classify_rows(80, 2))
    write_jsonl(d / "tag_train.jsonl", tag_rows(200, 3))
    write_jsonl(d / "tag_dev.jsonl", tag_rows(60, 4))
    write_jsonl(d / "qa_train.jsonl", qa_rows(60, 5))
    write_jsonl(d / "qa_dev.jsonl", qa_rows(20, 6))
    return d


def finetune_cli(d, out, train, dev, *extra):
    return run_cli(["finetune", str(d / train), "--eval", str(d / dev), "-o", str(out), "--from-scratch",
                    "-t", str(d / "tok"), *TINY, "--threads", "1", "-q", *extra])


def test_classify_learns_and_loads_in_transformers(task_files, tmp_path, capsys):
    d, out = task_files, tmp_path / "out"
    assert finetune_cli(d, out, "train.jsonl", "dev.jsonl", "--task", "classify", "--epochs", "8",
                        "--lr", "3e-3", "--batch-size", "16") == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["best_eval"]["accuracy"] >= 0.9  # "pets" iff the text names one: easy to learn
    metrics = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert sum(m["kind"] == "eval" for m in metrics) == 8 and (out / "training_curve.png").is_file()
    # transformers' Auto classes give tokkit's predictions
    ft = load_finetuned(out)
    rows = [{"text": t, "text_pair": None, "label": None} for t in sentences(12, 9)]
    ours = predict_rows(ft, rows)
    tok = transformers.AutoTokenizer.from_pretrained(out)
    hf = transformers.AutoModelForSequenceClassification.from_pretrained(out).eval()
    with torch.no_grad():
        logits = hf(**tok([r["text"] for r in rows], return_tensors="pt", padding=True)).logits
    assert [hf.config.id2label[i] for i in logits.argmax(-1).tolist()] == [p["label"] for p in ours]
    capsys.readouterr()
    assert run_cli(["evaluate", "-m", str(out), str(d / "dev.jsonl")]) == 0
    report = capsys.readouterr().out
    assert "accuracy" in report and "pets" in report and "none" in report


def test_tagging_scores_words_on_their_first_sub_token(task_files, tmp_path, capsys):
    d, out = task_files, tmp_path / "tag"
    assert finetune_cli(d, out, "tag_train.jsonl", "tag_dev.jsonl", "--task", "tag", "--epochs", "6",
                        "--lr", "3e-3", "--batch-size", "16") == 0
    best = json.loads((out / "summary.json").read_text())["best_eval"]
    assert best["token_accuracy"] >= 0.95
    hf = transformers.AutoModelForTokenClassification.from_pretrained(out)
    assert sorted(hf.config.label2id) == ["A", "D", "O"]
    (tmp_path / "in.txt").write_text("the cat sat\n", encoding="utf-8")
    capsys.readouterr()
    assert run_cli(["predict", "-m", str(out), str(tmp_path / "in.txt")]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line == {"tokens": ["the", "cat", "sat"], "tags": ["D", "A", "O"]}


def test_qa_windows_train_and_give_spans(task_files, tmp_path, capsys):
    d, out = task_files, tmp_path / "qa"
    assert finetune_cli(d, out, "qa_train.jsonl", "qa_dev.jsonl", "--task", "qa", "--epochs", "2",
                        "--max-length", "24", "--stride", "6") == 0
    best = json.loads((out / "summary.json").read_text())["best_eval"]
    assert 0 <= best["f1"] <= 1 and "exact_match" in best
    assert type(transformers.AutoModelForQuestionAnswering.from_pretrained(out)).__name__.endswith("QuestionAnswering")
    capsys.readouterr()
    assert run_cli(["predict", "-m", str(out), str(d / "qa_dev.jsonl")]) == 0
    answers = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    rows = [json.loads(x) for x in (d / "qa_dev.jsonl").read_text().splitlines()]
    assert len(answers) == 20
    for a, r in zip(answers, rows):
        assert a["id"] == r["id"] and r["context"][a["start"]:a["end"]] == a["answer"]


def test_same_seed_same_model_and_resume_continues_exactly(task_files, tmp_path, monkeypatch):
    import tokkit.bert.finetune_run as ft

    d = task_files
    args = ("--task", "classify", "--lr", "1e-3", "--batch-size", "32", "--epochs", "2")
    assert finetune_cli(d, tmp_path / "a", "train.jsonl", "dev.jsonl", *args) == 0
    assert finetune_cli(d, tmp_path / "b", "train.jsonl", "dev.jsonl", *args) == 0
    weights = (tmp_path / "a" / "checkpoint" / "model.safetensors").read_bytes()
    assert weights == (tmp_path / "b" / "checkpoint" / "model.safetensors").read_bytes()
    # a run stopped after its first epoch's checkpoint, then resumed, ends where the whole run did
    real = ft._checkpoint

    def stop_after_first(run):
        real(run)
        raise KeyboardInterrupt

    monkeypatch.setattr(ft, "_checkpoint", stop_after_first)
    assert finetune_cli(d, tmp_path / "c", "train.jsonl", "dev.jsonl", *args) == 130
    monkeypatch.setattr(ft, "_checkpoint", real)
    assert finetune_cli(d, tmp_path / "c", "train.jsonl", "dev.jsonl", *args, "--resume") == 0
    assert (tmp_path / "c" / "checkpoint" / "model.safetensors").read_bytes() == weights
    assert (tmp_path / "c" / "model.safetensors").read_bytes() == (tmp_path / "a" / "model.safetensors").read_bytes()
    # a resume over other training data is refused
    write_jsonl(tmp_path / "other.jsonl", classify_rows(240, 11))
    code = run_cli(["finetune", str(tmp_path / "other.jsonl"), "--eval", str(d / "dev.jsonl"), "-o",
                    str(tmp_path / "c"), "--from-scratch", "-t", str(d / "tok"), *TINY, "-q", *args, "--resume"])
    assert code == 2


def test_from_a_pretraining_run_and_against_random_init(tmp_path, task_files):
    from tokkit.bert import PretrainConfig, pretrain

    pre = pretrain_folder(tmp_path)
    pretrain(pre / "tok", [pre / "corpus.txt"], pre / "run", progress=False,
             config=PretrainConfig(steps=4, batch_size=8, max_length=32, model={"num_layers": 2, "hidden_size": 32,
                                                                              "num_heads": 2, "intermediate_size": 48}))
    cfg = FinetuneConfig(task="classify", epochs=1, threads=1, max_length=32)
    write_jsonl(tmp_path / "t.jsonl", classify_rows(40, 1))
    a = finetune(pre / "run", tmp_path / "t.jsonl", tmp_path / "a", config=cfg, progress=False)
    b = finetune(pre / "run", tmp_path / "t.jsonl", tmp_path / "b", config=cfg, progress=False, from_scratch=True)
    assert a["model_config"] == b["model_config"]
    pretrained = load_finetuned(tmp_path / "a").model
    scratch = load_finetuned(tmp_path / "b").model
    assert not torch.equal(pretrained.encoder.tok.weight, scratch.encoder.tok.weight)


@pytest.mark.parametrize("case,message", [
    ("missing_field", "field 'label' is missing"),
    ("unseen_label", "'meh'"),
    ("tag_lengths", "tags"),
    ("empty", "empty"),
])
def test_bad_input_is_one_line_and_writes_nothing(task_files, tmp_path, capsys, case, message):
    d = task_files
    task, train, dev = "classify", d / "train.jsonl", d / "dev.jsonl"
    if case == "missing_field":
        train = write_jsonl(tmp_path / "bad.jsonl", [{"text": "a cat", "label": "pets"}, {"text": "a dog"}])
    elif case == "unseen_label":
        dev = write_jsonl(tmp_path / "bad.jsonl", [{"text": "a cat", "label": "meh"}])
    elif case == "tag_lengths":
        task, dev = "tag", d / "tag_dev.jsonl"
        train = write_jsonl(tmp_path / "bad.jsonl", [{"tokens": ["a", "cat"], "tags": ["D"]}])
    else:
        train = tmp_path / "bad.jsonl"
        train.write_text("", encoding="utf-8")
    capsys.readouterr()
    code = run_cli(["finetune", str(train), "--eval", str(dev), "-o", str(tmp_path / "out"), "--task", task,
                    "--from-scratch", "-t", str(d / "tok"), *TINY, "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("tokkit: error:") and message in err
    assert not (tmp_path / "out").exists()


def test_a_head_that_does_not_fit_the_labels_is_refused(task_files, tmp_path):
    d = task_files
    assert finetune_cli(d, tmp_path / "ft", "train.jsonl", "dev.jsonl", "--task", "classify", "--epochs", "1") == 0
    more = write_jsonl(tmp_path / "more.jsonl", classify_rows(20, 3) + [{"text": "a cow", "label": "farm"}])
    with pytest.raises(TokkitError, match="'farm'"):
        finetune(tmp_path / "ft", more, tmp_path / "again", config=FinetuneConfig(task="classify", epochs=1),
                 progress=False)
    assert not (tmp_path / "again").exists()


def test_layer_decay_scales_lower_layers():
    cfg = ModernBertConfig(vocab_size=30, hidden_size=16, num_heads=2, intermediate_size=24, num_layers=3)
    model = TaskModel(cfg, HeadConfig("classify", labels=("a", "b")))
    opt = layerwise_optimizer(model, FinetuneConfig(task="classify", layer_decay=0.5, lr=1.0))
    scale = {id(p): g["lr_scale"] for g in opt.param_groups for p in g["params"]}
    named = dict(model.named_parameters())
    assert scale[id(named["head.classifier.weight"])] == 1.0
    assert scale[id(named["encoder.layers.2.qkv.weight"])] == 0.5
    assert scale[id(named["encoder.tok.weight"])] == 0.5 ** 4
    assert depth("encoder.final_norm.weight", 3) == 4


def test_finetune_under_torchrun_matches_one_process(task_files, tmp_path):
    """Two gloo ranks, each taking half of every batch, end where one process on the whole batches does."""
    import socket
    import subprocess
    import sys

    from safetensors.torch import load_file

    d = task_files
    write_jsonl(tmp_path / "even.jsonl", classify_rows(128, 1))  # 4 whole batches of 32: none left out
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    common = ["finetune", str(tmp_path / "even.jsonl"), "--task", "classify", "--from-scratch", "-t",
              str(d / "tok"), *TINY, "--epochs", "2", "--lr", "1e-3", "--no-bf16", "--threads", "1", "-q"]
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(port),
           "-m", "tokkit.cli", *common, "-o", str(tmp_path / "ddp")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads((tmp_path / "ddp" / "summary.json").read_text())["world_size"] == 2
    assert run_cli([*common, "-o", str(tmp_path / "one")]) == 0
    two = load_file(str(tmp_path / "ddp" / "model.safetensors"))
    one = load_file(str(tmp_path / "one" / "model.safetensors"))
    for k, v in one.items():
        assert torch.allclose(two[k], v, atol=1e-5, rtol=0), k


def test_freeze_embeddings_keeps_them_for_the_first_steps(task_files, tmp_path):
    """Frozen for the whole run, the embeddings stay at the (seeded) init whatever the lr, while the
    layers above them move; frozen for 2 steps only, they move after."""
    from safetensors.torch import load_file

    def weights(name, *extra):
        out = tmp_path / name
        assert finetune_cli(task_files, out, "train.jsonl", "dev.jsonl", "--task", "classify", "--epochs", "1",
                            "--batch-size", "8", *extra) == 0
        state = load_file(str(out / "model.safetensors"))
        emb = [k for k in state if "embeddings" in k and k.endswith("weight")]
        layer = [k for k in state if ".layers.0." in k and k.endswith("weight")]
        assert emb and layer
        return state[emb[0]], state[layer[0]]

    low, high = weights("low", "--lr", "1e-3", "--freeze-embeddings", "1000"), weights(
        "high", "--lr", "3e-3", "--freeze-embeddings", "1000")
    assert torch.equal(low[0], high[0]) and not torch.equal(low[1], high[1])
    thawed = weights("thawed", "--lr", "3e-3", "--freeze-embeddings", "2")
    assert not torch.equal(thawed[0], high[0])
