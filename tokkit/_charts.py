"""Matplotlib helpers shared by every PNG tokkit draws (optional: callers check `have_matplotlib`).

>>> have_matplotlib() in (True, False)
True
"""
from __future__ import annotations

import importlib.util
import io

from tokkit._files import atomic_write

TOKKIT_COLOR, OTHER_COLOR = "#d95f02", "#7570b3"


def have_matplotlib() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def missing_note() -> str:
    return "matplotlib is not installed, so no charts were drawn (pip install 'tokkit[bench]')"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display needed; must come before pyplot's import
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str) -> None:
    buf = io.BytesIO()
    # A fixed metadata dict keeps the PNG free of a creation date and the matplotlib version.
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    atomic_write(path, buf.getvalue())
