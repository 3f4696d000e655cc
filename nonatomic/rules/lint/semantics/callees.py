"""Which function a call really calls.

`CalleeProvider` gives every `Call` node the dotted name of its callee, with
imports and aliases followed (`from requests import post as p; p(u)` is
`requests.post`) and with the simple object types of `objects.yaml` followed
through assignments (`s = requests.Session(); s.get(u)` is
`requests.Session.get`), and with clients known by construction: an object of a
class of a client package, a parameter or attribute annotated with one, what a
function, method or property annotated to return one (or returning one) gives back
(`self._client` of `@cached_property def _client(self) -> httpx.AsyncClient`).
A variable's name never says what it holds.  It is one cheap pass, instead of libcst's full scope
analysis, which costs several times a parse: it is flow-insensitive inside a
function and knows nothing of inheritance (a factory is known only once its
definition is seen), which is precise enough for the call shapes the rules look for.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst.metadata import BatchableMetadataProvider

from nonatomic.rules.lint.semantics.tool_config import client_class, constructor_types

_ALIAS, _TYPE = "alias", "type"
_PROPERTIES = {"property", "cached_property"}
_OPTIONAL = {"Optional", "Union"}


def dotted_name(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names, None for anything else."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = dotted_name(expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    return None


_TYPE_NAMES: dict[int, frozenset[str]] = {}


def _type_names(constructors: Mapping[str, str]) -> frozenset[str]:
    """The type names the constructors make (one set per constructors table)."""
    found = _TYPE_NAMES.get(id(constructors))
    if found is None:
        found = _TYPE_NAMES[id(constructors)] = frozenset(constructors.values())
    return found


def own_class(name: str) -> bool:
    """A class of the package's own, imported relatively (`.memory.GraphMemory`): its methods
    are defined elsewhere in the package, so what they do is not seen here."""
    return name.startswith(".") and name.rsplit(".", 1)[-1][:1].isupper()


def _last_name(expr: cst.BaseExpression) -> str | None:
    """`cached_property` of `functools.cached_property`; a call's callee's."""
    if isinstance(expr, cst.Call):
        expr = expr.func
    name = dotted_name(expr)
    return name.rsplit(".", 1)[-1] if name else None


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def source(node: cst.CSTNode) -> str:
    """A node's code on one line, for messages and for comparing expressions."""
    return " ".join(cst.Module([]).code_for_node(node).split())


class CalleeProvider(BatchableMetadataProvider[str | None]):
    # The engine sets this to the shipped constructors plus the user's.
    constructors: Mapping[str, str] | None = None

    def __init__(self) -> None:
        super().__init__()
        if CalleeProvider.constructors is None:
            CalleeProvider.constructors = constructor_types({})
        self._scopes: list[dict[str, tuple[str, str | None]]] = [{}]
        self._class_attrs: list[dict[str, str]] = []
        self._class_returns: list[dict[str, str]] = []  # method -> the type it returns
        self._class_depths: list[int] = []  # the function depth each open class body is at
        self._returns: dict[str, str] = {}  # module function -> the type it returns
        # open functions: [name, where it is defined ("class", "module", None), the type it returns]
        self._returning: list[list] = []
        self._call_types: dict[cst.Call, str] = {}

    # -- scopes -----------------------------------------------------------
    def _bind(self, name: str, kind: str, value: str | None) -> None:
        self._scopes[-1][name] = (kind, value)

    def _lookup(self, name: str) -> tuple[str, str | None] | None:
        for scope in reversed(self._scopes):
            if name in scope:
                return scope[name]
        return None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._class_depths and self._class_depths[-1] == len(self._scopes):
            where = "property" if any(_last_name(d.decorator) in _PROPERTIES for d in node.decorators) else "class"
        else:
            where = "module" if len(self._scopes) == 1 else None
        returns = self._annotated(node.returns)
        self._returning.append([node.name.value, where, returns])
        scope: dict[str, tuple[str, str | None]] = {}
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            # shadows any import of that name; an annotation gives its type (`session: requests.Session`)
            scope[param.name.value] = (_TYPE, self._annotated(param.annotation))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope[star.name.value] = (_TYPE, None)
        self._scopes.append(scope)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()
        name, where, returns = self._returning.pop()
        if returns is None:
            return
        if where == "property":
            self._class_attrs[-1].setdefault(name, returns)  # `self._client`
        elif where == "class":
            self._class_returns[-1][name] = returns  # `self._session()`
        elif where == "module":
            self._returns[name] = returns

    def leave_Return(self, original_node: cst.Return) -> None:
        if self._returning and self._returning[-1][2] is None and original_node.value is not None:
            self._returning[-1][2] = self.type_of(original_node.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_attrs.append({})
        self._class_returns.append({})
        self._class_depths.append(len(self._scopes))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_attrs.pop()
        self._class_returns.pop()
        self._class_depths.pop()

    # -- imports ----------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, _ALIAS, full)
            else:
                root = full.split(".", 1)[0]
                self._bind(root, _ALIAS, root)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module) if node.module is not None else ""
        prefix = "." * len(node.relative) + (module or "")
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else None
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, _ALIAS, f"{prefix}.{name}" if prefix else name)

    # -- resolution ---------------------------------------------------------
    def qualify(self, expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.Name):
            found = self._lookup(expr.value)
            if found is None:
                return expr.value
            kind, value = found
            # A local (a parameter, or a variable of unknown type) is not a module:
            # rules that only need the method name use `dotted_name` instead.
            return value if kind == _ALIAS else None
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            base_type = self.type_of(expr.value)
            if base_type is not None:
                return f"{base_type}.{attr}"
            base = self.qualify(expr.value)
            return f"{base}.{attr}" if base else None
        return None

    def type_of(self, expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.Name):
            found = self._lookup(expr.value)
            return found[1] if found and found[0] == _TYPE else None
        if isinstance(expr, cst.Attribute):
            if isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
                if self._class_attrs:
                    return self._class_attrs[-1].get(expr.attr.value)
            return None
        if isinstance(expr, cst.Call):
            return self._call_types.get(expr)
        if isinstance(expr, cst.Await):
            return self.type_of(expr.expression)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            element = self.type_of(expr.elt)
            return f"{element}[]" if element else None
        if isinstance(expr, (cst.List, cst.Set)) and expr.elements:
            element = self.type_of(expr.elements[0].value)
            return f"{element}[]" if element else None
        return None

    def _annotated(self, annotation: cst.Annotation | None) -> str | None:
        """The type an annotation names, when it is a type of `objects.yaml`, one of its
        constructors (`AuthorizedSession` is a requests Session) or a class of a client
        package; through `X | None` and `Optional[X]`."""
        return self._annotation_type(annotation.annotation) if annotation is not None else None

    def _annotation_type(self, expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.SimpleString):  # a forward reference: `"httpx.Client"`
            try:
                expr = cst.parse_expression(expr.evaluated_value)
            except (cst.ParserSyntaxError, TypeError):
                return None
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
            return self._annotation_type(expr.left) or self._annotation_type(expr.right)
        if isinstance(expr, cst.Subscript) and _last_name(expr.value) in _OPTIONAL:
            parts = [e.slice.value for e in expr.slice if isinstance(e.slice, cst.Index)]
            return next((found for part in parts if (found := self._annotation_type(part))), None)
        name = self.qualify(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        if name is None:
            return None
        constructors = self.constructors or {}
        if name in _type_names(constructors):
            return name
        return constructors.get(name) or (name if client_class(name) or own_class(name) else None)

    def leave_Call(self, original_node: cst.Call) -> None:
        callee = self.qualify(original_node.func)
        self.set_metadata(original_node, callee)
        made = self._made_by(original_node.func, callee)
        if made is not None:
            self._call_types[original_node] = made

    def _made_by(self, func: cst.BaseExpression, callee: str | None) -> str | None:
        """The type a call returns: a constructor's, a client class's, or a factory's seen so far."""
        if callee is not None:
            made = self.constructors.get(callee)  # type: ignore[union-attr]
            if made is not None or client_class(callee) or own_class(callee):
                return made or callee
            return self._returns.get(callee) if isinstance(func, cst.Name) else None
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls")
            and self._class_returns
        ):
            return self._class_returns[-1].get(func.attr.value)
        return None

    # -- bindings -------------------------------------------------------------
    def _assign_to(self, target: cst.BaseExpression, type_name: str | None) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, _TYPE, type_name)
        elif (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value in ("self", "cls")
            and self._class_attrs
        ):
            attrs = self._class_attrs[-1]
            if type_name is None:
                attrs.pop(target.attr.value, None)
            else:
                attrs[target.attr.value] = type_name
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._assign_to(element.value, None)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        if _is_none(original_node.value):
            return  # `self._client = None`: not made yet, or closed; still the same client
        type_name = self.type_of(original_node.value) or self._module(original_node.value)
        for target in original_node.targets:
            self._assign_to(target.target, type_name)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        value = original_node.value
        type_name = (self.type_of(value) or self._module(value)) if value is not None else None
        type_name = type_name or self._annotated(original_node.annotation)
        target = original_node.target
        if (value is None or _is_none(value)) and self._class_depths and self._class_depths[-1] == len(self._scopes):
            # A class-body declaration (`http: httpx.Client`) types `self.http`.
            if isinstance(target, cst.Name) and type_name is not None:
                self._class_attrs[-1][target.value] = type_name
        elif value is not None or type_name is not None:  # `x: int` alone binds nothing
            self._assign_to(target, type_name)

    def _module(self, value: cst.BaseExpression) -> str | None:
        """A module (or an attribute of one) held in a variable or attribute, as its imports
        name it (`self.urllibrequest = urllib.request`): calls through it resolve to it."""
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return None
        root = value
        while isinstance(root, cst.Attribute):
            root = root.value
        found = self._lookup(root.value) if isinstance(root, cst.Name) else None
        return self.qualify(value) if found is not None and found[0] == _ALIAS else None

    def leave_WithItem(self, original_node: cst.WithItem) -> None:
        if original_node.asname is not None:
            self._assign_to(original_node.asname.name, self.type_of(original_node.item))

    def visit_For_body(self, node: cst.For) -> None:
        collection = self.type_of(node.iter)
        element = collection[:-2] if collection and collection.endswith("[]") else None
        self._assign_to(node.target, element)
