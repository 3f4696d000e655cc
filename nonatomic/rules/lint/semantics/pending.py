"""What code does with work it stopped waiting for.

Two questions about abandoned work, answered from the syntax of one function:

- `handles_tasks(scope, name)`: is a task, or a collection of tasks or
  futures (the `pending` set of `asyncio.wait`), cancelled, awaited again,
  handed on, stored or returned somewhere in `scope`, or only looked at
  (`len`, `if pending:`, logging) or regrouped (`tasks.append(t)`)?  Anything the analysis does not understand counts
  as handled: the rules using it must be quiet when unsure.
- `is_passive(handler)`: does an `except TimeoutError:` block only log,
  return, raise or pass, i.e. neither cancel the work nor record anything?
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from nonatomic.rules.lint.tree import walk

# Calls that only look at what they are given.
_INSPECTING = frozenset(
    {
        "len", "bool", "str", "repr", "print", "id", "type", "isinstance", "any", "all", "format",
        "debug", "info", "warning", "warn", "error", "exception", "critical", "log",
        "done", "cancelled", "get_name", "get_coro", "result",
    }
)
# Methods that only change which tasks a collection holds: `tasks.append(t)`, `pending.clear()`.
_MEMBERSHIP = frozenset({"append", "add", "extend", "update", "insert", "clear", "discard", "remove", "difference_update"})
# Calls whose result is the same tasks, to follow: `for t in list(pending)`.
_CONVERTING = frozenset({"list", "set", "tuple", "sorted", "frozenset", "iter", "enumerate"})
# Calls a passive handler may make: builtins and loggers, besides constructors (`raise ToolTimeout(...)`).
_PASSIVE_CALLS = _INSPECTING | frozenset(
    {"int", "float", "dict", "list", "tuple", "set", "dumps", "join", "getLogger", "time", "monotonic", "now"}
)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
# Nodes that bind the name in their `target` / `name` field rather than read it.
_BINDS_TARGET = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.Del)
_BINDS_NAME = (cst.AsName, cst.Param, cst.FunctionDef, cst.ClassDef)


def call_name(call: cst.Call) -> str | None:
    """The last name of a call's callee: `cancel` for `t.cancel()`, `len` for `len(x)`."""
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


def _target_names(target: cst.CSTNode) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _target_names(element.value)]
    return []


class _Uses(cst.CSTVisitor):
    """Each read of `name` in a tree, with its ancestors; binding occurrences are not reads."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.stack: list[cst.CSTNode] = []
        self.found: list[tuple[cst.Name, tuple[cst.CSTNode, ...]]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name) and node.value == self.name and self._is_read(node):
            self.found.append((node, tuple(self.stack)))
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def _is_read(self, node: cst.Name) -> bool:
        child: cst.CSTNode = node
        for parent in reversed(self.stack):
            if isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
                child = parent  # maybe an unpacking target: `done, pending = ...`
                continue
            if isinstance(parent, cst.Attribute):
                return parent.attr is not child
            if isinstance(parent, cst.Arg):
                return parent.keyword is not child
            if isinstance(parent, _BINDS_TARGET):
                return parent.target is not child
            if isinstance(parent, _BINDS_NAME):
                return parent.name is not child
            return True
        return True


def handles_tasks(
    scope: cst.CSTNode, name: str, considered: Callable[[cst.Name], bool] = lambda _: True
) -> bool:
    """Whether some read of `name` in `scope` (among those `considered`) does more than look."""
    uses = _Uses(name)
    walk.visit(scope, uses)
    return any(_use_handles(node, ancestors) for node, ancestors in uses.found if considered(node))


def _use_handles(node: cst.CSTNode, ancestors: tuple[cst.CSTNode, ...]) -> bool:
    if any(isinstance(a, cst.Return) for a in ancestors):
        return True  # the caller learns what is still running and owns it
    i = len(ancestors) - 1
    while i >= 0:
        parent = ancestors[i]
        if isinstance(parent, cst.Attribute):  # `t.cancel()`, `t.get_name()`, `t.name`
            grand = ancestors[i - 1] if i > 0 else None
            if isinstance(grand, cst.Call) and grand.func is parent:
                return parent.attr.value not in _INSPECTING | _MEMBERSHIP
            return False
        if isinstance(parent, cst.Arg):
            call = ancestors[i - 1]
            assert isinstance(call, cst.Call)
            name = call_name(call)
            if name in _CONVERTING:
                node, i = call, i - 2
                continue
            return name not in _INSPECTING
        if isinstance(parent, cst.For) and parent.iter is node:
            return any(handles_tasks(parent.body, target) for target in _target_names(parent.target))
        if isinstance(parent, cst.CompFor) and parent.iter is node:
            comprehension = next(a for a in reversed(ancestors[:i]) if isinstance(a, _COMPREHENSIONS))
            return any(handles_tasks(comprehension, target) for target in _target_names(parent.target))
        if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is node:
            return False
        if isinstance(
            parent,
            (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget, cst.FormattedStringExpression),
        ):
            return False
        return True  # stored, returned, awaited, put in a collection...
    return True


def catches_timeout(handler: cst.ExceptHandler) -> bool:
    """Whether an `except` clause catches a timeout: bare, `Exception`, or a `*Timeout*` class."""
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for element in types:
        expr = element.value if isinstance(element, cst.Element) else element
        last = expr.attr.value if isinstance(expr, cst.Attribute) else getattr(expr, "value", "")
        if isinstance(last, str) and ("Timeout" in last or last in ("Exception", "BaseException")):
            return True
    return False


def is_passive(handler: cst.ExceptHandler) -> bool:
    """Whether a handler only logs, passes, returns or raises: nothing that could cancel or record."""
    return _passive_block(handler.body)


def _passive_block(block: cst.BaseSuite) -> bool:
    if isinstance(block, cst.SimpleStatementSuite):
        return all(_passive_small(small) for small in block.body)
    assert isinstance(block, cst.IndentedBlock)
    return all(_passive_statement(statement) for statement in block.body)


def _passive_statement(statement: cst.BaseStatement) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return all(_passive_small(small) for small in statement.body)
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        return (
            _calls_are_passive(statement.test)
            and _passive_block(statement.body)
            and (orelse is None or (_passive_statement(orelse) if isinstance(orelse, cst.If) else _passive_block(orelse.body)))
        )
    return False


def _passive_small(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, (cst.Pass, cst.Continue, cst.Break, cst.Return, cst.Raise, cst.Expr)):
        return _calls_are_passive(small)
    if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        return all(isinstance(t, cst.Name) for t in targets) and _calls_are_passive(small)
    return False


class _ActiveCall(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.active = False

    def visit_Call(self, node: cst.Call) -> bool:
        name = call_name(node)
        if name is None or not (name in _PASSIVE_CALLS or name[:1].isupper()):
            self.active = True
        return not self.active


def _calls_are_passive(node: cst.CSTNode) -> bool:
    finder = _ActiveCall()
    walk.visit(node, finder)
    return not finder.active
