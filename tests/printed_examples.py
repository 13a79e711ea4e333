"""Shared by test_readme.py and test_docs.py: run a Markdown page's python examples and compare what
they print with their `# prints ...` comments."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path


def python_blocks(page: Path) -> list[str]:
    """The ```python blocks of a page that promise an output."""
    return [code for code in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S) if "# prints " in code]


def promised_output(code: str) -> str:
    """The text after each '# prints', with the comment lines right below it as continuation."""
    lines, capturing = [], False
    for line in code.splitlines():
        if "# prints " in line:
            lines.append(line.split("# prints ", 1)[1])
            capturing = True
        elif capturing and line.strip().startswith("#"):
            lines.append(line.strip()[1:].strip())
        else:
            capturing = False
    return "\n".join(lines)


def check_prints(code: str, label: str) -> None:
    """Run `code` and assert it printed what its comments promise (white space folded)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, label, "exec"), {"__name__": "__example__"})
    normalise = lambda s: re.sub(r"\s+", " ", s).strip()  # noqa: E731
    assert normalise(out.getvalue()) == normalise(promised_output(code))
