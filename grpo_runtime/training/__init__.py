"""The numbers of training: the loss (pure functions of tensors), advantages, completion log-probs, one micro-step
and optimizer step, the optimizer, the prompt sampler and building a generation batch."""
