"""The README's examples run and print the numbers their comments promise."""
import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def promised_output(code: str) -> str:
    """The text after '# prints', continuation lines included (comment lines right below it)."""
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


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_readme_example_prints_what_it_promises(index, tmp_path, monkeypatch):
    code = python_blocks()[index]
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README block {index}", "exec"), {})
    normalise = lambda s: re.sub(r"\s+", " ", s).strip()
    assert normalise(out.getvalue()) == normalise(promised_output(code))
    assert promised_output(code), "each README example states what it prints"
