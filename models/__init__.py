"""Models built from tinygrad_like ops: the GPT config (config.py), its arithmetic (arithmetic.py), the GPT
itself (gpt.py), an encoder (encoder.py), the tokenizer and the Hugging Face export."""
from models.config import GPTConfig
from models.encoder import Encoder
from models.gpt import GPT
