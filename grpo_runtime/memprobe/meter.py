"""Bytes in use on one device, read the same way by every step of a case: on CPU the process's resident set (VmRSS,
and VmHWM for the peak, reset through /proc/self/clear_refs), on a GPU torch's allocator counters."""

from __future__ import annotations

import ctypes

import torch


class Meter:
    """Bytes in use now and the peak since the last reset, on one device."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")

    def hold_mapped_pages(self) -> None:
        """On the CPU, lock the pages mapped so far (the libraries' code and data) in memory: the meter reads the
        process's resident size, and on a busy machine the kernel may drop those file-backed pages mid-measurement,
        which reads as tensors shrinking. Best effort: without the privilege the probe measures as before."""
        if self.cuda:
            return
        try:
            ctypes.CDLL(None, use_errno=True).mlockall(1)  # MCL_CURRENT only: later allocations stay lazy, as in a run
        except (OSError, AttributeError):
            pass

    def now(self) -> int:
        if self.cuda:
            torch.cuda.synchronize()
            return torch.cuda.memory_allocated()
        return self._status("VmRSS")

    def reset_peak(self) -> None:
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()
        else:
            with open("/proc/self/clear_refs", "w") as handle:
                handle.write("5")

    def peak(self) -> int:
        if self.cuda:
            torch.cuda.synchronize()
            return torch.cuda.max_memory_allocated()
        return self._status("VmHWM")

    @staticmethod
    def _status(key: str) -> int:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError(f"{key} not in /proc/self/status")
