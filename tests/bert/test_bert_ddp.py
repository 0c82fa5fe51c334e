"""Two local processes (gloo) take the same optimizer steps as one process on the whole batch."""
import os
import socket

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from tokkit.bert.ddp import finish_distributed, make_optimizer, train_step, wrap  # noqa: E402
from tokkit.bert.model import BertConfig, BertForPreTraining  # noqa: E402

CFG = dict(vocab_size=61, hidden_size=32, num_heads=4, intermediate_size=64, num_layers=2,
           max_position_embeddings=32, dropout=0.0, attention_dropout=0.0)
B, T, STEPS = 3, 16, 3


def make_batch(nsp: bool):
    """2B pre-masked rows; labelled counts differ a lot between the halves on purpose."""
    g = torch.Generator().manual_seed(11)
    ids = torch.randint(5, 61, (2 * B, T), generator=g)
    labels = torch.full_like(ids, -100)
    p = torch.tensor([0.05] * B + [0.4] * B)[:, None].expand(2 * B, T)
    chosen = torch.rand((2 * B, T), generator=g) < p
    chosen[:, 0] = True  # every row has at least one label
    labels[chosen] = ids[chosen]
    ids = ids.masked_fill(chosen, 4)
    am = torch.ones_like(ids)
    am[1, 12:] = 0  # a little padding
    labels[1, 12:] = -100
    batch = {"input_ids": ids, "attention_mask": am, "labels": labels,
             "token_type_ids": (torch.arange(T) >= T // 2).long().expand(2 * B, T).clone()}
    if nsp:
        batch["next_sentence_label"] = torch.tensor([0, 1, 1, 0, 1, 0])
    return batch


def run(rank, world, nsp, out_dir=None):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = BertForPreTraining(BertConfig(**CFG))
    ddp_model = wrap(model, torch.device("cpu"))
    opt = make_optimizer(ddp_model, lr=1e-4)
    full = make_batch(nsp)
    rows = slice(rank * B, (rank + 1) * B) if world > 1 else slice(None)
    batch = {k: v[rows] for k, v in full.items()}
    for _ in range(STEPS):
        train_step(ddp_model, opt, batch, clip=1.0)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if out_dir is not None and rank == 0:
        from safetensors.torch import save_file

        save_file(state, os.path.join(out_dir, "ddp.safetensors"))
    return state


def _worker(rank, world, port, nsp, out_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        run(rank, world, nsp, out_dir)
    finally:
        finish_distributed()  # a barrier first: a rank leaving during a peer's teardown can abort it


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("nsp", [False, True], ids=["mlm", "mlm+nsp"])
def test_two_processes_match_one(tmp_path, nsp):
    from safetensors.torch import load_file

    mp.spawn(_worker, args=(2, _free_port(), nsp, str(tmp_path)), nprocs=2, join=True)
    ddp = load_file(str(tmp_path / "ddp.safetensors"))
    single = run(0, 1, nsp)
    start = BertForPreTraining(BertConfig(**CFG)).state_dict()  # sanity: training moved the weights
    assert any(not torch.equal(single[k], start[k]) for k in single)
    for k, v in single.items():
        assert torch.allclose(ddp[k], v, atol=1e-5, rtol=0), k


def test_global_count_normalisation_matters():
    """Averaging per-rank means would differ: the halves have very different labelled counts."""
    full = make_batch(False)
    torch.manual_seed(0)
    model = BertForPreTraining(BertConfig(**CFG))
    with torch.no_grad():
        out = model(full["input_ids"], full["token_type_ids"], full["attention_mask"], labels=full["labels"])
        halves = [model(full["input_ids"][s], full["token_type_ids"][s], full["attention_mask"][s],
                        labels=full["labels"][s]).loss for s in (slice(0, B), slice(B, 2 * B))]
    assert abs(float(out.loss) - float(sum(halves) / 2)) > 1e-3


def test_pretrain_command_under_torchrun(tmp_path):
    """`tokkit pretrain` under torchrun: two gloo ranks, rank 0 writes the run folder."""
    import json
    import subprocess
    import sys

    from helpers.bert import tiny_corpus, wordpiece_tokenizer

    (tmp_path / "c.txt").write_text(tiny_corpus(120), encoding="utf-8")
    wordpiece_tokenizer(tmp_path / "tok", texts=tiny_corpus(120).splitlines(), vocab_size=120)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port",
           str(_free_port()), "-m", "tokkit.cli", "pretrain", "-t", str(tmp_path / "tok"), "-o",
           str(tmp_path / "run"), str(tmp_path / "c.txt"), "--steps", "4", "--batch-size", "4",
           "--max-length", "32", "--layers", "1", "--hidden", "32", "--heads", "2", "--ffn", "64",
           "--positions", "64", "--threads", "1", "-q"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["world_size"] == 2 and summary["steps"] == 4
