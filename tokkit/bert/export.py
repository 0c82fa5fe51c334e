"""A pretraining run's checkpoint as a folder transformers loads (`tokkit export RUN -o DIR`).

The folder holds config.json, model.safetensors and the tokenizer's files (tokenizer.json,
tokenizer_config.json, special_tokens_map.json, vocab files): `AutoTokenizer`,
`AutoModelForMaskedLM`, `AutoModel` and `pipeline("fill-mask", ...)` load it. `tokkit pretrain`
writes the same folder to RUN/model/ at each checkpoint and at the end.

>>> export_run("run/", "exported/")   # doctest: +SKIP
PosixPath('exported')
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from tokkit.bert import checkpoint as ckpt
from tokkit.bert.electra import Electra
from tokkit.bert.folders import holds_tokenizer, load_tokenizer
from tokkit.bert.hf import save_hf
from tokkit.bert.recipe import PretrainConfig, build_model, resolve_arch
from tokkit.errors import TokkitError

MODEL_DIR = "model"  # the exported folder inside a run folder


def find_checkpoint(path) -> Path:
    """The checkpoint folder of a run folder (RUN/checkpoint), or `path` itself when it is one."""
    p = Path(path)
    if not p.exists():
        raise TokkitError(f"{p}: folder does not exist")
    if (p / "checkpoint" / "state.json").exists():
        return p / "checkpoint"
    return p


def load_trained(directory) -> tuple:
    """(model, state) of a checkpoint folder, every field checked before the model is built."""
    state = ckpt.read_state(directory)
    ckpt.check_model_config(directory, state)
    saved = state.get("config", {})
    model, _ = build_model(resolve_arch(PretrainConfig(), state=state), state["model_config"],
                           objective=saved.get("objective", "mlm"), generator_layers=saved.get("generator_layers", 1))
    ckpt.load_model_state(directory, model)
    return model.eval(), state


def checkpoint_tokenizer(directory, state: dict, tokenizer=None):
    """The run's tokenizer: `tokenizer` (a folder or object) checked against the checkpoint, or the
    copy the checkpoint holds."""
    if tokenizer is None:
        if not holds_tokenizer(directory, ("tokenizer.json", "vocab.txt")):
            raise TokkitError(f"{directory}: the checkpoint holds no tokenizer (an older tokkit wrote it); "
                              "name the run's tokenizer folder with -t")
        tokenizer = directory
    tokenizer = load_tokenizer(tokenizer)
    ckpt.check_tokenizer(directory, state, tokenizer)
    if tokenizer.vocab_size != state["model_config"].get("vocab_size"):
        raise TokkitError(f"{directory}: the model's vocab size {state['model_config'].get('vocab_size')} does not "
                          f"match the tokenizer's {tokenizer.vocab_size}")
    return tokenizer


def export_run(run, output, *, tokenizer=None, force: bool = False) -> Path:
    """Write the model of `run` (a run or checkpoint folder) and its tokenizer to `output`."""
    directory = find_checkpoint(run)
    model, state = load_trained(directory)
    tok = checkpoint_tokenizer(directory, state, tokenizer)
    return save_hf(exported(model), tok, output, force=force)


def exported(model):
    """What a run exports: the model, or for replaced-token detection its encoder alone (a folder
    AutoModel loads, with no masked-LM head)."""
    return model.encoder if isinstance(model, Electra) else model


def export_model(model, tokenizer, run_dir) -> Optional[Path]:
    """The run's current model as RUN/model/ (replaced as a whole, atomically)."""
    return save_hf(exported(model), tokenizer, Path(run_dir) / MODEL_DIR, force=True)
