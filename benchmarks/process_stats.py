"""What a benchmark's child process reports about itself: CPU time and peak memory."""

from __future__ import annotations

import os
import resource


def cpu_seconds() -> float:
    """CPU time of this process over all its threads: on a busy machine it says more than wall time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_mb() -> float:
    """Peak resident memory of this process image, in MB.

    Not ru_maxrss: Linux carries it across exec, so a child started by a
    parent holding the generated data would report the parent's peak.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load() -> str:
    """The 1-minute load average, printed next to timings: other processes slow them down."""
    return f"{os.getloadavg()[0]:.1f}"
