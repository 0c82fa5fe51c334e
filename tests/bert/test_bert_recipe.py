"""The pretraining recipe around the model: architecture choice, lr and masking schedules, timed
evaluation, the masking-rate switch and the allocator setting."""
import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from helpers.bert import pretrain_folder  # noqa: E402

from tokkit.bert import data  # noqa: E402
from tokkit.bert.recipe import DEFAULT_LR  # noqa: E402
from tokkit.bert.train import PretrainConfig, pretrain, resolve_arch  # noqa: E402
from tokkit.errors import TokkitError  # noqa: E402

TINY = dict(num_layers=2, hidden_size=32, num_heads=2, intermediate_size=32, max_position_embeddings=64)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    return pretrain_folder(tmp_path_factory.mktemp("recipe"))


def config(**kw):
    base = dict(steps=20, batch_size=8, max_length=32, warmup_steps=2, log_every=1, checkpoint_every=0,
                eval_blocks=16, threads=1, model=TINY)
    return PretrainConfig(**{**base, **kw})


def records(run, kind):
    return [r for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines()) if r["kind"] == kind]


def test_architecture_defaults():
    assert resolve_arch(PretrainConfig()) == "modernbert"
    assert resolve_arch(PretrainConfig(objective="mlm+nsp")) == "bert"
    assert resolve_arch(PretrainConfig(arch="bert")) == "bert"
    with pytest.raises(TokkitError, match="next-sentence"):
        resolve_arch(PretrainConfig(objective="mlm+nsp", arch="modernbert"))
    modern = PretrainConfig().with_arch_defaults("modernbert")
    bert = PretrainConfig().with_arch_defaults("bert")
    assert modern.lr > bert.lr
    assert (modern.mlm_probability, modern.mlm_probability_end) == (0.30, 0.15)
    assert (bert.mlm_probability, bert.mlm_probability_end) == (0.15, 0.15)
    # a rate given alone holds for the whole run; explicit values always win
    held = PretrainConfig(mlm_probability=0.2, lr=1e-4).with_arch_defaults("modernbert")
    assert (held.mlm_probability, held.mlm_probability_end, held.lr) == (0.2, 0.2, 1e-4)
    with pytest.raises(TokkitError, match="arch"):
        PretrainConfig(arch="gpt")
    with pytest.raises(TokkitError, match="mlm_probability"):
        PretrainConfig(mlm_probability=1.5)


def test_init_folder_decides_the_architecture(tmp_path):
    from tokkit.bert import save_hf
    from tokkit.bert.modernbert import ModernBertConfig, ModernBertForMaskedLM

    save_hf(ModernBertForMaskedLM(ModernBertConfig(vocab_size=50, hidden_size=16, num_heads=2,
                                                   intermediate_size=16, num_layers=1)), None, tmp_path / "m")
    assert resolve_arch(PretrainConfig(), init=tmp_path / "m") == "modernbert"
    with pytest.raises(TokkitError, match="does not match"):
        resolve_arch(PretrainConfig(arch="bert"), init=tmp_path / "m")


def test_schedules_by_steps_and_by_time():
    c = PretrainConfig(steps=100, warmup_steps=10, lr=1e-3, mlm_probability=0.3, mlm_probability_end=0.1)
    assert c.lr_at(0) == pytest.approx(1e-4)
    assert c.lr_at(10) == pytest.approx(1e-3)
    assert c.lr_at(55) == pytest.approx(0.5e-3)
    assert c.mlm_probability_at(0) == pytest.approx(0.3)
    assert c.mlm_probability_at(50) == pytest.approx(0.2)
    assert c.mlm_probability_at(100) == pytest.approx(0.1)
    t = PretrainConfig(max_time=600, lr=1e-3, mlm_probability=0.3, mlm_probability_end=0.15)
    assert t.steps >= 10**9 and t.warmup_time == 30.0                   # warm-up over 5% of the time
    assert t.lr_at(5000, train_seconds=15) == pytest.approx(0.5e-3)     # whatever the step count
    assert t.lr_at(0, train_seconds=30) == pytest.approx(1e-3)
    assert t.lr_at(500, train_seconds=300) == pytest.approx(1e-3 * 0.5 / 0.95)
    # a warm-up given in steps stays in steps, flat until 5% of the time
    s = PretrainConfig(max_time=600, lr=1e-3, warmup_steps=100)
    assert s.warmup_time is None and s.lr_at(49, train_seconds=1) == pytest.approx(0.5e-3)
    assert s.lr_at(500, train_seconds=20) == pytest.approx(1e-3)
    # a run bounded by time is planned in time whatever its step bound: with 100,000 steps that 600 s
    # end first, the warm-up takes the first 30 s and the decay reaches zero at 600 s
    both = PretrainConfig(max_time=600, steps=100_000, lr=1e-3)
    assert both.warmup_time == 30.0 and both.lr_at(1_000, train_seconds=15) == pytest.approx(0.5e-3)
    assert both.lr_at(2_000, train_seconds=300) == pytest.approx(1e-3 * 0.5 / 0.95)
    assert both.lr_at(90_000, train_seconds=300) == pytest.approx(1e-3 * 0.1 / 0.95)  # steps first, this time
    assert t.lr_at(500, train_seconds=600) == 0.0
    assert t.mlm_probability_at(10**6, train_seconds=300) == pytest.approx(0.225)


def test_masking_schedule_and_timed_evaluation_in_a_run(setup, tmp_path):
    run = tmp_path / "run"
    summary = pretrain(setup / "tok", [setup / "corpus.txt"], run, eval_file=setup / "heldout.txt",
                       config=config(eval_every_seconds=1e-9), progress=False)
    assert summary["arch"] == "modernbert" and summary["config"]["lr"] == DEFAULT_LR["modernbert"] == 1e-3
    train = records(run, "train")
    rates = [r["mask_rate"] for r in train]
    assert rates[0] == 0.3 and 0.15 <= rates[-1] <= 0.16 and rates == sorted(rates, reverse=True)
    # the labelled share follows the rate (tokens eligible for masking are most of each batch)
    counts = [r["mlm_count"] for r in train]
    assert sum(counts[:5]) > 1.4 * sum(counts[-5:])
    # a tiny interval evaluates after every step; each record carries training seconds and RSS
    evals = records(run, "eval")
    assert [e["step"] for e in evals] == list(range(1, 21))
    assert all(e["train_seconds"] > 0 and e["rss_mb"] > 0 for e in evals)
    assert summary["peak_rss_mb"] > 0


def test_mask_rates_switch_the_collator(setup):
    import tokkit

    tok = tokkit.load(str(setup / "tok"))
    collator = data.make_collator(tok, seed=0, mlm_probability=0.15)
    rates = data.MaskRates(tok, collator, 0.15)
    examples = [{"input_ids": tok.encode("the quick brown fox jumps over the lazy dog " * 6), "index": i}
                for i in range(64)]

    def share():
        labels = collator(examples)["labels"]
        return float((labels != -100).float().mean())

    low = share()
    rates.set(0.6)
    high = share()
    assert rates.rate == 0.6 and high > 3 * low
    rates.set(0.15)
    assert share() == low  # same keys, same rate: the same masks again


def test_cli_prints_evaluations_and_picks_bert_for_nsp(setup, tmp_path):
    from click.testing import CliRunner

    from tokkit.cli import cli

    base = ["pretrain", "-t", str(setup / "tok"), str(setup / "corpus.txt"), "--steps", "4", "--batch-size", "4",
            "--max-length", "32", "--layers", "1", "--hidden", "32", "--heads", "2", "--ffn", "32",
            "--positions", "64", "--threads", "1", "--eval-file", str(setup / "heldout.txt"),
            "--eval-blocks", "8", "--eval-every", "2"]
    res = CliRunner().invoke(cli, base + ["-o", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert "held-out loss" in res.output and "[MASK] ratio" in res.output
    assert json.loads((tmp_path / "m" / "summary.json").read_text())["arch"] == "modernbert"
    res = CliRunner().invoke(cli, base + ["-o", str(tmp_path / "n"), "--objective", "mlm+nsp", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "n" / "summary.json").read_text())["arch"] == "bert"
    res = CliRunner().invoke(cli, base + ["-o", str(tmp_path / "x"), "--objective", "mlm+nsp", "--arch",
                                          "modernbert"], standalone_mode=False)
    assert isinstance(res.exception, TokkitError)


def test_allocator_settings_parse_and_bad_ones_are_one_error():
    from tokkit.bert.memory import DEFAULT, PRESETS, parse_setting

    assert parse_setting("mmap=32M,trim=1G,arenas=2") == {"mmap": 32 << 20, "trim": 1 << 30, "arenas": 2}
    assert parse_setting("bounded") == parse_setting(PRESETS["bounded"]) == {"mmap": 1 << 20, "trim": 8 << 20}
    # the default serves the 2 MB activations of a 16 x 128 x 256 step from the heap
    assert parse_setting(DEFAULT) == parse_setting("mmap4m") == {"mmap": 4 << 20, "trim": 64 << 20}
    for bad in ("mmap=lots", "fast", "trim=", "mmap=-1M"):
        with pytest.raises(TokkitError, match="TOKKIT_MALLOC"):
            parse_setting(bad)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
def test_allocator_setting_applies_once_and_can_be_switched_off():
    code = "from tokkit.bert.memory import return_freed_memory as f; print(f(), f())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "TOKKIT_MALLOC": "default"}).stdout.split()
    assert off == ["False", "False"]
    heap = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**__import__("os").environ, "TOKKIT_MALLOC": "heap"}).stdout.split()
    assert heap == ["True", "True"]


def test_whole_word_masking_and_continued_pretraining_from_a_run(setup, tmp_path):
    """--whole-word-masking labels every sub-token of a chosen word; --init RUN continues a tokkit run."""
    from safetensors.torch import load_file

    import tokkit
    from tokkit.bert.data import make_collator

    first = tmp_path / "first"
    pretrain(setup / "tok", [setup / "corpus.txt"], first, progress=False,
             config=config(steps=4, whole_word_masking=True))
    assert json.loads((first / "summary.json").read_text())["config"]["whole_word_masking"] is True
    tok = tokkit.load(setup / "tok")
    collate = make_collator(tok, seed=0, mlm_probability=0.5, whole_word=True)
    batch = collate([{"input_ids": tok.encode("the river and the morning fresh air " * 3), "index": 0}])
    labelled = batch["labels"][0] != -100
    pieces = [tok.id_to_token(i) for i in batch["input_ids"][0].tolist()]
    for i, piece in enumerate(pieces):  # a continuation is labelled exactly when its word's start is
        if piece.startswith("##") and i:
            assert labelled[i] == labelled[i - 1]
    again = tmp_path / "again"
    pretrain(setup / "tok", [setup / "corpus.txt"], again, progress=False, init=first, config=config(steps=1))
    start = load_file(str(first / "model" / "model.safetensors"))
    after = load_file(str(again / "model" / "model.safetensors"))
    moved = [k for k in start if not torch.equal(start[k], after[k])]
    assert moved and all(torch.allclose(start[k], after[k], atol=0.05) for k in start)  # one step from the run
