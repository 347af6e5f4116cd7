"""Skip marks for what the grader's sandbox needs from the machine."""

from __future__ import annotations

import pytest

from chunklab.course.kernel import bwrap_available

#: the sandboxed grader's tests skip where bubblewrap is missing (``make sysdeps`` installs it)
needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap (bwrap) is not installed")
