"""Coverage-guided fuzzing of the YAML loader and the whole check with atheris (libFuzzer for Python).

    python fuzz/fuzz_validate.py -max_total_time=300            # check_text (loader + fields + rules + fixes)
    python fuzz/fuzz_validate.py --target=loader -max_total_time=300   # load_yaml only: many more inputs/s
    python fuzz/fuzz_validate.py CRASH_FILE                     # replay one input

Every input must give a structured result within -timeout seconds (default 10): a CheckResult whose diagnostics
follow interface.md §3 and render in every CLI format (tests/hardening/invariants.py). Anything else is a crash,
written by libFuzzer to fuzz/artifacts/ (git-ignored); make each one a regression test in tests/hardening/.

The seed corpus is copied at run time from ../shared/grpo-corpus into a temporary folder (nothing is committed);
pass your own corpus folders after the options to use them instead. Other libFuzzer options pass through.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "grpo-corpus"
ARTIFACTS = ROOT / "fuzz" / "artifacts"
MAX_INPUT = 64 * 1024  # libFuzzer's -max_len; the resource tests cover the large sizes
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["grpo_schema"]):
    # Modules check_text imports lazily are imported here too, so that their code is instrumented.
    import grpo_schema.commands.explain  # noqa: F401
    import grpo_schema.engine.fixes  # noqa: F401
    import grpo_schema.render.machine  # noqa: F401
    import grpo_schema.render.sarif  # noqa: F401
    import grpo_schema.render.text  # noqa: F401
    from grpo_schema import check_text
    from grpo_schema.engine.compiled import compiled
    from grpo_schema.engine.loader import load_yaml
from tests.hardening.invariants import assert_diagnostic_shape, assert_structured  # noqa: E402


def check_one(data: bytes) -> None:
    assert_structured(check_text(data, path="fuzz.yaml"))


def load_one(data: bytes) -> None:
    loaded = load_yaml(data)
    for diagnostic in loaded.diagnostics:
        assert_diagnostic_shape(diagnostic.to_dict())
    assert loaded.ok or loaded.data is None


TARGETS = {"check": check_one, "loader": load_one}


def seed_folder() -> str:
    """A temporary copy of the corpus files (libFuzzer adds what it finds to its first corpus folder)."""
    folder = tempfile.mkdtemp(prefix="grpo-fuzz-corpus-")
    for path in sorted(SEEDS.glob("*/*.yaml")):
        shutil.copy(path, Path(folder) / f"{path.parent.name}-{path.name}")
    return folder


YAML_TOKENS = [
    ": ",
    "- ",
    "? ",
    "&a ",
    "*a",
    "<<: ",
    "!!str ",
    "!!int ",
    "!!binary ",
    "{",
    "}",
    "[",
    "]",
    "---",
    "...",
    "|",
    ">-",
    "'",
    '"',
    "#",
    "\t",
    "%YAML 1.1",
    ".nan",
    ".inf",
    "~",
    "yes",
    "no",
    "0x",
    "0o",
    "1e-6",
    "2001-02-03",
    "env:",
    "LD_PRELOAD",
    "HF_TOKEN",
    "datasets:",
    "path:",
    "open-r1",
]


def _escape(word: str) -> str:
    """libFuzzer dictionary escaping: printable ASCII as is, everything else as \\xHH."""
    return "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\x{b:02x}" for b in word.encode())


def dictionary() -> str:
    """A libFuzzer dictionary: YAML syntax and every field name, so mutations form plausible configs."""
    words = YAML_TOKENS + sorted(compiled("config").fields) + sorted(compiled("launch").fields)
    path = Path(tempfile.mkdtemp(prefix="grpo-fuzz-dict-")) / "grpo.dict"
    path.write_text("".join(f'"{_escape(word)}"\n' for word in words))
    return str(path)


def libfuzzer_args(argv: list[str]) -> tuple[list[str], str]:
    """Our --target option out, libFuzzer defaults in, a seed corpus unless folders or files were given."""
    target = next((a.split("=", 1)[1] for a in argv if a.startswith("--target=")), "check")
    args = [a for a in argv if not a.startswith("--target=")]
    given = {a.split("=", 1)[0] for a in args[1:] if a.startswith("-")}
    ARTIFACTS.mkdir(exist_ok=True)
    defaults = {
        "-timeout": "10",
        "-max_len": str(MAX_INPUT),
        "-rss_limit_mb": "2048",
        "-artifact_prefix": f"{ARTIFACTS}{os.sep}",
        "-dict": "",
    }
    if "-dict" not in given:
        defaults["-dict"] = dictionary()
    args += [f"{k}={v}" for k, v in defaults.items() if k not in given]
    if not any(not a.startswith("-") for a in args[1:]):
        args.append(seed_folder())
    return args, target


def main() -> None:
    args, target = libfuzzer_args(sys.argv)
    if target not in TARGETS:
        sys.exit(f"--target must be one of {', '.join(TARGETS)}")
    atheris.Setup(args, TARGETS[target])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
