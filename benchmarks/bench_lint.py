"""Lint speed: the pre-commit case (one small file, whole process) and a real
corpus of agent frameworks, next to plain `libcst.parse_module` on the same files.

Both sides of the corpus comparison are whole processes, timed from outside: the
parse side (`bench_lint.py --parse ROOT JOBS`) starts an interpreter, imports
libcst, finds the files and parses them, as the lint starts, finds and lints."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst

sys.path.insert(0, str(Path(__file__).parent))
from corpus import ensure_corpus, python_files  # noqa: E402

NONATOMIC = [sys.executable, "-m", "nonatomic"]
# As installed: with bytecode caches (pip compiles a package when it installs it; a
# checkout writes them on first import), whatever this shell says.
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _parse(path: Path) -> None:
    try:
        libcst.parse_module(path.read_bytes())
    except Exception:  # noqa: BLE001 - only the time matters here
        pass


def parse_all(root: Path, jobs: int) -> None:
    files = python_files(root)
    if jobs == 1:
        for path in files:
            _parse(path)
    else:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            pool.map(_parse, files, chunksize=8)


PAIRS = 3


def parse_timed(root: Path, jobs: int) -> float:
    return timed([sys.executable, __file__, "--parse", str(root), str(jobs)])


def main() -> None:
    # The pre-commit case: one small file, whole process.  A clean file needs no libcst;
    # one with a hazard loads libcst and the rule that fires (about 0.15 s more).
    cases = {
        "clean file": "import requests\n\ndef refund(o):\n    return requests.post(URL, json=o, timeout=5)\n",
        "file with a finding": "import requests\n\ndef refund(o):\n    return requests.post(URL, json=o)\n",
    }
    with tempfile.TemporaryDirectory() as tmp:
        for label, source in cases.items():
            small = Path(tmp) / "tool.py"
            small.write_text(source)
            runs = [timed([*NONATOMIC, "lint", "--no-cache", str(small)]) for _ in range(8)][1:]  # 1st: caches
            print(f"pre-commit case, {label}: median {statistics.median(runs):.3f} s (goal <= 0.25 s)")

    root = ensure_corpus()
    files = python_files(root)
    lines = sum(path.read_bytes().count(b"\n") for path in files)
    print(f"corpus: {len(files)} files, {lines / 1e6:.2f} M lines")

    def row(label: str, seconds: float, note: str = "") -> None:
        print(f"  {label:<36} {seconds:7.2f} s  {len(files) / seconds:8.0f} files/s  {note}")

    # Lint and parse in turn, PAIRS times each: the median of the pairwise ratios holds
    # when the machine's speed drifts (other processes) during the run.
    for jobs in (1, 2):
        pairs = [(parse_timed(root, jobs),
                  timed([*NONATOMIC, "lint", "--no-cache", "--exit-zero", "--jobs", str(jobs), "."], root))
                 for _ in range(PAIRS)]
        parse, lint = (statistics.median(side) for side in zip(*pairs))
        ratio = statistics.median(b / a for a, b in pairs)
        row(f"libcst.parse_module, {jobs} process{'es' if jobs > 1 else ''}", parse, f"median of {PAIRS}")
        row(f"nonatomic lint --jobs {jobs} (cold)", lint, f"{ratio:.2f}x the parse (median of the pairs)")
    cache = root / ".nonatomic_cache"
    shutil.rmtree(cache, ignore_errors=True)
    timed([*NONATOMIC, "lint", "--jobs", "2", "."], root)  # fills the cache
    row("nonatomic lint (warm cache)", timed([*NONATOMIC, "lint", "--jobs", "2", "."], root))
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--parse"]:
        parse_all(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
