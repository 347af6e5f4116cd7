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
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["hidden", "install", "restore"]

_SHELL_METHODS = ("run_cell", "run_cell_async", "transform_cell", "run_ast_nodes", "run_code", "user_expressions")
_HERE = Path(__file__).resolve().parent
_STATE: dict[str, Any] = {}


def install(helpers: dict[str, tuple[str, str]]) -> str:
    """Snapshot the kernel's pristine state and the helpers (``name -> (module, attribute)``)."""
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
        lists=[(lst, list(lst)) for lst in (tm.cleanup_transforms, tm.line_transforms, tm.token_transformers,
                                            shell.input_transformers_post, shell.ast_transformers)],
        events={k: list(v) for k, v in shell.events.callbacks.items()},
        sys=(sys.stdout, sys.stderr, sys.displayhook, sys.excepthook, sys.stdin),
        shell_attrs=(shell.display_pub, shell.displayhook, shell.input_transformer_manager),
        methods={m: getattr(type(shell), m) for m in _SHELL_METHODS if hasattr(type(shell), m)},
        helpers=helpers,
        saved=saved,
    )
    return "installed"


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
    course = _fresh("checkpoints")
    for name, (module, attr) in _STATE["helpers"].items():
        if module == "chunklab.course" or module.startswith("chunklab.course."):
            ns[name] = getattr(course, attr)
            if module in sys.modules:
                setattr(sys.modules[module], attr, ns[name])
    return nonce


def hidden(function: str, inputs_json: str, summary: str, nonce: str, convert: dict[str, str] | None = None) -> str:
    """Restore, then call the learner's ``function`` on each input; the JSON list of summaries.

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
        return json.dumps({"nonce": nonce, "results": [], "problem": f"{type(exc).__name__}: {str(exc)[:200]}"})
    for kwargs in cases:
        if not callable(func):
            out.append({"error": f"NameError: {function} is not defined"})
            continue
        try:
            out.append(checks.summarize(func(**kwargs), summary))
        except Exception as exc:  # the learner's code: any exception is a verdict, reported by name
            out.append({"error": f"{type(exc).__name__}: {str(exc)[:200]}"})
    return json.dumps({"nonce": nonce, "results": out}, default=str)


def _fresh(name: str) -> Any:
    """A course module loaded again from its file (not from sys.modules, which a cell may patch)."""
    spec = importlib.util.spec_from_file_location(f"chunklab.course._fresh_{name}", _HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
