"""einsum: a sum of products named by letters, 'bij,bjk->bik' (a batched matmul), 'i,j->ij' (an outer
product), 'ij->j' (a column sum), composed of the engine's ops, so its gradient is theirs.

The plain version: every operand is laid out over all the equation's letters (the output's first, then
the summed ones): permuted into that order, with a size-1 axis for each letter it lacks. The operands
are multiplied (broadcasting fills the size-1 axes) and the summed letters' axes summed away. That
product holds one number per combination of all letters (b·i·j·k for 'bij,bjk->bik'): exact, and as
large as that. A letter repeated within one operand (a diagonal, 'ii->i') and '...' are refused.
"""
from __future__ import annotations

from tinygrad_like.tensor import Tensor


def _parse(equation: str, operands) -> tuple[list[str], str]:
    equation = equation.replace(" ", "")
    if "." in equation:
        raise NotImplementedError(f"einsum: '...' (broadcast dimensions) is not provided; name every dimension "
                                  f"with a letter (got {equation!r})")
    lhs, arrow, out = equation.partition("->")
    inputs = lhs.split(",")
    if not arrow:  # implicit output: the letters used once, in alphabetical order
        out = "".join(sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: {equation!r} names {len(inputs)} operands, got {len(operands)}")
    for subs, x in zip(inputs, operands):
        if not subs.isalpha() and subs:
            raise ValueError(f"einsum: subscripts are letters, got {subs!r} in {equation!r}")
        if len(subs) != x.ndim:
            raise ValueError(f"einsum: {subs!r} names {len(subs)} dimensions of an operand of shape {x.shape}")
        if len(set(subs)) != len(subs):
            raise NotImplementedError(f"einsum: a letter repeated within one operand ({subs!r}, a diagonal) is not "
                                      "provided; take the diagonal first")
    if len(set(out)) != len(out) or any(c not in lhs for c in out):
        raise ValueError(f"einsum: the output {out!r} must name distinct letters of the inputs ({equation!r})")
    return inputs, out


def einsum(equation: str, *operands: Tensor) -> Tensor:
    """Σ over the letters not in the output of the product of the operands, e.g. einsum('bij,bjk->bik', a, b)
    is a @ b for a (B, I, J) and b (B, J, K). Sizes of a letter must agree or be 1 (broadcast)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = tuple(x if isinstance(x, Tensor) else Tensor(x) for x in operands)
    inputs, out = _parse(equation, operands)
    letters = list(out) + [c for c in dict.fromkeys("".join(inputs)) if c not in out]
    sizes = {}
    for subs, x in zip(inputs, operands):
        for c, n in zip(subs, x.shape):
            if sizes.get(c, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: letter {c!r} has sizes {sizes[c]} and {n} in {equation!r} (shapes "
                                 f"{[x.shape for x in operands]})")
            sizes[c] = max(sizes.get(c, 1), n)
    product = None
    for subs, x in zip(inputs, operands):
        present = [c for c in letters if c in subs]
        x = x.permute(*[subs.index(c) for c in present]) if present != list(subs) else x
        x = x.reshape(*[x.shape[present.index(c)] if c in subs else 1 for c in letters])  # (all letters)
        product = x if product is None else product * x
    summed = tuple(range(len(out), len(letters)))
    return product.sum(summed) if summed else product
