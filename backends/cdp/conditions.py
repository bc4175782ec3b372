"""Conditions, hit counts and logpoints, all expressed as one V8 breakpoint
condition: V8 evaluates it in the paused frame at every hit and pauses only
when it is truthy.

- A logpoint calls console.log with the interpolated message and answers
  false, so the program never stops there.
- A hit count is kept in a counter on the global object (under a registered
  Symbol, so it stays out of the Global scope's names), keyed by file and line
  so it survives the file's breakpoints being set again.

Hit conditions follow Node's debuggers: `N` (same as `>= N`), `>= N`, `> N`,
`== N` (or `= N`, `=== N`), `< N`, `<= N`, `% N` (every Nth hit).
"""

from __future__ import annotations

import json
import re

from ..errors import InvalidInput
from ..models import BreakpointSpec

HITS_SYMBOL = 'Symbol.for("tui-debugger.hits")'

_HIT_CONDITION = re.compile(r"^\s*(>=|<=|===|==|=|>|<|%)?\s*(\d+)\s*$")


def hit_test(hit_condition: str, counter: str = "n") -> str:
    """A JavaScript test of `counter` for a hit condition such as '>= 3'."""
    match = _HIT_CONDITION.match(hit_condition)
    if not match:
        raise InvalidInput(
            f"Hit condition {hit_condition!r} is not understood. Use N (same as >= N), "
            ">= N, > N, == N, < N, <= N, or % N (every Nth hit)."
        )
    operator, number = match.group(1) or ">=", int(match.group(2))
    if operator == "%":
        if number == 0:
            raise InvalidInput("Hit condition '% 0' never matches; use % 1 or more.")
        return f"{counter} % {number} === 0"
    if operator in ("=", "==", "==="):
        operator = "==="
    return f"{counter} {operator} {number}"


def split_log_message(message: str) -> tuple[list[str], list[str]]:
    """'x is {x}, y is {y}' -> (['x is ', ', y is ', ''], ['x', 'y']). Braces
    nest, so {({a: 1}).a} is one expression."""
    literals: list[str] = []
    expressions: list[str] = []
    current: list[str] = []
    depth = 0
    expression: list[str] = []
    for ch in message:
        if depth == 0:
            if ch == "{":
                depth = 1
                expression = []
            else:
                current.append(ch)
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                literals.append("".join(current))
                current = []
                expressions.append("".join(expression).strip())
                continue
        expression.append(ch)
    if depth:
        # An unclosed brace is text, not an expression.
        current.append("{" + "".join(expression))
    literals.append("".join(current))
    return literals, expressions


def log_statement(message: str) -> str:
    """console.log with a %s format, so objects print as Node's inspect does."""
    literals, expressions = split_log_message(message)
    format_parts = []
    for i, literal in enumerate(literals):
        format_parts.append(literal.replace("%", "%%"))
        if i < len(expressions):
            format_parts.append("%s")
    args = [json.dumps("".join(format_parts), ensure_ascii=False)]
    args += [f"(\n{expr}\n)" for expr in expressions if expr]
    return f"console.log({', '.join(args)})"


def build_condition(spec: BreakpointSpec, key: str) -> str | None:
    """The V8 condition for a spec, or None for a plain breakpoint. `key`
    identifies the breakpoint's hit counter."""
    condition = (spec.condition or "").strip()
    hit = (spec.hit_condition or "").strip()
    log = spec.log_message
    if not hit and not log:
        return condition or None
    body = []
    if condition:
        # Newlines keep a trailing // comment in the user's text from eating the rest.
        body.append(f"if (!(\n{condition}\n)) return false;")
    if hit:
        test = hit_test(hit, "n")
        key_js = json.dumps(key)
        body.append(
            f"const hits = globalThis[{HITS_SYMBOL}] ??= {{}};"
            f" const n = hits[{key_js}] = (hits[{key_js}] || 0) + 1;"
            f" if (!({test})) return false;"
        )
    if log is not None and log != "":
        body.append(f"{log_statement(log)}; return false;")
    else:
        body.append("return true;")
    return "(() => { " + " ".join(body) + " })()"
