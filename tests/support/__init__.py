"""What the test folders share, in one place: the tiny model, the small-run config, the offline child environment,
free ports and waiting, the `grpo` command run in process (or as a process), the live service and one Chromium.

Import helpers from here, never from another folder's test module or conftest; the fixtures (`tiny_model_dir`,
`browser`) are registered for every folder by tests/conftest.py.
"""
