"""The lint engine: find files, run the catalogue's rules over each in one libcst
traversal (in parallel, cached), suppress, fix and report.

`lint_paths` and `load_settings` are the Python API; the CLI is a thin layer on them.
"""

from nonatomic.lint.config import LintSettings, load_settings
from nonatomic.lint.engine import LintReport, lint_paths
from nonatomic.lint.findings import Finding

__all__ = ["Finding", "LintReport", "LintSettings", "lint_paths", "load_settings"]
