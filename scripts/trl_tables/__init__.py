"""The pieces of scripts/trl_releases.py, one idea each (nothing here imports trl or transformers: their wheels'
source is read with `ast`).

    releases      which TRL releases get a table, each paired with the transformers release of its date
    wheels        the wheel cache: downloads, and the source files read out of a wheel
    fields        the dataclass fields of a parser, as HfArgumentParser sees them (annotations, defaults)
    surface       one release's `trl grpo --config` surface: its dataclasses, front end and fields
    trainer       what a release's trainer accepts (choices), its reward names and deprecations
    deprecations  the keys a release warns are deprecated, with the key to use instead
    batch         the batch meaning: what per_device_train_batch_size counts and the divisibility checks
    requirements  what a release's wheel METADATA declares
    output        the files written: every table, the index, requirements.json and trainer.json
"""
