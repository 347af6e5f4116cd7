"""The static model's first-use notice: on stderr for a command, in the log only inside a kernel."""

import logging
import sys
import types

from chunklab.embed import models


def test_the_first_use_notice_goes_to_stderr_outside_a_notebook_kernel(capsys, monkeypatch):
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    models._say("chunklab: building the static model from /a/b")
    assert "building the static model from /a/b" in capsys.readouterr().err


def test_inside_a_notebook_kernel_the_notice_is_logged_not_printed(capsys, monkeypatch, caplog):
    # a book page or an exercise runs in an IPython kernel: its stderr would show on the page, path included
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    with caplog.at_level(logging.INFO, logger="chunklab"):
        models._say("chunklab: building the static model from /a/b")
    assert capsys.readouterr().err == ""
    assert "building the static model from /a/b" in caplog.text
