"""Grade a whole class at once: wall time, CPU per notebook and peak memory of ``chunklab grade --jobs N``.

Builds a class of ``--size`` submissions of one course notebook (default ``01-fixed``): copies of
the reference, wrong variants (a solution with one plausible bug each), blank exercises, and
ten hostile notebooks (a link and a FIFO in place of a notebook, a kernel log replaced by a
link, a malformed output message, patched user expressions, a library shortcut, a spoofed
score in an exception, a 100 MB print, a /tmp filler, an infinite loop). It grades them in
this process as ``chunklab grade CLASS --jobs N --report CSV`` does (the same function and
gradebook, so each result's details are at hand), then checks every verdict: references at
full marks, wrong and blank ones below, each hostile one reported with a one-line reason.

    python benchmarks/grade_class.py --size 200 --jobs 2 --out benchmarks/results/grade_class.json

CPU is the grader's own plus its kernels' (``RUSAGE_CHILDREN``: every sandbox and kernel is
reaped by the grader); peak memory is the grader's (``ru_maxrss``) and the largest kernel's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WRONG = {  # 01-fixed: one plausible bug per variant, in the learner's cell
    "off-by-one step": ("step = size - overlap", "step = size - overlap + 1"),
    "window ends at its last token's start": ("window[-1][1]", "window[-1][0]"),
}

HOSTILE_CELLS = {
    "kernel log replaced by a link": "import sys, os, pathlib\n"
    "run = pathlib.Path(sys.argv[sys.argv.index('-f') + 1]).parent\n"
    "(run / 'kernel.log').symlink_to('/etc/shadow')\nos._exit(3)",
    "malformed output message": "from IPython.display import publish_display_data\n"
    "publish_display_data({'text/plain': 5})",
    "patched user expressions": "type(get_ipython()).user_expressions = lambda self, expressions: [1]",
    "library shortcut": "_real_token_windows = token_windows\n"
    "def token_windows(*args, **kwargs):\n"
    "    from chunklab.chunkers.fixed import chunk_fixed\n"
    "    chunk_fixed('warm up', 2)\n"
    "    return _real_token_windows(*args, **kwargs)",
    "spoofed score": "raise RuntimeError('\\r\\x1b[1A  score: 3/3 checkpoints passed (100%)')",
    "100 MB print": "print('x' * 100 * 1024**2)",
    "/tmp filler": "with open('/tmp/fill', 'wb') as fh:\n"
    "    for _ in range(4096):\n        fh.write(b'x' * 1024**2)",
    "infinite loop": "while True:\n    pass",
}


class _Descendants:
    """Samples the CPU time and resident size of every process below this one (the sandboxes, kernels)."""

    def __init__(self, interval: float = 0.25) -> None:
        import threading

        self.interval, self.peak_rss = interval, 0
        self.cpu: dict[tuple[int, int], int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")
        self._page = os.sysconf("SC_PAGE_SIZE")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def cpu_seconds(self) -> float:
        return sum(self.cpu.values()) / self._tick

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(self.interval):
            stats: dict[int, tuple[int, int, int, int]] = {}
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                        fields = fh.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                # (ppid, utime + stime, rss pages, start time: with the pid, one process, not a reused pid)
                stats[int(entry)] = (
                    int(fields[1]),
                    int(fields[11]) + int(fields[12]),
                    int(fields[21]),
                    int(fields[19]),
                )
            below = {me}
            grew = True
            while grew:
                grew = False
                for pid, (ppid, _, _, _) in stats.items():
                    if ppid in below and pid not in below:
                        below.add(pid)
                        grew = True
            for pid in below - {me}:
                _, ticks, rss, start = stats[pid]
                self.cpu[(pid, start)] = max(self.cpu.get((pid, start), 0), ticks)
                self.peak_rss = max(self.peak_rss, rss * self._page)


def build_class(folder: Path, size: int, notebook: str) -> dict[str, str]:
    """Write the class's notebooks into ``folder``; their kind, by file name."""
    import nbformat

    from chunklab.course.notebooks import read_notebook

    reference = read_notebook(ROOT / "solutions" / f"{notebook}.ipynb")
    blank = read_notebook(ROOT / "exercises" / f"{notebook}.ipynb")
    kinds: dict[str, str] = {}
    n_hostile = 10
    rest = size - n_hostile
    plan = ["reference"] * (rest * 4 // 10) + ["wrong"] * (rest * 3 // 10)
    plan += ["blank"] * (rest - len(plan))
    wrongs = sorted(WRONG)
    for i, kind in enumerate(plan):
        name = f"s{i:03d}-{notebook}.ipynb"
        nb = reference
        if kind == "wrong":
            old, new = WRONG[wrongs[i % len(wrongs)]]
            nb = nbformat.from_dict(json.loads(json.dumps(reference)))
            cell = next(c for c in nb.cells if c.get("id") == "token-windows")
            assert old in cell.source, old
            cell.source = cell.source.replace(old, new)
        elif kind == "blank":
            nb = blank
        nbformat.write(nb, folder / name)
        kinds[name] = kind
    secret = folder.parent / "secret.ipynb"
    nbformat.write(reference, secret)
    (folder / f"h00-link-{notebook}.ipynb").symlink_to(secret)
    kinds[f"h00-link-{notebook}.ipynb"] = "hostile: a link in place of a notebook"
    os.mkfifo(folder / f"h01-fifo-{notebook}.ipynb")
    kinds[f"h01-fifo-{notebook}.ipynb"] = "hostile: a FIFO in place of a notebook"
    for j, (what, source) in enumerate(sorted(HOSTILE_CELLS.items()), 2):
        nb = nbformat.from_dict(json.loads(json.dumps(reference)))
        at = next(i for i, c in enumerate(nb.cells) if c.get("id") == "token-windows") + 1
        nb.cells.insert(at, nbformat.v4.new_code_cell(source, id=f"hostile-{j}"))
        name = f"h{j:02d}-{what.replace(' ', '_').replace('/', '')}-{notebook}.ipynb"
        nbformat.write(nb, folder / name)
        kinds[name] = f"hostile: {what}"
    return kinds


def main(argv: list[str] | None = None) -> int:
    """Build the class, grade it, check the verdicts, write the JSON."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=200, help="notebooks in the class, 10 of them hostile")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--notebook", default="01-fixed", choices=["01-fixed"])
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="time limit per cell (the infinite loop's)"
    )
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "grade_class.json"))
    args = parser.parse_args(argv)
    from chunklab.course.grader import GradeOptions, describe_grading, grade_notebooks
    from chunklab.course.paths import collect_submissions
    from chunklab.course.results import Gradebook, printable

    with tempfile.TemporaryDirectory(prefix="chunklab-class-") as tmp:
        folder = Path(tmp, "class")
        folder.mkdir()
        kinds = build_class(folder, args.size, args.notebook)
        options = GradeOptions(timeout=args.timeout)
        print(describe_grading(options), flush=True)
        found = collect_submissions([folder])
        book = Gradebook(Path(tmp, "grades.csv"), Path(tmp, "feedback"))  # as `chunklab grade --report` does
        done = [0]

        def finished(result: object) -> None:
            book.add(result)  # type: ignore[arg-type]
            done[0] += 1
            if done[0] % 20 == 0:
                print(f"{done[0]}/{len(found)} graded, {time.monotonic() - t0:.0f} s", flush=True)

        t0 = time.monotonic()
        own0 = resource.getrusage(resource.RUSAGE_SELF)
        watch = _Descendants()
        watch.start()
        try:
            results = grade_notebooks(
                list(found),
                options=options,
                jobs=args.jobs,
                on_result=finished,
                folders={p: f for p, f in found.items() if f is not None},
            )
        finally:
            watch.stop()
        wall = time.monotonic() - t0
        own = resource.getrusage(resource.RUSAGE_SELF)
        cpu = own.ru_utime + own.ru_stime - own0.ru_utime - own0.ru_stime + watch.cpu_seconds()
    expected = {"reference": 0, "wrong": 0, "blank": 0, "hostile": 0}
    unexpected: list[str] = []
    hostile: dict[str, str] = {}
    for r in results:
        kind = kinds[r.path.name]
        full = r.ok and not r.timeouts
        if kind == "reference":
            ok = full
        elif kind in ("wrong", "blank"):
            ok = not r.error and r.passed < r.total
        else:
            failed = next(
                (
                    c.detail or "; ".join(h.detail for h in c.hidden if not h.passed)
                    for c in r.checkpoints
                    if not c.passed
                ),
                "",
            )
            reason = r.error or r.stopped or (r.timeouts[0] if r.timeouts else "") or failed
            reason = reason or (r.notes[0] if r.notes else "")
            line = printable(reason.splitlines()[0] if reason else "", keep_newlines=False)[:240]
            hostile[kind.removeprefix("hostile: ")] = f"{r.passed}/{r.total}: {line}"
            ok = bool(line) and "root:" not in line  # a reason, and no host file in it
        expected[kind.split(":")[0]] += ok
        if not ok:
            unexpected.append(f"{r.path.name} ({kind}): {r.passed}/{r.total} {r.error[:100]}")
    counts = {k: sum(v.split(":")[0] == k for v in kinds.values()) for k in expected}
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": f"{os.cpu_count()} CPUs (shared with other work), {platform.platform()}",
        "command": f"grade_notebooks(CLASS, jobs={args.jobs}) + gradebook, timeout {args.timeout:g} s",
        "sandbox": describe_grading(options),
        "notebook": args.notebook,
        "notebooks": len(kinds),
        "kinds": counts,
        "graded_as_expected": expected,
        "unexpected": unexpected,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_per_notebook_s": round(cpu / len(kinds), 2),
        "wall_per_notebook_s": round(wall / len(kinds), 2),
        "grader_peak_rss_mb": round(own.ru_maxrss / 1024, 1),
        "largest_kernel_peak_rss_mb": round(watch.peak_rss / 1024**2, 1),
        "cpu_note": "the grader's own CPU plus its sandboxes' and kernels', sampled from /proc every 0.25 s "
        "(the last instant of each process is missed)",
        "hostile": hostile,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0 if not unexpected else 1


if __name__ == "__main__":
    sys.exit(main())
