"""Describe the machine and software a benchmark ran on, for results.json and RESULTS.md.

>>> info = machine_info()
>>> info["cores"] >= 1 and "python" in info and "date" in info
True
"""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
from importlib import metadata

try:
    import psutil
except ImportError:  # an optional extra: the machine's memory is then unknown
    psutil = None

LIBRARIES = ("tokkit", "numpy", "tokenizers", "tiktoken", "sentencepiece", "bpeasy", "transformers", "torch",
             "matplotlib")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gb() -> float | None:
    return None if psutil is None else round(psutil.virtual_memory().total / 2**30, 1)


def library_versions() -> dict[str, str | None]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_commit() -> str | None:
    """The tokkit checkout's commit when running from a git clone (None from a wheel)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True,
                             timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def machine_info() -> dict:
    """CPU, cores, memory, OS, Python and library versions, the UTC date and the tokkit commit."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu_model(),
        "cores": cores,
        "memory_gb": memory_gb(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "libraries": library_versions(),
        "tokkit_commit": git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def describe(info: dict) -> list[str]:
    """Markdown bullet lines for a machine_info() dict."""
    libs = ", ".join(f"{k} {v}" for k, v in info["libraries"].items() if v)
    missing = [k for k, v in info["libraries"].items() if not v]
    lines = [f"- CPU: {info['cpu']}, {info['cores']} cores available, {info['memory_gb']} GiB memory",
             f"- OS: {info['os']}; Python {info['python']}",
             f"- Libraries: {libs}" + (f" (not installed: {', '.join(missing)})" if missing else ""),
             f"- Date: {info['date']}" + (f"; tokkit commit {info['tokkit_commit']}" if info.get("tokkit_commit") else "")]
    return lines
