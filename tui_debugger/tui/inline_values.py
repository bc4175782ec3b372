"""Values inline in the source, at the selected frame (VS Code's inline values):
after each line of the frame's function up to the current one, the names it
uses that are locals of the frame, with their values: `total = 12.5, item = Item(…)`.

Which lines are the function's is read from the indentation: from the current
line up to the line that starts it (a `def`, or the first line less indented
than the body), at most MAX_LINES above; at a module's top level, MAX_LINES."""

from __future__ import annotations

import re

from .format import KEYWORDS, one_line

MAX_LINES = 40
#: a value's room, and a line's
VALUE_CHARS = 24
LINE_CHARS = 72
#: a name not reached through a dot (`item` in `item.sku`, not `sku`)
_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_STARTS_FUNCTION = re.compile(r"\s*(async\s+def|def|func|function|fn)\b")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def function_lines(lines: list[str], current: int) -> range:
    """The 1-based line numbers of the function around `current`, up to it."""
    if not 1 <= current <= len(lines):
        return range(0)
    body_indent = _indent(lines[current - 1])
    first = current
    for number in range(current - 1, max(0, current - MAX_LINES), -1):
        text = lines[number - 1]
        if not text.strip():
            continue
        first = number
        if body_indent and (_indent(text) < body_indent and _STARTS_FUNCTION.match(text)
                            or _indent(text) == 0):
            break
    return range(first, current + 1)


def inline_values(lines: list[str], current: int, values: dict[str, str]) -> dict[int, str]:
    """line number -> `name = value, …` for the lines of the frame's function."""
    if not values:
        return {}
    out = {}
    for number in function_lines(lines, current):
        text = lines[number - 1].split("#", 1)[0] if not lines[number - 1].lstrip().startswith(
            ("#include", "#define")) else ""
        seen: list[str] = []
        for match in _NAME.finditer(text):
            name = match.group(0)
            if name in values and name not in seen and name not in KEYWORDS:
                seen.append(name)
        if seen:
            shown = ", ".join(f"{name} = {one_line(values[name], VALUE_CHARS)}" for name in seen)
            out[number] = one_line(shown, LINE_CHARS)
    return out
