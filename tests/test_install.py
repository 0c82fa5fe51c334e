"""The suite tests the copy of tokkit it was asked to: the checkout (an editable install or a build
in place), or a regular install from a wheel when TOKKIT_TEST_INSTALLED=1 (as .ci/run does once)."""
import os
import subprocess
import sys
from pathlib import Path

import tokkit

CHECKOUT = Path(__file__).resolve().parents[1]


def test_imported_copy_is_the_one_under_test():
    # the checkout's own package folder, or another (a venv's site-packages may lie inside the checkout)
    where = Path(tokkit.__file__).resolve().parent
    installed = os.environ.get("TOKKIT_TEST_INSTALLED") == "1"
    assert (where == CHECKOUT / "tokkit") != installed, f"tokkit imported from {where}"


def test_cli_runs_in_a_fresh_process(tmp_path):
    # A fresh interpreter outside the checkout: `import importlib` alone does not bind importlib.util,
    # and only an editable install's import hook (or pytest, in-process) had loaded it before.
    code = "from tokkit.cli import main; main(['train', '--help']); main(['--version'])"
    env = {**os.environ, "PYTHONPATH": str(Path(tokkit.__file__).resolve().parents[1])}  # the copy under test
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Usage: tokkit train" in run.stdout
    assert run.stdout.strip().endswith(f"tokkit, version {tokkit.__version__}")
