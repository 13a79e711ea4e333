"""The README's examples run and print the numbers their comments promise."""
import re
from pathlib import Path

import pytest

import printed_examples

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLES = printed_examples.python_blocks(README)


def test_readme_has_examples_that_promise_output():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_prints_what_it_promises(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    printed_examples.check_prints(EXAMPLES[index], f"README block {index}")


def test_the_readme_is_a_front_page():
    """What it is, two commands, thirty seconds, the demos, where to go next, a summary of the performance:
    the full tables and the file map live in docs/ (a README of 695 lines buried the first steps)."""
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    for heading in ("## Thirty seconds", "## Demos", "## Where to go next", "## Performance"):
        assert f"\n{heading}\n" in text, heading


def test_every_link_and_demo_command_in_the_readme_points_at_a_file():
    text = README.read_text()
    root = README.parent
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"^[a-z]+:", t)]
    assert targets and [t for t in targets if not (root / t.split("#")[0]).exists()] == []
    demos = re.findall(r"python (demos/\w+\.py)", text)
    assert len(set(demos)) >= 12 and [d for d in demos if not (root / d).is_file()] == []
    # each demo row of the table says how long it took
    rows = [r for r in text.splitlines() if r.startswith("| `python demos/")]
    assert rows and all(re.match(r"\| `[^|]+` \| [^|]*\d[^|]* \| ", r) for r in rows), rows
