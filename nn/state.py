"""Checkpoints: model weights, optimizer state, step, RNG state and extras in one safetensors file.

Layout of the file (safetensors: a JSON header, then raw little-endian arrays; no pickle, so loading
a file cannot run code):
    tensors   model parameters under their state_dict names (`h.0.attn.c_attn.weight`), so the file
              opens in the PyTorch ecosystem; optimizer buffers as `optim.<group>.<param name>.<buffer>`
              (e.g. `optim.0.h.0.attn.c_attn.weight.exp_avg`).
    metadata  (string -> string, values JSON-encoded) "format": "pt" (what Hugging Face loaders expect),
              "tinygrad_like": format version, "step", "extra", "rng" (the library generator's state),
              "optimizer" (class, settings and parameter names per group, step counts),
              "sha256" (digest of every tensor's name and bytes, to catch a corrupted file).

`save` writes atomically (temp file in the same directory, fsync, rename), so a crash mid-save keeps
the previous checkpoint. `load` checks everything before writing anything, so a bad file leaves the
model, the optimizer and the RNG as they were. Together they resume training exactly: same weights,
moments, step counts and random stream as if training had never stopped.
"""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import safetensors.numpy

from tinygrad_like import random as _random
from tinygrad_like.atomic_file import write_atomic

VERSION = "checkpoint-v1"
OPTIM = "optim."


class CheckpointError(ValueError):
    """A checkpoint file that is corrupted or does not fit the model/optimizer it is loaded into."""


# ---------------------------------------------------------------- save

def save(path, model, optimizer=None, step=None, extra=None) -> None:
    """Write `model` (and `optimizer`, `step`, JSON-able `extra`, the RNG state) to the safetensors file `path`."""
    tensors = {}
    for name, array in model.state_dict().items():
        if name.startswith(OPTIM):
            raise ValueError(f"save: parameter name '{name}' clashes with the '{OPTIM}' prefix of optimizer state")
        tensors[name] = np.ascontiguousarray(array)  # safetensors writes wrong values for non-contiguous views
    metadata = {"format": "pt", "tinygrad_like": VERSION, "step": _json("step", step),
                "extra": _json("extra", extra), "rng": _json("rng", _random.get_state())}
    if optimizer is not None:
        settings, buffers = _pack_optimizer(model, optimizer)
        metadata["optimizer"] = _json("optimizer", settings)
        tensors.update(buffers)
    metadata["sha256"] = _digest(tensors)
    write_atomic(path, safetensors.numpy.save(tensors, metadata=metadata))


def _pack_optimizer(model, optimizer) -> tuple[dict, dict]:
    """Optimizer.state_dict() re-keyed by parameter name: (JSON-able settings and scalars, {key: array})."""
    names = {id(p): n for n, p in model.named_parameters()}
    flat = [p for group in optimizer.param_groups for p in group["params"]]
    strangers = [p.shape for p in flat if id(p) not in names]
    if strangers:
        raise ValueError(f"save: the optimizer holds parameters that are not in the model (shapes {strangers})")
    pname = [names[id(p)] for p in flat]
    sd = optimizer.state_dict()
    groups, group_of = [], {}
    for g, group in enumerate(sd["param_groups"]):
        groups.append({**{k: v for k, v in group.items() if k != "params"},
                       "params": [pname[i] for i in group["params"]]})
        group_of.update({i: g for i in group["params"]})
    scalars, buffers = {}, {}
    for i, state in sd["state"].items():
        for key, value in state.items():
            if isinstance(value, np.ndarray):
                buffers[f"{OPTIM}{group_of[i]}.{pname[i]}.{key}"] = np.ascontiguousarray(value)
            else:
                scalars.setdefault(pname[i], {})[key] = value
    return {"type": type(optimizer).__name__, "param_groups": groups, "state": scalars}, buffers


# ---------------------------------------------------------------- load

def load(path, model, optimizer=None) -> dict:
    """Restore `model` (and `optimizer`, and the RNG state) from `path`; return {"step": ..., "extra": ...}.

    Raises FileNotFoundError for a missing file and CheckpointError for a truncated or corrupted file
    or one whose names/shapes/optimizer do not fit; in every case nothing has been changed.
    A plain safetensors file of weights (not written by `save`) loads too, for the model only.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"load: no checkpoint file at {path}")
    with open(path, "rb") as f:
        data = f.read()
    try:
        tensors = safetensors.numpy.load(data)
        metadata = _read_metadata(data)
    except Exception as e:
        raise CheckpointError(f"load: {path} is not a readable safetensors file (truncated or corrupted?): {e}") from e
    if "sha256" in metadata and metadata["sha256"] != _digest(tensors):
        raise CheckpointError(f"load: {path} is corrupted: its tensors do not match the checksum written with them")
    try:
        step, extra, rng = (json.loads(metadata[k]) if k in metadata else None for k in ("step", "extra", "rng"))
    except json.JSONDecodeError as e:
        raise CheckpointError(f"load: {path} has unreadable metadata: {e}") from e

    # 1. check everything
    weights = {k: v for k, v in tensors.items() if not k.startswith(OPTIM)}
    _check_model(path, model, weights)
    optim_state = None
    if optimizer is not None:
        if "optimizer" not in metadata:
            raise CheckpointError(f"load: {path} holds no optimizer state (saved without an optimizer)")
        try:
            optim_state = _unpack_optimizer(path, json.loads(metadata["optimizer"]), tensors, model, optimizer)
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as e:
            raise CheckpointError(f"load: {path} has malformed optimizer metadata ({type(e).__name__}: {e})") from e
        try:
            optimizer._check_state_dict(optim_state)
        except ValueError as e:
            raise CheckpointError(f"load: {path}: {e}") from e
    # 2. write everything (RNG first: it is the only step that can still fail on bad data)
    if rng is not None:
        try:
            _random.set_state(rng)
        except Exception as e:
            raise CheckpointError(f"load: {path} has an unusable RNG state: {e}") from e
    model.load_state_dict(weights)
    if optimizer is not None:
        optimizer.load_state_dict(optim_state)
    return {"step": step, "extra": extra}


def _check_model(path: str, model, weights: dict) -> None:
    params = dict(model.named_parameters())
    missing = [k for k in params if k not in weights]
    unexpected = sorted(k for k in weights if k not in params)
    if missing or unexpected:
        raise CheckpointError(f"load: {path} does not fit {type(model).__name__}: missing {missing}, "
                              f"unexpected {unexpected}")
    for key, p in params.items():
        if weights[key].shape != p.shape:
            raise CheckpointError(f"load: {path}: '{key}' has shape {weights[key].shape} in the file "
                                  f"but {p.shape} in the model")


def _unpack_optimizer(path: str, saved: dict, tensors: dict, model, optimizer) -> dict:
    """The file's optimizer state as an Optimizer.state_dict() (indices) for `optimizer`; checks groups by name."""
    kind = type(optimizer).__name__
    if saved["type"] != kind:
        raise CheckpointError(f"load: {path} holds {saved['type']} state, cannot load it into {kind}")
    names = {id(p): n for n, p in model.named_parameters()}
    current = [[names.get(id(p), f"<not in model, shape {p.shape}>") for p in group["params"]]
               for group in optimizer.param_groups]
    in_file = [group["params"] for group in saved["param_groups"]]
    if in_file != current:
        raise CheckpointError(f"load: {path}: optimizer parameter groups differ; file {in_file}, optimizer {current}")
    index = {n: i for i, n in enumerate(n for group in current for n in group)}
    group_of = {n: g for g, group in enumerate(current) for n in group}
    state = {index[n]: dict(scalars) for n, scalars in saved["state"].items() if n in index}
    for key, array in tensors.items():
        if not key.startswith(OPTIM):
            continue
        g, _, rest = key[len(OPTIM):].partition(".")
        name, _, buffer = rest.rpartition(".")
        if name not in index or str(group_of[name]) != g:
            raise CheckpointError(f"load: {path}: optimizer tensor '{key}' names no parameter of group {g}")
        state.setdefault(index[name], {})[buffer] = array
    groups = [{**{k: v for k, v in group.items() if k != "params"}, "params": [index[n] for n in group["params"]]}
              for group in saved["param_groups"]]
    return {"state": state, "param_groups": groups}


# ---------------------------------------------------------------- helpers

def _read_metadata(data: bytes) -> dict:
    """The `__metadata__` of a safetensors file: 8-byte little-endian header length, then a JSON header."""
    n = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + n]).get("__metadata__") or {}


def _digest(tensors: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(tensors):
        array = np.ascontiguousarray(tensors[name])
        h.update(f"{name}:{array.dtype.str}:{array.shape};".encode())
        h.update(array.tobytes())
    return h.hexdigest()


def _json(what: str, value) -> str:
    def plain(o):  # numpy scalars (e.g. an lr computed with numpy) become Python numbers
        if isinstance(o, np.generic):
            return o.item()
        raise TypeError(f"save: {what} holds a {type(o).__name__}, which is not JSON-serialisable")
    return json.dumps(value, default=plain)
