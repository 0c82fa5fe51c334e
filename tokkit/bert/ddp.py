"""One optimizer step for one or several processes (torchrun + DistributedDataParallel, gloo on CPU).

The MLM loss is the sum of cross-entropies over this rank's labelled tokens divided by the
*global* labelled count (all-reduced), times the world size: DDP averages gradients over ranks,
so the update equals the one-process update on the whole batch, whatever each rank's share of
labelled tokens.

>>> import torch
>>> from tokkit.bert.model import BertConfig, BertForPreTraining
>>> model = BertForPreTraining(BertConfig(vocab_size=50, hidden_size=16, num_heads=2,
...                                      intermediate_size=32, num_layers=1))
>>> opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
>>> ids = torch.randint(5, 50, (2, 6)); labels = ids.clone(); labels[:, :3] = -100
>>> stats = train_step(model, opt, {"input_ids": ids, "labels": labels})
>>> sorted(stats)
['loss', 'mlm_count', 'mlm_loss', 'nsp_loss']
"""
from __future__ import annotations

import os
from typing import Optional

import torch
import torch.distributed as dist
from torch import nn


def dist_info() -> tuple[int, int, int]:
    """(rank, local_rank, world_size) from torchrun's environment; (0, 0, 1) for a plain process."""
    return (int(os.environ.get("RANK", 0)), int(os.environ.get("LOCAL_RANK", 0)),
            int(os.environ.get("WORLD_SIZE", 1)))


def init_distributed(device: torch.device) -> tuple[int, int]:
    """Join the process group torchrun describes (gloo on CPU, nccl on CUDA); return (rank, world_size)."""
    rank, _, world = dist_info()
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return rank, world


def finish_distributed() -> None:
    """Wait for every rank, then leave the process group: a rank exiting while its peers are still
    in gloo's teardown can make them abort (seen as a rare SIGABRT under torchrun)."""
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def wrap(model: nn.Module, device: torch.device) -> nn.Module:
    """Wrap in DistributedDataParallel when a process group is up; otherwise return the model itself."""
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        ids = [device.index] if device.type == "cuda" else None
        return nn.parallel.DistributedDataParallel(model, device_ids=ids)
    return model


def unwrap(model: nn.Module) -> nn.Module:
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model


def _world() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, batch: dict, *,
               clip: Optional[float] = 1.0, scheduler=None, bf16: bool = False) -> dict:
    """Forward, backward, clip, step. Returns global (all-rank) loss figures as floats.

    bf16=True runs the forward pass under bfloat16 autocast (weights and optimizer stay float32).
    """
    world = _world()
    device_type = batch["input_ids"].device.type
    with torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16):
        out = model(batch["input_ids"], batch.get("token_type_ids"), batch.get("attention_mask"),
                    labels=batch["labels"], next_sentence_label=batch.get("next_sentence_label"))
    zero = out.mlm_loss_sum.new_zeros(())
    stats = torch.stack([out.mlm_loss_sum.detach(), out.mlm_count.to(out.mlm_loss_sum.dtype),
                         out.nsp_loss.detach() if out.nsp_loss is not None else zero,
                         out.rtd_loss.detach() if out.rtd_loss is not None else zero])
    if world > 1:
        dist.all_reduce(stats)  # global loss sum, global labelled count, summed NSP means
    count = stats[1].clamp(min=1)
    loss = out.mlm_loss_sum / count * world
    if out.nsp_loss is not None:
        loss = loss + out.nsp_loss
    if out.rtd_loss is not None:
        loss = loss + out.rtd_loss
    elif out.nsp_logits is not None:
        # The pooler and NSP head take no part in an MLM-only loss; touching them with a zero keeps
        # DDP's gradient bookkeeping simple (no find_unused_parameters) and one process identical to many.
        loss = loss + 0.0 * out.nsp_logits.sum()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()
    mlm = (stats[0] / count).item()
    nsp = (stats[2] / world).item()
    out_stats = {"loss": mlm + nsp, "mlm_loss": mlm, "nsp_loss": nsp, "mlm_count": int(stats[1].item())}
    if out.rtd_loss is not None:
        out_stats["rtd_loss"] = (stats[3] / world).item()
        out_stats["loss"] += out_stats["rtd_loss"]
    return out_stats


def adamw(groups: list[dict], lr: float, *, betas=(0.9, 0.98), eps: float = 1e-6) -> torch.optim.AdamW:
    """AdamW over parameter groups, fused into one kernel for all parameters where torch can
    (on CPU from torch 2.4 on), else one kernel per kind of update."""
    kind = {"foreach": True}
    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 4):
        kind = {"fused": True}
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, **kind)


def make_optimizer(model: nn.Module, lr: float, weight_decay: float = 0.01) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices only (none on LayerNorm weights and biases)."""
    decay, no_decay = [], []
    for name, p in unwrap(model).named_parameters():
        (no_decay if p.ndim < 2 else decay).append(p)
    return adamw([{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr)


def task_step(model: nn.Module, optimizer: torch.optim.Optimizer, batch: dict, *, clip: Optional[float] = 1.0,
              bf16: bool = False) -> float:
    """One fine-tuning step: forward with the labels, backward, clip, step. Returns the loss, averaged
    over ranks (DDP averages the gradients the same way)."""
    device_type = batch["input_ids"].device.type
    with torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16):
        out = model(batch["input_ids"], batch.get("token_type_ids"), batch.get("attention_mask"),
                    labels=batch["labels"])
    optimizer.zero_grad(set_to_none=True)
    out.loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    loss = out.loss.detach()
    if _world() > 1:
        dist.all_reduce(loss)
        loss = loss / _world()
    return float(loss)


def linear_schedule(optimizer: torch.optim.Optimizer, warmup: int, total: int):
    """Linear warm-up for `warmup` steps, then linear decay to zero at `total`."""
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
