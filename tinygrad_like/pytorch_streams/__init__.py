"""PyTorch's CPU random streams, reproduced, beside the engine: what makes `tinygrad_like.torch.manual_seed(s)`
give PyTorch's numbers. A learner can skip this folder; the engine's own stream is numpy's (random.py).
- generator.py: `TorchGenerator`, PyTorch's Mersenne Twister, its seeding and state bytes, and its
  transforms (uniform, normal, integers, permutations, bernoulli, exponential, multinomial);
- cephes_float32.py: float32 log and sin/cos as PyTorch's normal fill computes them;
- fma.py: a once-rounded a·b + c in numpy, as PyTorch's compiled kernels compute it.
"""
from tinygrad_like.pytorch_streams.generator import DEFAULT_SEED, TorchGenerator

__all__ = ["DEFAULT_SEED", "TorchGenerator"]
