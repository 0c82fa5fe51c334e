"""Check an installed tokkit as a user gets it: every compiled module imports, and the main job runs.

Run with the interpreter of the environment that holds the install, from any folder:

    python dev/wheel_check.py

It imports each compiled kernel (one per `.pyi` stub shipped beside it), checks that the installed
copy is the one imported (not a source checkout's), then runs `tokkit train --algo wordpiece` on the
embedded default corpus through the installed console script and encodes with what it wrote.
Exit code 0 when all of that holds; one line on stderr and exit code 1 otherwise.
"""
import importlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path


def fail(message: str) -> None:
    """Stop with one line on stderr."""
    sys.exit(f"wheel check: {message}")


def compiled_modules(native: Path) -> list:
    """The compiled kernels the package ships: each has a .pyi stub beside it."""
    names = sorted(p.stem for p in native.glob("*.pyi"))
    if not names:
        fail(f"no .pyi stubs in {native}")
    return names


def check_imports() -> Path:
    """Import every compiled module; return the package folder they came from."""
    tokkit = importlib.import_module("tokkit")
    package = Path(tokkit.__file__).resolve().parent
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    if site not in package.parents and Path(sysconfig.get_paths()["platlib"]).resolve() not in package.parents:
        fail(f"tokkit was imported from {package}, not from this environment's site-packages ({site})")
    for name in compiled_modules(package / "_native"):
        module = importlib.import_module(f"tokkit._native.{name}")
        if not str(getattr(module, "__file__", "")).endswith((".so", ".pyd")):
            fail(f"tokkit._native.{name} is not a compiled module ({module.__file__})")
    if not tokkit.COMPILED:
        fail("tokkit.COMPILED is False: the merge engine runs as its Python twin")
    return package


def check_main_job() -> None:
    """`tokkit train --algo wordpiece` through the console script, then an encode with its output."""
    script = shutil.which("tokkit", path=os.path.dirname(sys.executable)) or shutil.which("tokkit")
    if script is None:
        fail("no `tokkit` console script beside this interpreter")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tokkit-wordpiece"
        run = subprocess.run([script, "train", "--algo", "wordpiece", "-q", "-o", str(out)], cwd=tmp,
                             capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"`tokkit train --algo wordpiece` exited {run.returncode}: {run.stderr.strip()[-2000:]}")
        import tokkit

        tok = tokkit.load(str(out))
        if tok.decode(tok.encode("the tokenizer")) != "the tokenizer" or tok.vocab_size < 1000:
            fail(f"the trained tokenizer in {out} does not round-trip (vocab {tok.vocab_size})")


def main() -> None:
    """Run both checks and say where the package was found."""
    package = check_imports()
    check_main_job()
    print(f"wheel check: ok ({package})")


if __name__ == "__main__":
    main()
