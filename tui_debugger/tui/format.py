"""Small pure helpers shared by the panes: how paths, origins and breakpoints read
on screen. Kept free of Textual so they are trivial to test."""

from __future__ import annotations

import os
import re

from backends.models import Breakpoint

#: How each client origin is named on screen. The agent is what people call the MCP client.
WHO = {"tui": "you", "mcp": "agent", "cli": "cli", "session": "session", "user": "you",
       "restored": "restored", "web": "web"}
#: One letter in the breakpoint gutter for breakpoints someone else set.
WHO_LETTER = {"mcp": "A", "cli": "C", "session": "S", "restored": "R", "web": "W"}


def own_origin() -> str:
    """How this TUI names itself to the session: "web" when it is drawn in a
    browser tab (`tui-debugger serve` runs it under Textual's web driver, through
    textual-serve), else "tui". The other clients then see the tab as "web"."""
    driver = os.environ.get("TEXTUAL_DRIVER", "")
    return "web" if "web_driver" in driver or "web_tab" in driver else "tui"


def who(origin: str | None) -> str:
    return WHO.get(origin or "session", origin or "session")


#: Front ends as a sentence names them ("The CLI stepped over").
WHO_PROPER = {"cli": "the CLI", "mcp": "the agent", "tui": "you", "user": "you",
              "web": "the browser"}


def who_proper(origin: str | None, capital: bool = False) -> str:
    name = WHO_PROPER.get(origin or "session", f"the {who(origin)}")
    return name[0].upper() + name[1:] if capital else name


def display_path(path: str | None, cwd: str | None = None) -> str:
    """Paths relative to the working directory when they are under it: shorter, and
    the same on every machine (snapshots and screenshots depend on it)."""
    if not path:
        return "<no source>"
    base = cwd or os.getcwd()
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def breakpoint_glyph(bp: Breakpoint) -> str:
    """Readable without colour: ● plain, ◆ conditional, ▲ logpoint; hollow when disabled."""
    spec = bp.spec
    if spec.log_message:
        return "▲" if spec.enabled else "△"
    if spec.condition or spec.hit_condition:
        return "◆" if spec.enabled else "◇"
    return "●" if spec.enabled else "○"


def breakpoint_detail(bp: Breakpoint) -> str:
    spec = bp.spec
    parts = []
    if spec.condition:
        parts.append(f"if {spec.condition}")
    if spec.hit_condition:
        parts.append(f"hit {spec.hit_condition}")
    if spec.log_message:
        parts.append(f"log {spec.log_message}")
    if not spec.enabled:
        parts.append("disabled")
    if not bp.verified:
        parts.append("unverified")
    return ", ".join(parts)


def one_line(text: str, limit: int = 200) -> str:
    text = text.replace("\r", "").replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cut_middle(text: str, width: int) -> str:
    """`text` in `width` characters, cut in the middle: the start of a path and its
    file name stay, and a trailing `:LINE` is never cut (at 80 columns the Stack
    pane showed `inventory.p`, the Breakpoints pane `examples/inventory.`)."""
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    head, sep, line = text.rpartition(":")
    if sep and head and line.isdigit():
        room = width - len(sep + line)
        if room >= 2:
            return _cut_path(head, room) + sep + line
        return (sep + line)[-width:]  # the line number, at least
    return _cut_path(text, width)


def _cut_path(path: str, width: int) -> str:
    if len(path) <= width:
        return path
    if width < 2:
        return "…"[:width]
    base = os.path.basename(path)
    if 0 < len(base) <= width - 3:
        head = width - 1 - len(base)  # the whole file name, and the start of its directory
    else:
        head = (width - 1) // 3
    return path[:head] + "…" + path[len(path) - (width - 1 - head):]


def cut_end(text: str, width: int) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def fit_widths(natural: list[int], available: int, priority: list[int | tuple[int, int]],
               minimum: list[int]) -> list[int]:
    """Column widths that fit `available` cells (padding already taken out): each
    column gets its minimum, then the columns in `priority` order get what they
    need, so the most useful column wins and the least useful is cut. An entry
    (index, cap) gives that column up to `cap` at that point; it can come again
    later for the rest."""
    widths = [min(m, n) for m, n in zip(minimum, natural)]
    left = available - sum(widths)
    for entry in priority:
        index, cap = entry if isinstance(entry, tuple) else (entry, natural[entry])
        more = max(0, min(min(cap, natural[index]) - widths[index], left))
        widths[index] += more
        left -= more
    return widths


#: A name and the members reached from it: item.quantity, node->next.
_NAME_CHAIN = re.compile(r"[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*")
#: Words of the languages we debug that name no value.
KEYWORDS = frozenset("""
False None True and as assert async await break class continue def del elif else except
finally for from global if import in is lambda nonlocal not or pass raise return try while
with yield auto case char const default do double enum extern float goto int long register
short signed sizeof static struct switch typedef union unsigned void volatile bool true false
nullptr NULL new delete this let var function typeof instanceof undefined null func go defer
chan map range package type interface select fn mut impl pub use mod match loop
""".split())


def expressions_in(line: str) -> list[tuple[int, int, str]]:
    """The names and dotted names of a source line (`item.quantity`), as
    (start, end, text), keywords left out: what Inspect offers on that line."""
    found = []
    for match in _NAME_CHAIN.finditer(line):
        if match.group(0) in KEYWORDS:
            continue
        found.append((match.start(), match.end(), match.group(0)))
    return found


def expression_at(line: str, column: int) -> str | None:
    """The dotted name under `column`, up to the part the column is on: on
    `item` of `item.quantity` it is `item`, on `quantity` the whole (as an
    editor's hover)."""
    for start, end, text in expressions_in(line):
        if start <= column < end:
            cut = re.match(r"[\w.\->\s]*?(?=(?:\s*(?:\.|->)\s*)|$)", line[start:end][column - start:])
            rest = len(cut.group(0)) if cut else end - column
            return line[start:column + rest].strip()
    return None


#: How debugpy shows a method bound to the value it lists (a list's `append`).
#: Its function variables are shown inline (so a local such as
#: `compare = operator.le` is seen), which also puts every method of a value
#: among the value's items and fields.
_BOUND_METHOD_PREFIXES = ("<built-in method ", "<bound method ", "<method-wrapper ")


def bound_method(value: str) -> bool:
    """Whether a value's child is one of the value's own methods: left out when a
    value is opened (its items and fields are what a person opened it for)."""
    return value.startswith(_BOUND_METHOD_PREFIXES)
