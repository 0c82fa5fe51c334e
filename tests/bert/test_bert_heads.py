"""Task heads against transformers: tokkit's fine-tuned folders load in the Auto classes with the same
logits, and transformers' own folders load back into tokkit, for both architectures and every task."""
import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tokkit.bert import BertConfig, HeadConfig, ModernBertConfig, TaskModel, load_hf, save_hf  # noqa: E402
from tokkit.bert.heads import task_loss  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

V = 61
AUTO = {"classify": "AutoModelForSequenceClassification", "regress": "AutoModelForSequenceClassification",
        "tag": "AutoModelForTokenClassification", "qa": "AutoModelForQuestionAnswering"}
HEADS = {"classify": HeadConfig("classify", labels=("fresh", "rotten", "stale")),
         "regress": HeadConfig("regress"),
         "tag": HeadConfig("tag", labels=("nn", "vb", "at", "jj")),
         "qa": HeadConfig("qa")}


def encoder_config(arch):
    if arch == "bert":
        return BertConfig(vocab_size=V, hidden_size=32, num_heads=4, intermediate_size=48, num_layers=2,
                          max_position_embeddings=40)
    return ModernBertConfig(vocab_size=V, hidden_size=32, num_heads=4, intermediate_size=48, num_layers=3,
                            max_position_embeddings=40, local_window=8)


def noisy(model):
    """Random biases and norms, so a name-mapping mistake cannot hide behind zeros and ones."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 1:
                p.add_(torch.randn_like(p) * 0.1)
    return model.eval()


def inputs(T=14):
    g = torch.Generator().manual_seed(5)
    ids = torch.randint(5, V, (3, T), generator=g)
    ids[:, 0] = 2
    types = torch.zeros_like(ids)
    types[:, 7:] = 1
    mask = torch.ones_like(ids)
    mask[1, 9:] = 0
    ids[1, 9:] = 0
    return ids, types, mask


def hf_logits(model, task, ids, types, mask):
    kw = {"input_ids": ids, "attention_mask": mask}
    if model.config.model_type == "bert":
        kw["token_type_ids"] = types
    with torch.no_grad():
        out = model(**kw)
    if task == "qa":
        return torch.stack([out.start_logits, out.end_logits], -1)
    return out.logits.squeeze(-1) if task == "regress" else out.logits


def compare(ours, theirs, task, mask):
    if task in ("tag", "qa"):  # per-token outputs mean something at real tokens only
        ours, theirs = ours[mask.bool()], theirs[mask.bool()]
    return (ours - theirs).abs().max().item()


@pytest.mark.parametrize("arch", ["bert", "modernbert"])
@pytest.mark.parametrize("task", ["classify", "regress", "tag", "qa"])
def test_saved_task_model_loads_in_auto_class_with_same_logits(tmp_path, arch, task):
    torch.manual_seed(0)
    pooling = "mean" if (arch, task) == ("modernbert", "regress") else "cls"
    head = HeadConfig(task, labels=HEADS[task].labels, pooling=pooling)
    model = noisy(TaskModel(encoder_config(arch), head))
    save_hf(model, None, tmp_path / "out")
    cfg = json.loads((tmp_path / "out" / "config.json").read_text())
    if task in ("classify", "tag"):
        assert cfg["id2label"] == {str(i): x for i, x in enumerate(head.labels)}
        assert cfg["label2id"] == {x: i for i, x in enumerate(head.labels)}
    hf = getattr(transformers, AUTO[task]).from_pretrained(tmp_path / "out").eval()
    assert type(hf).__name__.endswith({"classify": "SequenceClassification", "regress": "SequenceClassification",
                                       "tag": "TokenClassification", "qa": "QuestionAnswering"}[task])
    ids, types, mask = inputs()
    with torch.no_grad():
        ours = model(ids, types, mask).logits
    assert compare(ours, hf_logits(hf, task, ids, types, mask), task, mask) < 1e-4
    again = load_hf(TaskModel, tmp_path / "out").eval()
    assert again.head_config == model.head_config and model.head_config.labels == head.labels
    with torch.no_grad():
        assert torch.equal(again(ids, types, mask).logits, ours)


HF_CLASSES = {"classify": "ForSequenceClassification", "tag": "ForTokenClassification", "qa": "ForQuestionAnswering"}


@pytest.mark.parametrize("arch", ["bert", "modernbert"])
@pytest.mark.parametrize("task", ["classify", "tag", "qa"])
def test_transformers_task_folders_load_in_tokkit(tmp_path, arch, task):
    if arch == "bert":
        cfg = transformers.BertConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=48, max_position_embeddings=40, num_labels=3)
    else:
        cfg = transformers.ModernBertConfig(vocab_size=V, hidden_size=32, num_hidden_layers=3,
                                            num_attention_heads=4, intermediate_size=48, max_position_embeddings=40,
                                            local_attention=8, num_labels=3, classifier_pooling="mean",
                                            pad_token_id=0)
    if task == "qa":
        cfg.num_labels = 2
    torch.manual_seed(2)
    name = ("Bert" if arch == "bert" else "ModernBert") + HF_CLASSES[task]
    hf = noisy(getattr(transformers, name)(cfg))
    hf.save_pretrained(tmp_path)
    ours = load_hf(TaskModel, tmp_path).eval()
    assert ours.task == task and len(ours.head_config.labels) == (3 if task != "qa" else 0)
    ids, types, mask = inputs()
    with torch.no_grad():
        got = ours(ids, types, mask).logits
    assert compare(got, hf_logits(hf, task, ids, types, mask), task, mask) < 1e-4


@pytest.mark.parametrize("arch", ["bert", "modernbert"])
def test_a_pretrained_folder_starts_a_fresh_head(tmp_path, arch):
    from tokkit.bert import BertForPreTraining, ModernBertForMaskedLM

    torch.manual_seed(0)
    pre = (BertForPreTraining if arch == "bert" else ModernBertForMaskedLM)(encoder_config(arch))
    save_hf(noisy(pre), None, tmp_path / "pre")
    head = HEADS["tag"]
    model = load_hf(TaskModel, tmp_path / "pre", head=head)
    for name, p in pre.encoder.state_dict().items():
        assert torch.equal(model.encoder.state_dict()[name], p)
    assert torch.count_nonzero(model.head.classifier.bias) == 0  # a freshly initialised head
    with pytest.raises(TokkitError, match="not a fine-tuned task model"):
        load_hf(TaskModel, tmp_path / "pre")


def test_losses_follow_transformers_conventions():
    logits = torch.randn(2, 5, 3)
    labels = torch.tensor([[0, -100, 2, 1, -100], [-100, 1, 1, -100, -100]])
    ref = torch.nn.functional.cross_entropy(logits[labels != -100], labels[labels != -100])
    assert torch.allclose(task_loss("tag", logits, labels), ref)
    spans = torch.randn(2, 5, 2)
    pos = torch.tensor([[1, 3], [9, 9]])  # the second row's answer lies past the row: ignored
    ref = (torch.nn.functional.cross_entropy(spans[:1, :, 0], pos[:1, 0])
           + torch.nn.functional.cross_entropy(spans[:1, :, 1], pos[:1, 1])) / 2
    assert torch.allclose(task_loss("qa", spans, pos), ref)
    assert torch.allclose(task_loss("regress", torch.tensor([1.0, 2.0]), torch.tensor([0.0, 2.0])), torch.tensor(0.5))


def test_head_config_is_checked():
    with pytest.raises(ValueError, match="task"):
        HeadConfig("summarise")
    with pytest.raises(ValueError, match="two labels"):
        HeadConfig("classify", labels=("only",))
    with pytest.raises(ValueError, match="repeat"):
        HeadConfig("tag", labels=("a", "a"))
    with pytest.raises(ValueError, match="pooler"):
        TaskModel(encoder_config("bert"), HeadConfig("classify", labels=("a", "b"), pooling="mean"))


@pytest.mark.parametrize("arch", ["bert", "modernbert"])
def test_sparse_tag_head_and_cls_only_give_the_full_results(arch):
    torch.manual_seed(0)
    ids, types, mask = inputs()
    tagger = TaskModel(encoder_config(arch), HEADS["tag"]).eval()
    labels = torch.full_like(ids, -100)
    labels[0, 1:5] = torch.tensor([0, 1, 2, 3])
    labels[2, 3] = 1
    with torch.no_grad():
        full = tagger(ids, types, mask).logits
        sparse = tagger(ids, types, mask, labels=labels)
    assert torch.allclose(sparse.loss, task_loss("tag", full, labels), atol=1e-6)
    classifier = TaskModel(encoder_config(arch), HEADS["classify"]).eval()
    with torch.no_grad():
        hidden = classifier.encoder(ids, types, mask)  # every position, then [CLS]
        want = classifier.head(classifier.encoder.sentence_vector(hidden, mask, "cls"))
        assert torch.allclose(classifier(ids, types, mask).logits, want, atol=1e-5)
