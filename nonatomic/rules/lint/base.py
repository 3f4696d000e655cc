"""What every lint rule shares: the base class, its test cases and what it reports.

A rule is a small libcst visitor (batched with every other enabled rule into
one traversal, as Fixit does).  Its class docstring is its documentation in
ruff's shape (what it does / why is this bad / example / use instead), and its
VALID and INVALID class attributes are test cases the suite runs.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst

from nonatomic.rules.lint.walk import Metadata
from libcst.metadata import CodeRange, PositionProvider

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Invalid:
    """A snippet the rule must flag; `line` is the 1-based line of the finding."""

    code: str
    line: int | None = None
    fixed: str | None = None  # the snippet after applying the rule's fix, if it has one


@dataclass
class Violation:
    node: cst.CSTNode
    message: str
    replacement: cst.CSTNode | cst.RemovalSentinel | None = None
    fix_title: str | None = None
    unsafe_fix: bool = True
    # `(module, name)` pairs the replacement uses: the engine adds
    # `from module import name` when it applies the fix (nothing when already imported).
    imports: tuple[tuple[str, str], ...] = ()


@dataclass
class RuleContext:
    """What a rule may know beyond the tree: its options and the shared rule packs."""

    options: dict[str, Any] = field(default_factory=dict)
    settings: Any = None  # the lint settings object (tool registry and friends)


class LintRule(cst.BatchableCSTVisitor):
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str] = "warning"
    default_on: ClassVar[bool] = True
    # Bytes that must occur in a file for this rule to possibly fire; None: always run.
    prefilter: ClassVar[re.Pattern[bytes] | None] = None
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []
    # Do not declare PositionProvider here: it is a whole code-generation pass per
    # file.  Use `self.line_of(node)` or `self.position_of(node)`, computed only if
    # some rule asks for them.
    METADATA_DEPENDENCIES: tuple = ()

    def __init__(self, context: RuleContext | None = None) -> None:
        super().__init__()
        self.context = context or RuleContext()
        self.violations: list[Violation] = []
        self.tree_metadata: Metadata | None = None  # set by the engine for each file

    def position_of(self, node: cst.CSTNode) -> CodeRange:
        """Where `node` is in the source (positions are computed on first use)."""
        assert self.tree_metadata is not None
        return self.tree_metadata.resolve(PositionProvider)[node]

    def line_of(self, node: cst.CSTNode) -> int:
        """The 1-based line where `node` starts."""
        return self.position_of(node).start.line

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        replacement: cst.CSTNode | cst.RemovalSentinel | None = None,
        fix_title: str | None = None,
        unsafe_fix: bool = True,
        imports: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.violations.append(Violation(node, message, replacement, fix_title, unsafe_fix, imports))

    @classmethod
    def documentation(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()

    @classmethod
    def summary(cls) -> str:
        """The first sentence of 'What it does', for tables and SARIF short descriptions."""
        doc = cls.documentation()
        body = doc.split("## What it does", 1)[-1].strip().split("\n\n", 1)[0]
        return " ".join(body.split())

    @classmethod
    def build_prefilter(cls, options: dict[str, Any]) -> re.Pattern[bytes] | None:
        """The prefilter under these options (rules whose trigger words are configurable override this)."""
        return cls.prefilter

    @classmethod
    def prefilter_for(cls, words: list[str]) -> re.Pattern[bytes]:
        """A prefilter matching any of `words` as a whole word."""
        alternatives = "|".join(sorted({re.escape(w) for w in words}))
        return re.compile(rb"\b(?:" + alternatives.encode() + rb")\b")

    @classmethod
    def prefilter_for_imports(cls, modules: list[str]) -> re.Pattern[bytes]:
        """A prefilter matching a file that imports one of `modules` (top-level names):
        a call can only resolve to `requests.post` where `requests` is imported."""
        roots = "|".join(sorted({re.escape(m.split(".", 1)[0]) for m in modules}))
        return re.compile(
            rb"(?m)^(?:\xef\xbb\xbf)?[ \t]*(?:from[ \t]+(?:" + roots.encode() + rb")\b|import[ \t][^\n]*\b(?:"
            + roots.encode() + rb")\b)"
        )

    @classmethod
    def prefilter_for_all(cls, *patterns: bytes) -> re.Pattern[bytes]:
        """A prefilter matching a file that contains every one of `patterns` (anchored at
        the start, so a search scans the file once per pattern)."""
        lookaheads = b"".join(rb"(?=[\s\S]*?(?:" + pattern + rb"))" for pattern in patterns)
        return re.compile(rb"\A" + lookaheads)


@dataclass(frozen=True)
class SpellingPrefilter:
    """A prefilter for names spelled many ways (`Idempotency-Key`, `idempotency_key`,
    `IdempotencyKey`): a file passes when its text, lower-cased and without `-` and `_`,
    contains one of `spellings` (given in that normal form) and `also` matches.  Plain
    substring tests: a case-insensitive regex alternation is ten times slower."""

    spellings: tuple[bytes, ...]
    also: re.Pattern[bytes] | None = None

    def search(self, data: bytes) -> bool:
        if self.also is not None and not self.also.search(data):
            return False
        text = data.lower().replace(b"-", b"").replace(b"_", b"")
        return any(spelling in text for spelling in self.spellings)
