"""demos/explore.py: one self-contained page per checkpoint, its numbers checked against Python, and
the page driven in headless Chromium (zero network requests, rows summing to 1, the temperature
slider, the head selector)."""
import json
import pathlib
import re
import sys

import numpy as np
import pytest

from browser import headless_chrome
from models.gpt import GPT, GPTConfig
from models.lens import logit_lens
from models.tokenizer import CharTokenizer
from nn import state as checkpoint
from tinygrad_like import Tensor

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))
import explore  # noqa: E402

TEXT = "def main():\n    return 42\n"
SHAPES = {
    "gpt2": dict(),
    "llama": dict(pos="rope", norm="rmsnorm", mlp="swiglu", n_kv_head=2, bias=False, tie_weights=False),
    "mixtral": dict(pos="rope", norm="rmsnorm", mlp="swiglu", n_kv_head=1, bias=False, n_expert=4, top_k=2,
                    tie_weights=False),
}


def train_gpt_folder(path: pathlib.Path, shape: str) -> GPT:
    """A folder laid out as demos/train_gpt.py writes it: ckpt.safetensors, config.json, tokenizer.json."""
    tok = CharTokenizer.from_text(TEXT)
    Tensor.manual_seed(5)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=24, n_layer=2, n_head=4, n_embd=16, **SHAPES[shape]))
    for k, p in enumerate(model.parameters()):  # weights far from init, so the pattern and the odds are not uniform
        p.data[...] += np.random.default_rng(k).normal(0, 0.3, p.shape).astype(p.dtype)
    path.mkdir(parents=True)
    checkpoint.save(path / "ckpt.safetensors", model)
    (path / "config.json").write_text(json.dumps({"model": model.config.to_dict(), "settings": {}}))
    tok.save(path / "tokenizer.json")
    return model


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("explore")
    out = {}
    for shape in SHAPES:
        model = train_gpt_folder(root / shape, shape)
        page = explore.main([str(root / shape), "--prompt", "def ma", "--new-tokens", "6",
                             "--out", str(root / f"{shape}.html")])
        out[shape] = (model, page)
    hf = root / "hf"
    out["gpt2"][0].save_pretrained(hf, tokenizer=CharTokenizer.from_text(TEXT))
    page = explore.main([str(hf), "--ids", "3 1 4 1 5", "--new-tokens", "3", "--temperature", "1.0",
                         "--out", str(root / "pretrained.html")])
    out["pretrained"] = (GPT.from_pretrained(hf), page)
    return out


def data_of(page: pathlib.Path) -> dict:
    text = page.read_text()
    return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))


def floats(b64: str, shape) -> np.ndarray:
    import base64
    return np.frombuffer(base64.b64decode(b64), dtype="<f4").reshape(shape)


@pytest.mark.parametrize("name", [*SHAPES, "pretrained"])
def test_page_is_self_contained_and_its_numbers_are_a_forward_pass(pages, name):
    model, page = pages[name]
    text = page.read_text()
    assert not re.search(r"https?:|//cdn|<link|src=", text)  # nothing can be fetched
    d = data_of(page)
    ids = np.array(d["ids"])[None]
    L, H, T = d["n_layer"], d["n_head"], d["T"]
    assert (L, H, d["n_kv_head"]) == (2, 4, model.config.kv_heads)
    # attention against the engine's return_weights path (not the cache that wrote the page)
    attention = floats(d["attention"], (L, H, T, T))
    for layer, maps in enumerate(model.attention_maps(ids)):
        np.testing.assert_allclose(attention[layer], maps[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(attention.sum(-1), 1, atol=1e-6)
    logits = model(ids)[0].numpy()[0]
    np.testing.assert_allclose(floats(d["logits"], (T, d["vocab_size"])), logits, rtol=1e-6, atol=1e-6)
    lens = logit_lens(model, ids, np.append(ids[0, 1:], -1)[None])
    np.testing.assert_array_equal(d["lens"]["top"], lens.top[:, 0])
    np.testing.assert_allclose(d["lens"]["probs"], lens.probs[:, 0], atol=1e-6)
    assert d["lens"]["top"][-1] == np.argsort(-logits, axis=-1, kind="stable")[:, :5].tolist()
    if name == "mixtral":
        E = d["experts"]
        assert np.array(E["chosen"]).shape == (L, T, 2)
        np.testing.assert_allclose(np.array(E["weights"]).sum(-1), 1, atol=1e-6)
    else:
        assert d["experts"] is None


def test_prompt_and_continuation(pages):
    d = data_of(pages["gpt2"][1])
    tok = CharTokenizer.from_text(TEXT)
    assert d["ids"][:d["n_prompt"]] == tok.encode("def ma") and d["T"] == 12
    greedy = pages["gpt2"][0].generate(np.array([tok.encode("def ma")]), 6, temperature=0)[0]
    assert d["ids"] == greedy.tolist()
    assert d["names"][str(tok.encode(" ")[0])] == "␣"
    assert data_of(pages["pretrained"][1])["ids"][:5] == [3, 1, 4, 1, 5]


def test_usage_errors(tmp_path, capsys):
    with pytest.raises(SystemExit):
        explore.main([str(tmp_path / "missing")])
    assert "does not exist" in capsys.readouterr().err
    folder = tmp_path / "m"
    train_gpt_folder(folder, "gpt2")
    with pytest.raises(SystemExit):
        explore.main([str(folder), "--ids", "1 2 999"])
    assert "--ids must be" in capsys.readouterr().err


# ---------------------------------------------------------------- in the browser

@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    d = headless_chrome(tmp_path_factory.mktemp("profile"))
    yield d
    d.quit()


def cells(driver) -> np.ndarray:
    """The heat map as the page shows it: (T, T) from the cells' data-v."""
    values = driver.execute_script("return [...document.querySelectorAll('#attn-map rect.cell')]"
                                   ".map(r => [+r.dataset.i, +r.dataset.j, +r.dataset.v])")
    T = int(round(len(values) ** 0.5))
    out = np.zeros((T, T))
    for i, j, v in values:
        out[int(i), int(j)] = v
    return out


def select(driver, element_id: str, value: str, event: str = "change"):
    driver.execute_script(f"const e = document.getElementById('{element_id}'); e.value = arguments[0]; "
                          f"e.dispatchEvent(new Event('{event}'))", value)


@pytest.mark.parametrize("name", [*SHAPES, "pretrained"])
def test_browser_heat_map_head_selector_and_temperature(pages, driver, name):
    model, page = pages[name]
    driver.get(page.resolve().as_uri())
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert driver.execute_script("return window.EXPLORE !== undefined")
    d = data_of(page)
    ids = np.array(d["ids"])[None]
    maps = model.attention_maps(ids)

    shown = cells(driver)                                            # layer 0, head 0
    np.testing.assert_allclose(shown.sum(-1), 1, atol=1e-6)
    np.testing.assert_allclose(shown, maps[0][0, 0], atol=1e-6)
    select(driver, "head", "2")
    other = cells(driver)
    assert np.abs(other - shown).max() > 1e-3                        # another head, another map
    np.testing.assert_allclose(other, maps[0][0, 2], atol=1e-6)
    select(driver, "layer", "1")
    select(driver, "head", "avg")
    np.testing.assert_allclose(cells(driver), maps[1][0].mean(0), atol=1e-6)
    np.testing.assert_allclose(cells(driver).sum(-1), 1, atol=1e-6)

    logits = model(ids)[0].numpy()[0].astype(np.float32).astype(np.float64)
    for pos, temp in ((d["T"] - 1, "1"), (2, "0.5"), (2, "2.5")):
        select(driver, "pos", str(pos))
        select(driver, "temp", temp, "input")
        rows = driver.execute_script(
            "return [...document.querySelectorAll('#dist tr.dist-row')].map(r => [+r.dataset.id, +r.dataset.p])")
        z = logits[pos] / float(temp)
        p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        got_ids, got_p = np.array(rows).T
        np.testing.assert_array_equal(got_ids, np.argsort(-p, kind="stable")[:len(rows)])
        np.testing.assert_allclose(got_p, p[got_ids.astype(int)], rtol=1e-6, atol=1e-9)
    assert driver.find_element("id", "temp-value").text == "T = 2.50"

    lens = driver.execute_script("return [...document.querySelectorAll('#lens td.lens-cell')]"
                                 ".map(c => [+c.dataset.l, +c.dataset.t, +c.dataset.p])")
    assert len(lens) == (d["n_layer"] + 1) * d["T"]
    expected = np.array(d["lens"]["probs"])[..., 0]
    for layer, t, prob in lens:
        assert abs(prob - expected[int(layer), int(t)]) < 1e-6
    n_expert_cells = driver.execute_script("return document.querySelectorAll('#experts td.expert-cell').length")
    assert n_expert_cells == (d["n_layer"] * d["T"] if name == "mixtral" else 0)
    # tied embeddings: the page says why the embed row predicts each token itself; untied, it says nothing of it
    why = driver.execute_script("const e = document.getElementById('lens-embed'); return e ? e.textContent : null")
    if d["config"]["tie_weights"]:
        assert why.startswith("Why the embed row predicts each token itself") and "tied" in why
    else:
        assert why is None
