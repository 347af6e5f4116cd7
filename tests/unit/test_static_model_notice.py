"""The static model's first-use notice: on stderr for a command, in the log only inside a kernel."""

import io
import logging
import sys

from chunklab.embed import models


def test_the_first_use_notice_goes_to_stderr_outside_a_notebook_kernel(capsys):
    models._say("chunklab: building the static model from /a/b")
    assert "building the static model from /a/b" in capsys.readouterr().err


class OutStream(io.StringIO):
    """Stands for ipykernel's stream: what a kernel writes to stderr shows on the page."""


OutStream.__module__ = "ipykernel.iostream"


def test_inside_a_notebook_kernel_the_notice_is_logged_not_printed(monkeypatch, caplog):
    # a book page or an exercise runs in an IPython kernel: its stderr would show on the page, path included
    # (a library that configured logging with dictConfig earlier in this process may have disabled the logger)
    monkeypatch.setattr(logging.getLogger("chunklab"), "disabled", False)
    kernel_stderr = OutStream()
    monkeypatch.setattr(sys, "stderr", kernel_stderr)
    with caplog.at_level(logging.INFO, logger="chunklab"):
        models._say("chunklab: building the static model from /a/b")
    assert kernel_stderr.getvalue() == ""
    assert "building the static model from /a/b" in caplog.text
