"""What every demo shares: its command line (each option's default shown once in --help, a mistake
reported in one line with exit status 2), its `--out` folder, saving figures (matplotlib, Agg
backend) and graphs (draw_graph(...).render_to), and printing where each file went.

A demo runs as `python demos/NAME.py [--out DIR]`; Python then puts demos/ (not the repository root)
on sys.path, so importing this module first also makes the library importable when it has not been
installed with `pip install -e .`.
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
if importlib.util.find_spec("tinygrad_like") is None:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # draw into files only: works on servers and in CI, never opens a window
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the demos)


class UsageError(Exception):
    """A mistake on the command line found after parsing (a missing file, flags that do not fit
    together); main() reports it through ArgumentParser.error, like argparse's own mistakes."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, except that a mistake is one line on stderr and exit status 2: the usage
    block of a demo with thirty flags would bury the one line that matters (--help still shows it)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


class HelpFormatter(argparse.HelpFormatter):
    """Ends each option's help with its default, once: "(default: 64)", also for options without a
    help text. Nothing is added when the help already names its default, when the default is None
    (the help says what None means) and for switches (--fused), whose default is their absence."""

    def _format_action(self, action):
        if action.option_strings and action.nargs != 0 and action.default not in (None, argparse.SUPPRESS) \
                and "default" not in (action.help or "").lower():
            shown = _shown(action.default).replace("%", "%%")  # help text is %-formatted by argparse
            action = copy.copy(action)
            action.help = f"{action.help} (default: {shown})" if action.help else f"(default: {shown})"
        return super()._format_action(action)


def _shown(default) -> str:
    """A default as the user would type it: lists space-separated, odd strings quoted."""
    if isinstance(default, (list, tuple)):
        return " ".join(map(str, default))
    if isinstance(default, str) and (not default or not default.isprintable() or " " in default):
        return repr(default)
    return str(default)


def positive(text: str) -> int:
    """argparse type of counts and sizes: an integer >= 1 (0 steps or 0 heads fail later, less clearly)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def check_heads(p: argparse.ArgumentParser, n_embd: int, n_head: int, embd_flag: str = "--n-embd",
                head_flag: str = "--n-head"):
    """p.error unless the heads split the width evenly (each head gets n_embd / n_head dimensions)."""
    if n_embd % n_head:
        p.error(f"{head_flag} ({n_head}) must divide {embd_flag} ({n_embd}): each head gets n_embd / n_head dimensions")


def parser(name: str, description: str, out: bool = True) -> ArgumentParser:
    """An argument parser with the `--out` option every demo has (default out/NAME/)."""
    p = ArgumentParser(prog=f"python demos/{name}.py", description=description, formatter_class=HelpFormatter)
    if out:
        p.add_argument("--out", metavar="DIR", default=f"out/{name}",
                       help="folder for the pictures (created if missing)")
    return p


def out_dir(path) -> pathlib.Path:
    path = pathlib.Path(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_figure(fig, path) -> pathlib.Path:
    """Save a matplotlib figure as PNG, close it (so long runs do not pile up figures), say where."""
    path = pathlib.Path(path)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"  wrote {path}")
    return path


def named(t, name: str):
    """Give a tensor a name (returned, for chaining), so graph pictures label it."""
    t.name = name
    return t


def count_nodes(graph) -> int:
    """How many tensors/ops a draw_graph picture shows (its DOT node statements, not edges)."""
    return len(re.findall(r"^\s*n\d+ \[", graph.source, flags=re.MULTILINE))


def save_graph(graph, path) -> pathlib.Path:
    """Render a draw_graph result (SVG needs no system Graphviz), say where and how many nodes."""
    written = graph.render_to(path)
    print(f"  wrote {written}  ({count_nodes(graph)} nodes)")
    return written
