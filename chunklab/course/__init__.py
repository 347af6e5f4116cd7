"""What only the course needs: checkpoint helpers, the exercise generator, the grader.

Exercise notebooks import the checkpoint helpers from here (``from chunklab.course import
describe_chunks``); the generator lives in :mod:`chunklab.course.generate` and the grader in
:mod:`chunklab.course.grader`. The library modules of chunklab never import this package.
"""

from __future__ import annotations

from chunklab.course.checkpoints import at_least, at_most, band, describe_chunks, show
from chunklab.course.selfcheck import check

__all__ = ["at_least", "at_most", "band", "check", "describe_chunks", "show"]
