"""Runs inside a graded notebook's kernel: what a learner cell may patch is put back before checks.

The grader calls :func:`install` before the first learner cell and :func:`restore` before
every checkpoint and hidden check, through ``user_expressions`` of an empty silent execute
request, so neither passes through the input or AST transformers a learner cell may have
registered. :func:`restore` puts back the builtins, the transformers, the event callbacks,
the output streams and the shell's methods as they were at :func:`install`, binds the
checkpoint helpers in the notebook's namespace to the package's own objects (the course's
helpers re-read from their file), and removes names that shadow a builtin the checkpoint
uses. This defeats patching from learner cells; it is not a boundary against code written
to subvert this module itself (the sandbox and the hidden checks are what hold then).

The exercise's library shortcuts (:mod:`chunklab.course.shortcuts`) its ``absent`` list names
are not in the kernel at all: the grader's redacted view of the package (:mod:`chunklab.course.redact`)
holds a stub for each that raises :func:`absent`'s error and records it, here or, from a forked
child, through a pipe this module reads. The rest are kept shut as a second line: each
declared library function is replaced, in every chunklab module that holds it, by a tripwire
that refuses a call made from inside one of the learner's exercise functions; :func:`verify`
(after each checkpoint) reports such calls, even caught ones, a learner function that *is* the
library's, and a module reloaded to get the original back; :func:`hidden` traces every call
while the learner's function runs, so the library's code is caught however it was reached.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import importlib.util
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = ["ShortcutError", "absent", "hidden", "install", "restore", "verify"]

_SHELL_METHODS = (
    "run_cell",
    "run_cell_async",
    "transform_cell",
    "run_ast_nodes",
    "run_code",
    "user_expressions",
)
_HERE = Path(__file__).resolve().parent
#: code in these folders is chunklab's or an installed package's, never the learner's
_LIBRARY_DIRS = tuple(sorted({str(_HERE.parent), sys.prefix, sys.base_prefix, sys.exec_prefix}))
_STATE: dict[str, Any] = {}


class ShortcutError(RuntimeError):
    """An exercise function called the library implementation it is meant to be."""


def install(helpers: dict[str, tuple[str, str]], shortcuts: dict[str, list] | None = None) -> str:
    """Snapshot the kernel's pristine state and the helpers (``name -> (module, attribute)``).

    ``shortcuts`` is :meth:`chunklab.course.shortcuts.Shortcut.payload`: the learner's exercise
    functions and the library functions they may not call.
    """
    from IPython import get_ipython

    shell = get_ipython()
    tm = shell.input_transformer_manager
    saved: dict[str, Any] = {}
    for name, (module, attr) in {**helpers, "check_chunks": ("chunklab.chunk", "check_chunks")}.items():
        if module != "chunklab.course" and not module.startswith("chunklab.course."):
            saved[name] = (module, attr, getattr(importlib.import_module(module), attr))
    _STATE.update(
        shell=shell,
        builtins=dict(vars(builtins)),
        lists=[
            (lst, list(lst))
            for lst in (
                tm.cleanup_transforms,
                tm.line_transforms,
                tm.token_transformers,
                shell.input_transformers_post,
                shell.ast_transformers,
            )
        ],
        events={k: list(v) for k, v in shell.events.callbacks.items()},
        sys=(sys.stdout, sys.stderr, sys.displayhook, sys.excepthook, sys.stdin),
        shell_attrs=(shell.display_pub, shell.displayhook, shell.input_transformer_manager),
        methods={m: getattr(type(shell), m) for m in _SHELL_METHODS if hasattr(type(shell), m)},
        helpers=helpers,
        saved=saved,
        functions=frozenset((shortcuts or {}).get("functions", ())),
        blocked=[],
        caught=[],
        active=None,
        pid=os.getpid(),
        pipe=_pipe(),
    )
    for module, attr in (shortcuts or {}).get("library", ()):
        orig = getattr(importlib.import_module(module), attr)
        dotted = f"{getattr(orig, '__module__', module)}.{attr}"
        code = getattr(orig, "__code__", None)
        key = (code.co_filename, code.co_qualname) if code is not None else None
        _STATE["blocked"].append((module, attr, orig, _tripwire(orig, dotted), key, dotted))
    _shut()
    return "installed"


def _pipe() -> tuple[int, int]:
    """A pipe a forked child reports on (non-blocking both ends: a full pipe loses a report, never hangs)."""
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    return read, write


def _reported() -> list[str]:
    """The messages forked children wrote to the pipe since the last call."""
    if "pipe" not in _STATE:
        return []
    data = b""
    while True:
        try:
            chunk = os.read(_STATE["pipe"][0], 65536)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        data += chunk
    return [line for line in data.decode("utf-8", "replace").splitlines() if line]


def _record(message: str) -> None:
    """Keep ``message`` for :func:`verify`: in this list, or from a forked child through the pipe."""
    if _STATE.get("pid") == os.getpid():
        if message not in _STATE["caught"]:
            _STATE["caught"].append(message)
    elif "pipe" in _STATE:
        try:
            os.write(_STATE["pipe"][1], (message.replace("\n", " ") + "\n").encode("utf-8"))
        except OSError:
            pass


def absent(dotted: str) -> ShortcutError:
    """The error a function missing from the grading sandbox raises when called (recorded for :func:`verify`).

    Its stub (see :mod:`chunklab.course.redact`) raises what this returns.
    """
    caller = _STATE.get("active") or _exercise_frame(sys._getframe(1))
    if caller:
        return _caught(caller, dotted)
    message = f"{dotted} was called, which this exercise asks you to write: it is not in the grading sandbox"
    _record(message)
    return ShortcutError(message)


def _tripwire(orig: Any, dotted: str) -> Any:
    """``orig`` as seen by graded code: refused when called from inside an exercise function."""

    def tripwire(*args: Any, **kwargs: Any) -> Any:
        caller = _STATE["active"] or _exercise_frame(sys._getframe(1))
        if caller:
            raise _caught(caller, dotted)
        return orig(*args, **kwargs)

    functools.update_wrapper(tripwire, orig)
    vars(tripwire).pop("__wrapped__", None)  # no way back to the original through the tripwire
    return tripwire


def _caught(caller: str, dotted: str) -> ShortcutError:
    message = f"{caller} calls {dotted}, which this exercise asks you to write"
    _record(message)
    return ShortcutError(message)


def _exercise_frame(frame: Any) -> str:
    """The name of the innermost learner exercise function on the stack ('' when none)."""
    names, library = _STATE.get("functions", ()), _LIBRARY_DIRS
    while frame is not None:
        code = frame.f_code
        if code.co_name in names and not code.co_filename.startswith(library):
            return code.co_name
        frame = frame.f_back
    return ""


def _shut() -> None:
    """Put the tripwires in place: in each declared module and wherever chunklab re-exports the function."""
    for module, attr, orig, wire, _, _ in _STATE["blocked"]:
        setattr(sys.modules[module], attr, wire)
        for name, mod in list(sys.modules.items()):
            if name.startswith("chunklab") and not name.startswith("chunklab.course") and mod is not None:
                for key, value in list(vars(mod).items()):
                    if value is orig:
                        setattr(mod, key, wire)


def verify(nonce: str) -> str:
    """After a checkpoint: JSON ``{"nonce", "shortcuts": [messages]}`` (calls refused, even if caught;
    an exercise function that is a library one; a declared module reloaded or patched)."""
    found = [*_STATE["caught"], *_reported()]
    ns = _STATE["shell"].user_ns
    for module, attr, orig, wire, key, dotted in _STATE["blocked"]:
        if getattr(sys.modules.get(module), attr, None) is not wire:
            found.append(f"{module}.{attr} was replaced or its module reloaded while graded code ran")
        for name in _STATE["functions"]:
            obj = ns.get(name)
            while isinstance(obj, functools.partial):
                obj = obj.func
            code = getattr(obj, "__code__", None)
            if (
                obj is orig
                or obj is wire
                or (code is not None and (code.co_filename, code.co_qualname) == key)
            ):
                found.append(f"{name} is {dotted}, which this exercise asks you to write")
    return json.dumps({"nonce": nonce, "shortcuts": sorted(set(found))})


def _trace(function: str) -> Any:
    """A profile hook: records a call into blocked library code, or an attempt to switch the trace off."""
    keys = {key: dotted for *_, key, dotted in _STATE["blocked"] if key is not None}
    switches = (sys.setprofile, sys.settrace, threading.setprofile, threading.settrace)

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            dotted = keys.get((code.co_filename, code.co_qualname))
            if dotted:
                _caught(function, dotted)
        elif event == "c_call" and any(arg is s for s in switches) and frame.f_code is not hidden.__code__:
            _record(f"{function} switched off the grader's call trace")

    return hook


def restore(shadowed: list[str], nonce: str) -> str:
    """Put back what learner cells may have patched; returns ``nonce`` when done."""
    shell = _STATE["shell"]
    current = vars(builtins)
    for key in [k for k in current if k not in _STATE["builtins"]]:
        del current[key]
    current.update(_STATE["builtins"])
    for lst, items in _STATE["lists"]:
        lst[:] = items
    for event, callbacks in _STATE["events"].items():
        shell.events.callbacks[event] = list(callbacks)
    sys.stdout, sys.stderr, sys.displayhook, sys.excepthook, sys.stdin = _STATE["sys"]
    shell.display_pub, shell.displayhook, shell.input_transformer_manager = _STATE["shell_attrs"]
    for method, func in _STATE["methods"].items():
        shell.__dict__.pop(method, None)
        setattr(type(shell), method, func)
    ns = shell.user_ns
    ns["__builtins__"] = builtins
    for name in shadowed:
        if name in ns and name in _STATE["builtins"]:
            del ns[name]
    for name, (module, attr, obj) in _STATE["saved"].items():
        setattr(sys.modules[module], attr, obj)
        if name in _STATE["helpers"]:
            ns[name] = obj
    _STATE["caught"].clear()
    _reported()  # what forked children said before this check does not count against it
    _STATE["active"] = None
    _shut()
    course = _fresh("checkpoints")
    for name, (module, attr) in _STATE["helpers"].items():
        if module == "chunklab.course" or module.startswith("chunklab.course."):
            ns[name] = getattr(course, attr)
            if module in sys.modules:
                setattr(sys.modules[module], attr, ns[name])
    return nonce


def hidden(
    function: str, inputs_json: str, summary: str, nonce: str, convert: dict[str, str] | None = None
) -> str:
    """Restore, then call the learner's ``function`` on each input; the JSON list of summaries.

    Only plain JSON values cross (:func:`chunklab.course.hidden.plain`, run while the trace is on):
    a result of any other type is refused, ``{"refused": why}``, without calling its methods.
    ``convert`` names the arguments rebuilt on arrival (arrays, documents, a store), as the
    grader rebuilds them for the reference.
    """
    restore([], nonce)
    checks = _fresh("hidden")
    func = _STATE["shell"].user_ns.get(function)
    out = []
    try:
        cases = checks.arguments(json.loads(inputs_json), convert or {}, _STATE.setdefault("shared", {}))
    except Exception as exc:  # the kernel could not build the inputs: every case says so
        return json.dumps(
            {"nonce": nonce, "results": [], "problem": f"{type(exc).__name__}: {str(exc)[:200]}"}
        )
    hook = _trace(function)
    for kwargs in cases:
        if not callable(func):
            out.append({"error": f"NameError: {function} is not defined"})
            continue
        _STATE["active"] = function
        threading.setprofile(hook)
        sys.setprofile(hook)
        try:  # the result is summarized and made plain under the same trace: its methods are learner code
            out.append(checks.summarize(func(**kwargs), summary, function))
        except checks.NotPlain as exc:
            out.append({"refused": str(exc)[:300]})
        except Exception as exc:  # the learner's code: any exception is a verdict, reported by name
            out.append({"error": f"{type(exc).__name__}: {str(exc)[:200]}"})
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
            _STATE["active"] = None
    shortcuts = json.loads(verify(nonce))["shortcuts"]
    return json.dumps({"nonce": nonce, "results": out, "shortcuts": shortcuts})


def _fresh(name: str) -> Any:
    """A course module loaded again from its file (not from sys.modules, which a cell may patch)."""
    path = _HERE / f"{name}.py"
    if not path.is_file():  # a package (hidden/): its __init__, whose own imports are the package's
        path = _HERE / name / "__init__.py"
    spec = importlib.util.spec_from_file_location(f"chunklab.course._fresh_{name}", path)
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
