"""Models built from tinygrad_like ops: the GPT config, its arithmetic, the model itself,
the encoder, tokenizers and the Hugging Face layouts."""
from models.config import GPTConfig
from models.encoder import Encoder
from models.gpt import GPT
