"""How long the engine is, counted the same way every time: docs/engine.md quotes these figures, and
tests/test_docs.py checks them against this count.

    python benchmarks/line_counts.py          # prints the figures
    python benchmarks/line_counts.py --docs   # and writes them into docs/engine.md

Code lines are the lines that hold a token of code: blank lines, comments and docstrings (a string
standing alone as a statement) do not count. Whole lines count every line of the file.
"""
from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tinygrad_like"
READING_ORDER = ("function.py", "ops.py", "tensor.py", "autograd.py", "composites.py")


def docstring_lines(source: str) -> set[int]:
    """Line numbers covered by strings that stand alone as statements (docstrings and the like)."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def code_lines(path: Path) -> int:
    """Lines of `path` that hold code: not blank, not only a comment, not part of a docstring."""
    source = path.read_text()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in skip:
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines - docstring_lines(source))


def whole_lines(paths) -> int:
    return sum(len(p.read_text().splitlines()) for p in paths)


def figures() -> dict:
    core = [p for p in PACKAGE.glob("*.py")]
    dialect = sorted((PACKAGE / "dialect").glob("*.py"))
    fast = sorted((PACKAGE / "fast").rglob("*.py"))
    return {
        "reading order, code lines": sum(code_lines(PACKAGE / f) for f in READING_ORDER),
        "reading order, lines": whole_lines(PACKAGE / f for f in READING_ORDER),
        "core, lines": whole_lines(core),
        "dialect, lines": whole_lines(dialect),
        "fast, lines of Python": whole_lines(fast),
        "fast, lines of C": whole_lines(sorted((PACKAGE / "fast").rglob("*.[ch]"))),
    }


def write_docs(path: Path = ROOT / "docs" / "engine.md") -> None:
    """Put the figures into docs/engine.md's opening paragraphs (the phrases tests/test_reading.py checks)."""
    f = figures()
    text = path.read_text()
    for pattern, value in ((r"(The \*teaching core\* \()[\d,]+( lines)", f["core, lines"]),
                           (r"(\(`tinygrad_like/fast/`, )[\d,]+( lines of Python)", f["fast, lines of Python"]),
                           (r"(lines of Python and )[\d,]+( of C\))", f["fast, lines of C"]),
                           (r"(\(`tinygrad_like/dialect/`, )[\d,]+( lines\))", f["dialect, lines"]),
                           (r"(Five files hold the whole idea, )[\d,]+( lines of code)",
                            f["reading order, code lines"])):
        text = re.sub(pattern, lambda m, v=value: f"{m.group(1)}{v:,}{m.group(2)}", text)
    path.write_text(text)


if __name__ == "__main__":
    if "--docs" in sys.argv:
        write_docs()
    for name, value in figures().items():
        print(f"{name:28s} {value:6,d}")
    for f in READING_ORDER:
        print(f"  {f:26s} {code_lines(PACKAGE / f):6,d} of {whole_lines([PACKAGE / f]):,d}")
