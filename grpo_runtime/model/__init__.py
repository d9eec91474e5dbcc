"""Loading the policy, the reference model and the tokenizer (LoRA, quantisation, checkpointing, attention)."""
