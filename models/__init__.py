"""Models built from tinygrad_like ops: the GPT config, its arithmetic, and (later) the model itself."""
from models.config import GPTConfig
from models.encoder import Encoder
from models.gpt import GPT
