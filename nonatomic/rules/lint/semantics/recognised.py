"""The README's table of what the linter recognises, generated from the rule packs
(`retry.yaml`, `tools.yaml`, `objects.yaml`, `timeouts.yaml`), so that the table
cannot drift from what the rules know.  No libcst here.
"""

from __future__ import annotations

from typing import Any

from nonatomic.rules.lint.semantics.packs import load_pack

START, END = "<!-- recognised: generated from nonatomic/rules/*.yaml -->", "<!-- /recognised -->"


def _code(names: Any) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _retry_rows() -> list[tuple[str, str, str]]:
    pack = load_pack("retry")
    rows = []
    for entry in pack["constructs"]:
        roles = {**entry.get("roles", {}), **entry.get("policy", {}).get("roles", {})}
        read = "; ".join(f"{role}: {_code(where.get('keywords', ()))}" for role, where in roles.items()
                         if where.get("keywords"))
        what = entry.get("label") or entry["library"]
        forms = "/".join(entry["forms"])
        rows.append((f"retry ({forms})", f"{what}: {_code(entry['names'])}", read or "its documented defaults"))
    rows.append(("retry (method)", f"LangChain: `.{pack['with_retry']['method']}()`",
                 _code(k for role in pack["with_retry"]["roles"].values() for k in role["keywords"])))
    policy = pack["retry_policy"]
    rows.append(("retry (policy)", f"LangGraph: {_code(policy['add_node'])} and {_code(policy['decorators'])} "
                 f"given {_code(policy['keywords'])}",
                 _code(k for role in policy["roles"].values() for k in role["keywords"])))
    rows.append(("retry (loop)", "hand-written `for`/`while` retry loops, the module's own retry helpers",
                 f"sleeps {_code(pack['sleeps'])}, counters {_code(pack['counters'])}"))
    return rows


def _tool_rows() -> list[tuple[str, str, str]]:
    pack = load_pack("tools")
    wrappers = pack["tool_wrappers"]
    annotations = pack["tool_annotations"]
    return [
        ("tool (decorator)", _code(f"@{name}" for name in pack["tool_decorators"]), "the function's name and body"),
        ("tool (decorator method)", _code(f"@<server or agent>.{name}" for name in pack["tool_decorator_methods"]),
         f"`{annotations['keyword']}=`: {_code([annotations['read_only'], annotations['idempotent'], annotations['destructive']])}"),
        ("tool (wrapper)", _code(f"{name}(...)" for name in wrappers["names"]),
         f"the function given as {_code(wrappers['keywords'])} or first"),
        ("tool (list)", _code(f"{name}=[...]" for name in pack["tool_lists"]), "the functions listed"),
        ("tool (class)", _code(pack["tool_base_classes"]), f"methods {_code(pack['tool_methods'])}"),
        ("tool (by name)", _code(f".{name}(\"<tool>\", ...)" for name in pack["tool_dispatchers"]["methods"]),
         "the tool name, through the verb table"),
    ]


def _client_rows() -> list[tuple[str, str, str]]:
    objects = load_pack("objects")
    types = objects["types"]
    timeouts = {name for entry in load_pack("timeouts")["calls"] for name in entry["names"]}
    rows = [("client (by construction)", f"an object of a class of {_code(objects['client_packages'])}",
             "calls (never a variable's name)")]
    for type_name, makers in types.items():
        timed = any(maker in timeouts for maker in makers) or any(n.startswith(type_name + ".") for n in timeouts)
        rows.append(("client", f"`{type_name}` from {_code(makers)}",
                     "calls, and their timeouts" if timed else "calls"))
    return rows


def table() -> str:
    """The Markdown table, between its markers."""
    lines = [START, "", "| kind | recognised | read from it |", "|---|---|---|"]
    for kind, what, read in [*_retry_rows(), *_tool_rows(), *_client_rows()]:
        lines.append(f"| {kind} | {what.replace('|', '/')} | {read.replace('|', '/')} |")
    return "\n".join([*lines, "", END])
