"""The `tokkit` command: one click group; each subcommand is a module of this package, loaded on use."""
import functools
import importlib
import importlib.util  # find_spec: `import importlib` alone does not load the submodule
import os
import signal
import sys
import threading

import click

from tokkit._files import check_output_not_input
from tokkit.cli.streams import PIPE_CLOSED_EXIT, PipeClosed, guarded_streams, reserve_closed_descriptors
from tokkit.errors import TokkitError
from tokkit import __version__

# name -> module in tokkit.cli that defines a click command called `command`.
# Modules are imported lazily so `tokkit train` never imports torch or dask.
# Parameters that name files or folders a command reads: its -o/--output may be none of them,
# nor lie inside one, nor hold one (checked before the command does any work).
INPUT_PARAMS = ("corpus", "files", "paths", "tokenizer_dir", "tokenizer_path", "eval_file", "init_dir", "model_dir",
                "train_file")
COMMANDS = {
    "train": "train",
    "encode": "encode",
    "decode": "decode",
    "pretrain": "pretrain",
    "export": "export",
    "finetune": "finetune",
    "evaluate": "evaluate",
    "predict": "predict",
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
        command = importlib.import_module(f"tokkit.cli.{COMMANDS[name]}").command
        for param in command.params:  # `-o ''` names no file or folder, in every command
            if param.name == "output" and param.callback is None:
                param.callback = _not_empty
        if not getattr(command.callback, "_checks_inputs", False):
            command.callback = _output_is_not_an_input(command.callback)
        return command


def _output_is_not_an_input(callback):
    """The command's callback, preceded by the check that its output is not one of its inputs."""

    @functools.wraps(callback)
    def checked(**params):
        inputs = []
        for name in INPUT_PARAMS:
            value = params.get(name)
            values = value if isinstance(value, (tuple, list)) else [value]
            inputs.extend(v for v in values if isinstance(v, (str, os.PathLike)))  # compare's --heldout is a share
        if params.get("output") not in (None, "", "-"):
            check_output_not_input(params["output"], inputs)
        return callback(**params)

    checked._checks_inputs = True
    return checked


def _not_empty(ctx, param, value):
    if value is not None and not str(value).strip():
        raise click.BadParameter("is empty; give a path", ctx=ctx, param=param)
    return value


def _available(module: str) -> bool:
    return importlib.util.find_spec(f"tokkit.cli.{module}") is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="tokkit")
def cli():
    """tokkit: tokenizers for BERT-style pretraining."""


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # SIGTERM stops a run the way Ctrl-C does: temporary outputs are removed


# click >= 8.2 shows the help for a bare `tokkit` through this usage error.
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def main(argv=None):
    """Run the CLI: exit 0 on success, 2 on bad input (one line on stderr), 1 on a bug.

    Every usage error (unknown option, bad value, missing argument) and every TokkitError is one
    line, `tokkit: error: ...`; `--help` and a bare `tokkit` print the help as click writes it.
    SIGTERM stops a run as Ctrl-C does (exit 130, temporary outputs removed). A failed write to
    stdout is one error line too, except a closed pipe, which ends the run silently (exit 141;
    see tokkit.cli.streams).
    """
    reserve_closed_descriptors()
    # The handler is the command's own: restored on return, so a program (or test) that calls
    # main() in-process keeps its SIGTERM behaviour, and processes it forks later are not affected.
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if in_main_thread else None
    try:
        try:
            with guarded_streams():
                cli.main(args=argv, prog_name="tokkit", standalone_mode=False)
        except PipeClosed:
            sys.exit(PIPE_CLOSED_EXIT)
        except TokkitError as exc:
            error_line(str(exc))
            sys.exit(2)
        except MemoryError as exc:  # one outside the compiled code (an OutOfMemory is a TokkitError)
            error_line(f"out of memory ({exc})" if str(exc) else "out of memory")
            sys.exit(2)
        except click.exceptions.Abort:
            _say("tokkit: interrupted")
            sys.exit(130)
        except _NO_ARGS_IS_HELP as exc:
            exc.show()  # the help text, not an error
            sys.exit(2)
        except click.UsageError as exc:
            hint = ""
            if exc.ctx is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            error_line(" ".join(exc.format_message().split()) + hint)
            sys.exit(2)
        except click.ClickException as exc:
            error_line(" ".join(exc.format_message().split()))
            sys.exit(2 if exc.exit_code in (1, 2) else exc.exit_code)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            _say("tokkit: interrupted")
            sys.exit(130)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# What str.splitlines() breaks at; an error message shows these escaped so it stays one line.
_BREAKS = {ord(c): c.encode("unicode_escape").decode("ascii")
           for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def error_line(message: str) -> None:
    """Write `message` to stderr as the one line `tokkit: error: ...` (line breaks in it escaped)."""
    _say(f"tokkit: error: {message.strip().translate(_BREAKS)}")


def _say(line: str) -> None:
    """One line on stderr; a stderr that cannot be written (closed, full) leaves only the exit code."""
    try:
        click.echo(line, err=True)
    except OSError:
        pass
