"""Every demo's --help shows each option's default once and never "(default: None)"; a mistake on
a demo's command line is one line on stderr and exit status 2 (demos/_common.py: ArgumentParser)."""
import importlib
import pathlib
import re
import sys

import pytest

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))  # the demos import their helper module `_common` as scripts do

NAMES = sorted(p.stem for p in DEMOS.glob("*.py") if p.stem not in ("_common", "data"))
# Options whose absence means something a default value cannot say; their help says what.
NO_DEFAULT = {"--resume"}


def help_text(name: str, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        importlib.import_module(name).main(["--help"])
    assert e.value.code == 0
    return capsys.readouterr().out


def entries(text: str) -> dict[str, str]:
    """Option -> its whole entry, whitespace collapsed (entries start with '  -' in the options part)."""
    parts = re.split(r"\n(?=  -)", text.split("options:", 1)[1])
    return {part.split()[0].rstrip(","): " ".join(part.split()) for part in parts[1:]}


@pytest.mark.parametrize("name", NAMES)
def test_help_shows_every_default_once(name, capsys):
    text = help_text(name, capsys)
    assert "(default: None)" not in text
    for option, entry in entries(text).items():
        metavar = entry.split()[1]  # "--steps STEPS ...", "--norm {layernorm,rmsnorm} ...", "--fused draw ..."
        takes_value = metavar.isupper() or metavar.startswith("{")
        assert entry.lower().count("default") <= 1, entry
        if takes_value and option not in NO_DEFAULT:
            assert "default" in entry.lower(), entry


@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_flag_is_one_line_and_status_2(name, capsys):
    with pytest.raises(SystemExit) as e:
        importlib.import_module(name).main(["--no-such-flag"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith(f"python demos/{name}.py: error: ") and err.count("\n") == 1, err
    # sample.py first misses its checkpoint
    assert "--no-such-flag" in err or "the following arguments are required" in err


@pytest.mark.parametrize("name, flags, message", [
    ("sort", ["--steps", "0"], "argument --steps: must be >= 1, got 0"),
    ("sort", ["--length", "six"], "argument --length: expected an integer >= 1, got 'six'"),
    ("sort", ["--n-head", "3"], "--n-head (3) must divide --n-embd (64)"),
    ("add", ["--n-head", "5"], "--n-head (5) must divide --n-embd (64)"),
    ("kv_cache", ["--contexts", "16", "0"], "argument --contexts: must be >= 1, got 0"),
    ("kv_cache", ["--n-head", "3"], "--n-head (3) must divide --n-embd (128)"),
    ("moe_router", ["--top-k", "9"], "--top-k (9) must not exceed --n-expert (8)"),
    ("moe_router", ["--n-embd", "30"], "--n-embd (30) must be a multiple of 4"),
    ("why_sqrt_d", ["--sizes", "16", "0"], "argument --sizes: must be >= 1, got 0"),
])
def test_settings_that_cannot_work_fail_before_the_demo_runs(name, flags, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        importlib.import_module(name).main([*flags, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith(f"python demos/{name}.py: error: ") and err.count("\n") == 1, err
    assert message in err and not (tmp_path / "out").exists()
