"""``python -m chunklab.course.kernel_main -f CONNECTION_FILE``: the graded kernel's entry point.

ipykernel as ``ipykernel_launcher`` starts it, with one change: its output socket queues messages
for a slow reader instead of dropping them past ZeroMQ's default high-water mark (1,000 messages),
so a burst of flushed prints reaches a grader that is busy on a loaded machine. The queue lives in
the kernel's own memory, which its address-space limit caps; the grader keeps taking only a few
messages at a time (see :func:`chunklab.course.kernel._capped_client`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import zmq


def main() -> None:
    """Start an IPython kernel whose output socket never drops a message for a slow reader."""
    import zmq
    from ipykernel.kernelapp import IPKernelApp

    class GradedKernelApp(IPKernelApp):
        def init_iopub(self, context: zmq.Context) -> None:
            context.setsockopt(zmq.SNDHWM, 0)  # the default of the sockets made from now on
            try:
                super().init_iopub(context)
            finally:
                context.sockopts.pop(zmq.SNDHWM, None)

    GradedKernelApp.launch_instance()


if __name__ == "__main__":
    # as ipykernel_launcher does: the scratch folder (the learner's) is not an import path
    if sys.path and (sys.path[0] == "" or Path(sys.path[0]) == Path.cwd()):
        del sys.path[0]
    main()
