"""What the machine is and how much memory the run took: the numbers mean little without them."""

from __future__ import annotations

import os
import platform
import resource
import threading
import time
from typing import Any


def machine() -> dict[str, Any]:
    """Cores, load average and Python (the machine is shared)."""
    return {
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def measured() -> dict[str, Any]:
    """When and where the run was measured: the block the book's pages name (``chunklab.book.provenance``)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in cpuinfo if ln.startswith("model name")), model
            )
    except OSError:
        pass
    return {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": {"cpu": model, "cores": os.cpu_count()},
    }


class Memory:
    """Peak resident memory of this process, its largest finished worker and the whole process tree.

    The tree (main + live workers summed) is sampled every ``every_s`` seconds on a daemon
    thread from construction on; :meth:`peak` reports it since the previous call.
    """

    def __init__(self, every_s: float = 0.2) -> None:
        self._tree_peak, self.every_s = 0, every_s
        self._lock = threading.Lock()
        threading.Thread(target=self._sample, daemon=True).start()

    def peak(self) -> dict[str, float]:
        """Peak RSS in MB: this process and its largest finished worker (kernel peaks, Linux reports
        KiB), and the sampled process tree since the last call (then reset)."""
        with self._lock:
            tree, self._tree_peak = self._tree_peak, 0
        return {
            "main": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "largest_worker": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            "tree_sampled": round(tree / 2**20, 1),
        }

    def _sample(self) -> None:
        import psutil

        me = psutil.Process()
        while True:
            total = me.memory_info().rss
            for child in me.children(recursive=True):
                try:
                    total += child.memory_info().rss
                except psutil.Error:  # a worker that just ended
                    pass
            with self._lock:
                self._tree_peak = max(self._tree_peak, total)
            time.sleep(self.every_s)
