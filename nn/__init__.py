"""nn: transformer layers, optimizers and checkpoints, built only from tinygrad_like's Tensor ops."""
from nn import init, lr_scheduler, optim, state
from nn.activations import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Flatten,
    Identity,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Unflatten,
)
from nn.attention import Attention, KVCache
from nn.batchnorm import BatchNorm1d
from nn.block import Block
from nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from nn.distance import CosineSimilarity, PairwiseDistance
from nn.dropout import AlphaDropout, Dropout
from nn.embedding import Embedding, EmbeddingBag
from nn.linear import Bilinear, Linear
from nn.losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    CTCLoss,
    GaussianNLLLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    NLLLoss2d,
    PoissonNLLLoss,
    SmoothL1Loss,
)
from nn.margin_losses import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from nn.mlp import MLP
from nn.module import HookPoint, Module
from nn.moe import MoE
from nn.norm import GroupNorm, LayerNorm, RMSNorm
from nn.piecewise import Hardshrink, Hardsigmoid, Hardswish, Hardtanh, PReLU, ReLU6, RReLU, Softshrink, Threshold
from nn.rope import RoPE, apply_rope
