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


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def is_false(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Name) and expr.value == "False") or (
        isinstance(expr, cst.Integer) and expr.value == "0"
    )


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`call` with `name=value` set: replaced if present, else appended."""
    existing = keyword(call, name)
    if existing is not None:
        return call.deep_replace(existing, existing.with_changes(value=value))
    new = cst.Arg(
        keyword=cst.Name(name),
        value=value,
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    if args:
        last_comma = args[-1].comma
        if isinstance(last_comma, cst.Comma):
            # A trailing comma (a multi-line call): one more line, same layout
            # (the line break after `(`, without the comment that line may carry).
            line_break = call.whitespace_before_args
            if isinstance(line_break, cst.ParenthesizedWhitespace):
                line_break = line_break.with_changes(first_line=cst.TrailingWhitespace())
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=line_break))
            new = new.with_changes(comma=last_comma)
        else:
            args[-1] = args[-1].with_changes(
                comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            )
    return call.with_changes(args=[*args, new])
