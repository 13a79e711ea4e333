"""nn: transformer layers, optimizers and checkpoints, built only from tinygrad_like's Tensor ops."""
from nn import init, optim, state
from nn.attention import Attention, KVCache
from nn.block import Block
from nn.dropout import Dropout
from nn.embedding import Embedding
from nn.linear import Linear
from nn.mlp import MLP
from nn.module import HookPoint, Module, ModuleDict
from nn.moe import MoE
from nn.norm import LayerNorm, RMSNorm
from nn.rope import RoPE, apply_rope
