"""What the training recipe (`grpo_runtime/train.py`) calls around its loop, one module an idea: starting a run's
outputs (`start.py`), the next generation batch (`generation.py`), what is logged (`logs.py`), when the loop logs,
evaluates and saves after a step (`cadence.py`), and checkpoints, the best model and the final save (`saving.py`)."""
