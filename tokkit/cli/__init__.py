"""The `tokkit` command: one click group; each subcommand is a module of this package, loaded on use."""
import importlib
import signal
import sys
import threading

import click

from tokkit.errors import TokkitError

# name -> module in tokkit.cli that defines a click command called `command`.
# Modules are imported lazily so `tokkit train` never imports torch or dask.
COMMANDS = {
    "train": "train",
    "encode": "encode",
    "decode": "decode",
    "pretrain": "pretrain",
    "bench": "bench",
    "stats": "stats",
    "compare": "compare",
}


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module only when it runs."""

    def list_commands(self, ctx):
        return [name for name, mod in COMMANDS.items() if _available(mod)]

    def get_command(self, ctx, name):
        if name not in COMMANDS or not _available(COMMANDS[name]):
            return None
        return importlib.import_module(f"tokkit.cli.{COMMANDS[name]}").command


def _available(module: str) -> bool:
    return importlib.util.find_spec(f"tokkit.cli.{module}") is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tokkit")
def cli():
    """tokkit: tokenizers for BERT-style pretraining."""


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # SIGTERM stops a run the way Ctrl-C does: temporary outputs are removed


def main(argv=None):
    """Run the CLI: exit 0 on success, 2 on bad input (one line on stderr), 1 on a bug."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        cli.main(args=argv, prog_name="tokkit", standalone_mode=False)
    except TokkitError as exc:
        click.echo(f"tokkit: error: {exc}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("tokkit: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if exc.exit_code in (1, 2) else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("tokkit: interrupted", err=True)
        sys.exit(130)

