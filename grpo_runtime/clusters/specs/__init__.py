"""The specs `grpo launch --emit` writes, one module a kind of target: what every target shares (`job.py`: the
layout, the script each node runs, the volume), SkyPilot and dstack tasks (`cloud.py`), Kubernetes objects
(`kubernetes.py`: Kubeflow's PyTorchJob and TrainJob, a JobSet, an indexed Job)."""
