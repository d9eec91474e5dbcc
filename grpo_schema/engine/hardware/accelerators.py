"""Declared hardware: a catalogue of accelerators and the `--hardware` spec that names a cluster.

A spec is `[NODES x] [GPUS x] ACCELERATOR` or a plain memory size:
`8xH100-80GB`, `2x8xA100-40GB` (2 nodes of 8), `H200`, `8x80GB`, `24GiB`, or a node of the catalogue
(`p5.48xlarge`, `2xp4d.24xlarge`, `colab-t4`), which also gives the node's host RAM. Sizes in GB mean what the vendors
print on the box (80GB is an 80 GiB part: an H100 has 80 GiB usable minus the driver's share, which the
framework allowance covers). Nothing here probes the local machine.

Peak FLOP/s are the vendors' dense bf16 tensor-core figures (no sparsity). Users extend the catalogue with
`register_accelerator` or with `memory_gib` / `peak_tflops` in a config's `hardware:` section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

GIB = 1024**3


@dataclass(frozen=True)
class Accelerator:
    name: str
    memory_gib: float
    peak_tflops: float | None  # dense bf16; None when unknown (no time estimate then)
    note: str = ""
    bandwidth_tbs: float | None = None  # HBM/GDDR bandwidth, TB/s (decoding is bound by it)


CATALOGUE: dict[str, Accelerator] = {}


def register_accelerator(
    name: str, memory_gib: float, peak_tflops: float | None, note: str = "", bandwidth_tbs: float | None = None
) -> Accelerator:
    """Add (or replace) an accelerator; `name` is matched case-insensitively, e.g. 'H100-80GB' or 'MI300X'."""
    accelerator = Accelerator(
        name,
        float(memory_gib),
        None if peak_tflops is None else float(peak_tflops),
        note,
        None if bandwidth_tbs is None else float(bandwidth_tbs),
    )
    CATALOGUE[name.upper()] = accelerator
    return accelerator


for _name, _memory, _tflops, _bw, _note in (
    ("H100-80GB", 80, 989.4, 3.35, "SXM; the PCIe card peaks at 756"),
    ("H100-PCIE-80GB", 80, 756.0, 2.0, ""),
    ("H100-NVL-94GB", 94, 835.0, 3.9, ""),
    ("H200-141GB", 141, 989.4, 4.8, ""),
    ("H20-96GB", 96, 148.0, 4.0, ""),
    ("GH200-96GB", 96, 989.4, 4.0, ""),
    ("B200-180GB", 180, 2250.0, 8.0, ""),
    ("A100-80GB", 80, 312.0, 2.039, ""),
    ("A100-40GB", 40, 312.0, 1.555, ""),
    ("A800-80GB", 80, 312.0, 2.039, ""),
    ("A40-48GB", 48, 149.7, 0.696, ""),
    ("A10G-24GB", 24, 70.0, 0.6, "AWS g5 (125 TFLOP/s is the A10's sparse-free peak at a higher clock)"),
    ("A10-24GB", 24, 125.0, 0.6, ""),
    ("L40S-48GB", 48, 362.0, 0.864, ""),
    ("L4-24GB", 24, 121.0, 0.3, ""),
    ("A6000-48GB", 48, 154.8, 0.768, "RTX A6000"),
    ("RTX6000-ADA-48GB", 48, 364.2, 0.96, ""),
    ("RTX-PRO-6000-96GB", 96, 503.8, 1.79, "RTX PRO 6000 Blackwell"),
    ("RTX4090-24GB", 24, 165.2, 1.008, ""),
    ("RTX3090-24GB", 24, 71.0, 0.936, ""),
    ("V100-32GB", 32, 125.0, 0.9, "no bf16: fp16 peak"),
    ("V100-16GB", 16, 125.0, 0.9, "no bf16: fp16 peak"),
    ("T4-16GB", 16, 65.0, 0.32, "no bf16: fp16 peak"),
    ("MI300X-192GB", 192, 1307.4, 5.3, ""),
    ("MI250X-128GB", 128, 383.0, 3.2, "both dies of one package"),
    ("GAUDI2-96GB", 96, 432.0, 2.45, ""),
):
    register_accelerator(_name, _memory, _tflops, _note, _bw)

# A bare family name means its usual (largest common) memory size.
ALIASES = {
    "H100": "H100-80GB",
    "H200": "H200-141GB",
    "B200": "B200-180GB",
    "A100": "A100-80GB",
    "A800": "A800-80GB",
    "L40S": "L40S-48GB",
    "L4": "L4-24GB",
    "A10G": "A10G-24GB",
    "A10": "A10-24GB",
    "H20": "H20-96GB",
    "GH200": "GH200-96GB",
    "MI300X": "MI300X-192GB",
    "MI250X": "MI250X-128GB",
    "A6000": "A6000-48GB",
    "RTX4090": "RTX4090-24GB",
    "4090": "RTX4090-24GB",
    "RTX3090": "RTX3090-24GB",
    "V100": "V100-32GB",
    "T4": "T4-16GB",
    "GAUDI2": "GAUDI2-96GB",
    "H100-SXM": "H100-80GB",
    "H100-PCIE": "H100-PCIE-80GB",
    "H100-NVL": "H100-NVL-94GB",
    "A40": "A40-48GB",
    "RTX6000-ADA": "RTX6000-ADA-48GB",
    "RTX-PRO-6000": "RTX-PRO-6000-96GB",
}


# Common nodes: (GPUs per node, accelerator, host RAM GiB), from each provider's instance tables. A spec may name
# one ("p5.48xlarge", "2xp5.48xlarge" for two of them); the host RAM gives `grpo plan` a host-RAM verdict.
NODES: dict[str, tuple[int, str, float]] = {
    "P5.48XLARGE": (8, "H100-80GB", 2048),
    "P5E.48XLARGE": (8, "H200-141GB", 2048),
    "P4D.24XLARGE": (8, "A100-40GB", 1152),
    "P4DE.24XLARGE": (8, "A100-80GB", 1152),
    "G5.XLARGE": (1, "A10G-24GB", 16),
    "G5.2XLARGE": (1, "A10G-24GB", 32),
    "G5.12XLARGE": (4, "A10G-24GB", 192),
    "G5.48XLARGE": (8, "A10G-24GB", 768),
    "G6.XLARGE": (1, "L4-24GB", 16),
    "G6E.XLARGE": (1, "L40S-48GB", 32),
    "G4DN.XLARGE": (1, "T4-16GB", 16),
    "G4DN.12XLARGE": (4, "T4-16GB", 192),
    "A2-HIGHGPU-1G": (1, "A100-40GB", 85),
    "A2-HIGHGPU-8G": (8, "A100-40GB", 680),
    "A2-ULTRAGPU-8G": (8, "A100-80GB", 1360),
    "A3-HIGHGPU-8G": (8, "H100-80GB", 1872),
    "ND96ISR-H100-V5": (8, "H100-80GB", 1900),
    "ND96ASR-V4": (8, "A100-40GB", 900),
    "ND96AMSR-A100-V4": (8, "A100-80GB", 1900),
    "DGX-H100": (8, "H100-80GB", 2048),
    "DGX-A100": (8, "A100-80GB", 2048),
    "COLAB-T4": (1, "T4-16GB", 12.7),
    "KAGGLE-T4X2": (2, "T4-16GB", 29),
}


@dataclass(frozen=True)
class Hardware:
    """What the run is declared to run on: nodes x GPUs per node of one accelerator."""

    nodes: int
    gpus_per_node: int
    accelerator: Accelerator
    spec: str = ""
    host_ram_gib: float | None = None  # one node's RAM, when the spec names a node or --host-ram says it
    node: str = ""  # the catalogue's node name, when the spec names one

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def memory_bytes(self) -> int:
        return int(self.accelerator.memory_gib * GIB)

    def describe(self) -> str:
        count = f"{self.nodes}x{self.gpus_per_node}" if self.nodes > 1 else f"{self.gpus_per_node}"
        return f"{count}x{self.accelerator.name} ({self.accelerator.memory_gib:g} GiB each)"

    def to_dict(self) -> dict:
        return {
            "spec": self.spec,
            "nodes": self.nodes,
            "gpus_per_node": self.gpus_per_node,
            "gpus": self.gpus,
            "accelerator": self.accelerator.name,
            "memory_gib": self.accelerator.memory_gib,
            "peak_tflops": self.accelerator.peak_tflops,
            "bandwidth_tbs": self.accelerator.bandwidth_tbs,
            "host_ram_gib": self.host_ram_gib,
            "node": self.node or None,
        }


class HardwareError(ValueError):
    """A spec that names no hardware; the message says what is accepted."""


_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(GB|GIB|G|TB|TIB)$")
_COUNT = re.compile(r"^(\d+)\s*[X*×]\s*(.+)$")
MAX_GPUS = 1 << 20


def parse_hardware(spec: str) -> Hardware:
    """'8xH100-80GB' -> 1 node x 8 H100; '2x8xA100-40GB' -> 2 nodes x 8; '80GB' -> one 80 GiB device."""
    text = " ".join(str(spec).split()).upper()
    if not text or len(text) > 100:
        raise HardwareError(f"hardware spec {spec!r}: expected e.g. 8xH100-80GB, 2x8xA100-40GB or 80GB")
    counts: list[int] = []
    rest = text
    while (match := _COUNT.match(rest)) and len(counts) < 2:
        counts.append(int(match.group(1)))
        rest = match.group(2).strip()
    if any(c < 1 for c in counts):
        raise HardwareError(f"hardware spec {spec!r}: counts must be at least 1")
    node = NODES.get(rest.replace("_", "-"))
    if node is not None:  # a named node: the count, if any, is how many of them
        if len(counts) > 1:
            raise HardwareError(f"hardware spec {spec!r}: a node name takes one count (how many nodes)")
        per_node, accelerator, ram = node
        return Hardware(
            counts[0] if counts else 1,
            per_node,
            accelerator_named(accelerator, spec),
            spec=str(spec),
            host_ram_gib=ram,
            node=rest.lower(),
        )
    nodes, per_node = (counts + [1, 1])[:2] if len(counts) == 2 else (1, counts[0] if counts else 1)
    if nodes * per_node > MAX_GPUS:
        raise HardwareError(f"hardware spec {spec!r}: more than {MAX_GPUS} GPUs")
    return Hardware(nodes, per_node, accelerator_named(rest, spec), spec=str(spec))


def accelerator_named(name: str, spec: str = "") -> Accelerator:
    key = name.upper().replace("_", "-").replace(" ", "-")
    size = _SIZE.match(key)
    if size:
        number, unit = float(size.group(1)), size.group(2)
        gib = number * 1024 if unit.startswith("T") else number
        if not 0 < gib <= 1 << 20:
            raise HardwareError(f"hardware spec {spec or name!r}: memory size out of range")
        return Accelerator(f"{gib:g}GiB", gib, None, "a plain memory size: no peak FLOP/s, so no time estimate")
    key = ALIASES.get(key, key)
    if key in CATALOGUE:
        return CATALOGUE[key]
    family, _, memory = key.rpartition("-")
    if family and _SIZE.match(memory):  # a known family at another memory size (A100-40G, H100-94GB, ...)
        base = CATALOGUE.get(ALIASES.get(family, family)) or next(
            (a for k, a in CATALOGUE.items() if k.rpartition("-")[0] == family), None
        )
        if base is not None:
            gib = accelerator_named(memory).memory_gib
            return replace(base, name=f"{family}-{memory}", memory_gib=gib)
    known = ", ".join(sorted(CATALOGUE))
    raise HardwareError(
        f"unknown accelerator {name!r} in {spec or name!r}; known: {known}, or a memory size "
        "like 80GB (register others with grpo_schema.engine.hardware.register_accelerator)"
    )
