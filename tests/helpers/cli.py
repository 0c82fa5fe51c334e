"""Run tokkit's CLI in-process."""
from tokkit.cli import main


def run_cli(args) -> int:
    """tokkit's CLI in-process; its exit code (main returns normally on success)."""
    try:
        main(args)
    except SystemExit as exc:
        return exc.code or 0
    return 0
