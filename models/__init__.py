"""Models built from tinygrad_like ops: the GPT config, its arithmetic, and (later) the model itself."""
