"""Findings on code the rules were not tuned on: lint the validation half of the unseen
corpus (`validation_corpus.py`) and print, per rule, how many findings of each severity.
Its findings are what a blind review samples; this prints only the counts.  The holdout half
was kept unseen until the validation half's review was read, the fresh set until the
holdout half's was, the second fresh set until the first's was, and the last, latest and
final sets until every fix of their rounds was made (the read-last and read-2 sets were read for
the fixes of the final and final-2 rounds, final-2 to final-21 once judged for those of the
next)."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import python_files  # noqa: E402
from validation_corpus import HALVES, ensure_half  # noqa: E402

SEVERITIES = ("error", "warning", "info")


def main() -> None:
    for half in sys.argv[1:] or [name for name in HALVES if name != "tuning"]:
        report(half)


def report(half: str) -> None:
    root = ensure_half(half)
    files = python_files(root)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "nonatomic", "lint", "--no-cache", "--exit-zero", "--jobs", "2",
         "--format", "json", "."],
        cwd=root, capture_output=True, text=True, check=True,
    )
    seconds = time.perf_counter() - start
    counts: collections.Counter[tuple[str, str]] = collections.Counter(
        (finding["code"], finding["severity"]) for finding in json.loads(done.stdout)
    )
    print(f"{half} half of the unseen corpus: {len(files)} files, lint {seconds:.1f} s")
    print(f"  {'rule':<6} " + " ".join(f"{name:>8}" for name in SEVERITIES))
    for code in sorted({code for code, _ in counts}):
        print(f"  {code:<6} " + " ".join(f"{counts[code, name]:>8}" for name in SEVERITIES))
    print(f"  {'all':<6} " + " ".join(
        f"{sum(n for (_, s), n in counts.items() if s == name):>8}" for name in SEVERITIES))


if __name__ == "__main__":
    main()
