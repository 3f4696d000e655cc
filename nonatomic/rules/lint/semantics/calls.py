"""Reading a call's arguments: keywords, positions and the stars that hide them."""

from __future__ import annotations

import libcst as cst


def keyword(call: cst.Call, *names: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in names:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    """Plain positional arguments, up to the first `*args`."""
    found = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            break
        found.append(arg)
    return found


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star == "*" for arg in call.args)


def has_star_kwargs(call: cst.Call) -> bool:
    return any(arg.star == "**" for arg in call.args)


def argument(call: cst.Call, names: tuple[str, ...], position: int | None) -> cst.Arg | None:
    """The argument passed under one of `names`, or at `position`."""
    found = keyword(call, *names)
    if found is None and position is not None:
        plain = positional(call)
        if position < len(plain):
            found = plain[position]
    return found


def is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def is_false(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Name) and expr.value == "False") or (
        isinstance(expr, cst.Integer) and expr.value == "0"
    )


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`call` with `name=value` set: replaced if present, else appended after the last
    argument, in the call's layout: on a line of its own where each argument has one,
    else on the last argument's line.  Comments stay on the lines they were on."""
    existing = keyword(call, name)
    if existing is not None:
        return call.deep_replace(existing, existing.with_changes(value=value))
    new = cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    # What separates the last argument from the one before (or from the `(`): a line
    # break there means one argument per line.
    separator = args[-2].comma.whitespace_after if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else (
        call.whitespace_before_args
    )
    trailing = isinstance(last.comma, cst.Comma)
    # What follows the last argument up to `)`: its comma's whitespace, or its own.
    closing = last.comma.whitespace_after if trailing else last.whitespace_after_arg
    if isinstance(separator, cst.ParenthesizedWhitespace) and isinstance(closing, cst.ParenthesizedWhitespace):
        # The last line's comment stays on it; the new argument's line ends as it did.
        between: cst.BaseParenthesizableWhitespace = separator.with_changes(
            first_line=closing.first_line, empty_lines=[]
        )
        closing = closing.with_changes(first_line=cst.TrailingWhitespace())
    else:
        between = cst.SimpleWhitespace(" ")
    before_comma = last.comma.whitespace_before if trailing else cst.SimpleWhitespace("")
    args[-1] = last.with_changes(
        comma=cst.Comma(whitespace_before=before_comma, whitespace_after=between),
        whitespace_after_arg=last.whitespace_after_arg if trailing else cst.SimpleWhitespace(""),
    )
    if trailing:
        new = new.with_changes(comma=cst.Comma(whitespace_after=closing))
    else:
        new = new.with_changes(whitespace_after_arg=closing)
    return call.with_changes(args=[*args, new])
