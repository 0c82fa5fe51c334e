"""The task registry: each task is one object, and what the rest of tokkit reads off it agrees with
transformers, the command line and the labelled rows."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tokkit.bert import HeadConfig  # noqa: E402
from tokkit.bert.finetune_config import FinetuneConfig  # noqa: E402
from tokkit.bert.hf_names import ARCHITECTURES, UNPOOLED_TASKS  # noqa: E402
from tokkit.bert.tasks import TASKS, task, task_of_architecture  # noqa: E402
from tokkit.cli import finetune as finetune_cli  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402
from tokkit.labelled import LAYOUTS  # noqa: E402


def test_the_command_line_offers_every_task_and_no_other():
    option = next(p for p in finetune_cli.command.params if p.name == "task")
    assert list(option.type.choices) == list(TASKS)


@pytest.mark.parametrize("name", list(TASKS))
def test_each_task_names_classes_transformers_has(name):
    t = task(name)
    assert t.name == name and t.rows in LAYOUTS
    assert hasattr(transformers, t.auto_class)
    for arch in ("bert", "modernbert"):
        assert hasattr(transformers, t.architecture(arch))
        assert ARCHITECTURES[arch, name] == t.architecture(arch)


def test_a_folders_class_reads_back_as_its_task_and_a_sequence_regressor_as_classify_until_its_config_says():
    assert [task_of_architecture(task(n).architecture("bert")) for n in TASKS] == ["classify", "classify", "tag", "qa"]
    assert task_of_architecture("BertForMaskedLM") is None
    assert task("classify").from_folder({"problem_type": "regression"}, 1) is task("regress")
    assert task("classify").from_folder({}, 3) is task("classify")


def test_head_widths_and_label_sets():
    labels = ("a", "b", "c")
    assert [task(n).outputs(HeadConfig(n, labels=labels if task(n).has_labels else ())) for n in TASKS] == [3, 1, 3, 2]
    assert [n for n in TASKS if task(n).has_labels] == ["classify", "tag"]
    assert UNPOOLED_TASKS == ("tag", "qa")
    with pytest.raises(ValueError, match="a classify head needs two labels"):
        HeadConfig("classify", labels=("one",))
    with pytest.raises(ValueError, match="task must be one of"):
        task("summarise")


def test_losses_are_the_tasks_own():
    logits = torch.tensor([[2.0, 0.0], [0.0, 2.0]])
    same = task("classify").loss(logits, torch.tensor([0, 1]))
    swapped = task("classify").loss(logits, torch.tensor([1, 0]))
    assert same < swapped
    assert torch.allclose(task("regress").loss(torch.tensor([1.0, 3.0]), torch.tensor([1.0, 1.0])), torch.tensor(2.0))
    assert task("tag").loss(logits, torch.tensor([-100, -100])) == 0  # nothing labelled adds nothing


def test_settings_of_one_task_given_for_another_are_refused_through_the_task():
    assert FinetuneConfig(task="qa").length == 384 and FinetuneConfig(task="regress").length == 128
    with pytest.raises(TokkitError, match="auto applies to classify, regress and tag, not 'qa'"):
        FinetuneConfig(task="qa", max_length="auto")
    with pytest.raises(TokkitError, match="applies to sentence tasks"):
        FinetuneConfig(task="tag", pooling="mean")
    with pytest.raises(TokkitError, match="applies to task 'tag'"):
        FinetuneConfig(task="classify", label_all_subtokens=True)


def test_predictions_are_written_in_each_tasks_shape():
    outputs = np.array([[0.0, 2.0], [3.0, 0.0]], dtype=np.float32)
    rows = [{"tokens": ["a"]}, {"tokens": ["b"]}]
    assert [p["label"] for p in task("classify").predictions(rows, ["y", "x"], outputs)] == ["y", "x"]
    assert task("regress").predictions(rows, [0.5, 1.5], outputs) == [{"value": 0.5}, {"value": 1.5}]
    assert task("tag").predictions(rows, [["N"], ["V"]], outputs)[1] == {"tokens": ["b"], "tags": ["V"]}
    with pytest.raises(TokkitError, match="question answering reads JSON lines"):
        task("qa").plain_rows(["a line"], None)
