"""What every lint rule shares: the base class, its test cases and what it reports.

A rule is a small libcst visitor (batched with every other enabled rule into
one traversal, as Fixit does).  Its class docstring is its documentation in
ruff's shape (what it does / why is this bad / example / use instead), and its
VALID and INVALID class attributes are test cases the suite runs, spelled as
triple-quoted strings indented with the code around them (see `source`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst
from libcst.metadata import CodeRange

from nonatomic.rules.lint.catalogue import entry_for
from nonatomic.rules.lint.tree.walk import Metadata


def source(case: str) -> str:
    """The source a case stands for.  Cases are triple-quoted strings that open with a
    newline and are indented with the code around them: that newline and the indent go."""
    return textwrap.dedent(case[1:]) if case.startswith("\n") else case


@dataclass(frozen=True)
class Invalid:
    """A snippet the rule must flag; `line` is the 1-based line of the finding."""

    code: str
    line: int | None = None
    fixed: str | None = None  # the snippet after applying the rule's fix, if it has one
    severity: str | None = None  # the finding's severity when it is not the rule's own

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", source(self.code))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", source(self.fixed))


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
    # Lower than the rule's own severity when a link of the finding's chain (the write,
    # the retry) was inferred through a helper rather than seen at the site.
    severity: str | None = None
    # Other sites of the same hazard (every mutation of one global): one finding, with
    # these as its related locations.
    related: tuple[cst.CSTNode, ...] = ()


@dataclass
class RuleContext:
    """What a rule may know beyond the tree: its options and the shared rule packs."""

    options: dict[str, Any] = field(default_factory=dict)
    settings: Any = None  # the lint settings object (tool registry and friends)


class LintRule(cst.BatchableCSTVisitor):
    code: ClassVar[str]
    # From the rule's catalogue entry, with its prefilter and gate (see catalogue.py).
    name: ClassVar[str]
    severity: ClassVar[str]
    default_on: ClassVar[bool]
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []
    # Do not declare PositionProvider here: it is a whole code-generation pass per
    # file.  Use `self.line_of(node)` or `self.position_of(node)`: they generate only
    # the statement around the node (see positions.py).
    METADATA_DEPENDENCIES: tuple = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in vars(cls):
            entry = entry_for(cls.code)
            if entry is None:
                raise TypeError(f"{cls.__name__}: {cls.code} is not in the catalogue")
            cls.name, cls.severity, cls.default_on = entry.name, entry.severity, entry.default_on
        if "VALID" in vars(cls):
            cls.VALID = [source(case) for case in cls.VALID]

    def __init__(self, context: RuleContext | None = None) -> None:
        super().__init__()
        self.context = context or RuleContext()
        self.violations: list[Violation] = []
        self.tree_metadata: Metadata | None = None  # set by the engine for each file

    def position_of(self, node: cst.CSTNode) -> CodeRange:
        """Where `node` is in the source (positions are computed on first use)."""
        assert self.tree_metadata is not None
        return self.tree_metadata.position(node)

    def place(self, nodes: Iterable[cst.CSTNode]) -> None:
        """Computes the positions of `nodes` at once: before asking `line_of` for many
        nodes, so the statements around them are found in one walk, not one each."""
        assert self.tree_metadata is not None
        self.tree_metadata.place(nodes)

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
        severity: str | None = None,
        related: tuple[cst.CSTNode, ...] = (),
    ) -> None:
        self.violations.append(
            Violation(node, message, replacement, fix_title, unsafe_fix, imports, severity, related)
        )

    @classmethod
    def documentation(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()

    @classmethod
    def description(cls) -> str:
        """The first paragraph of 'What it does', on one line."""
        doc = cls.documentation()
        body = doc.split("## What it does", 1)[-1].strip().split("\n\n", 1)[0]
        return " ".join(body.split())

    @classmethod
    def summary(cls) -> str:
        """The first sentence of 'What it does' up to its list of cases (a colon or a
        dash outside parentheses and code), for tables and SARIF short descriptions."""
        text = cls.description()
        depth, code = 0, False
        for i, char in enumerate(text):
            if char == "`":
                code = not code
            elif code:
                continue
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
            elif depth == 0 and (char == ":" or text.startswith(" — ", i)):
                return text[:i].rstrip() + "."
            elif depth == 0 and char in ".!?" and (i + 1 == len(text) or text[i + 1 : i + 3].strip()[:1].isupper()):
                return text[: i + 1]
        return text
