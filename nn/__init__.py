"""nn: transformer layers, optimizers and checkpoints, built only from tinygrad_like's Tensor ops."""
from nn.module import Module, ModuleDict
from nn.linear import Linear
from nn.attention import Attention, KVCache
from nn.rope import RoPE, apply_rope
from nn.embedding import Embedding
from nn.norm import LayerNorm, RMSNorm
from nn.dropout import Dropout
from nn.mlp import MLP
from nn.moe import MoE
from nn.block import Block
from nn import init
from nn import optim, state
