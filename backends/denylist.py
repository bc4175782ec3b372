"""Raw LLDB commands that need an explicit allowUnsafe.

A raw command comes from a person or an agent through any front end; the
session checks it here before it reaches a backend. Each denied pattern says
what to use instead. With allow_unsafe=True the command runs, and the result is
marked so that the answer can say [UNSAFE] and the activity log can record it.

lldb accepts any unambiguous prefix of a command word (`pla sh` is
`platform shell`) and user aliases; the check expands prefixes of the built-in
words, and anything it cannot tell apart is judged by its expansion.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from .errors import CommandDenied, InvalidInput


@dataclass(frozen=True)
class DeniedPattern:
    words: tuple[str, ...]  # the command words, fully spelled
    reason: str
    alternative: str


DENIED: tuple[DeniedPattern, ...] = (
    DeniedPattern(("platform", "shell"), "runs arbitrary shell commands",
                  "use the debugger's own commands or your terminal"),
    DeniedPattern(("command", "script"), "runs arbitrary Python inside lldb",
                  "not available; use print/evaluate for expressions"),
    DeniedPattern(("script",), "runs arbitrary Python inside lldb (it is `command script` "
                  "by another name)", "not available; use print/evaluate for expressions"),
    DeniedPattern(("command", "source"), "runs commands from an arbitrary file",
                  "not available; send the commands one at a time"),
    DeniedPattern(("process", "kill"), "kills the program being debugged",
                  "use stop (debug_terminate) to end the session"),
    DeniedPattern(("process", "destroy"), "destroys the program being debugged",
                  "use stop (debug_terminate) to end the session"),
    DeniedPattern(("memory", "write"), "changes the program's memory",
                  "read-only inspection: memory read, print"),
    DeniedPattern(("register", "write"), "changes the program's registers",
                  "read-only inspection: register read"),
    DeniedPattern(("settings", "set", "target.run-args"), "changes the launch arguments",
                  "pass the arguments to run/debug_launch"),
    DeniedPattern(("target", "delete"), "removes the debug target",
                  "use detach (debug_detach)"),
)

# lldb's top-level words and the sub-words the denylist looks at, for prefix expansion.
TOP_WORDS = (
    "apropos", "breakpoint", "command", "disassemble", "expression", "frame", "gdb-remote",
    "gui", "help", "kdp-remote", "language", "log", "memory", "platform", "plugin",
    "process", "quit", "register", "script", "session", "settings", "source", "statistics",
    "target", "thread", "trace", "type", "version", "watchpoint",
)
SUB_WORDS = {
    "platform": ("connect", "disconnect", "file", "get-file", "get-permissions", "get-size",
                 "list", "mkdir", "process", "put-file", "select", "settings", "shell",
                 "status", "target-install"),
    "command": ("alias", "container", "delete", "history", "regex", "script", "source",
                "unalias"),
    "process": ("attach", "connect", "continue", "detach", "handle", "interrupt", "kill",
                "launch", "load", "plugin", "save-core", "signal", "status", "trace",
                "unload", "destroy"),
    "memory": ("find", "history", "read", "region", "tag", "write"),
    "register": ("info", "read", "write"),
    "target": ("create", "delete", "dump", "list", "modules", "select", "show-launch-environment",
               "stop-hook", "symbols", "variable"),
    "settings": ("append", "clear", "insert-after", "insert-before", "list", "remove",
                 "replace", "set", "show", "write", "read"),
}
# Built-in aliases that reach a denied command in one word.
ALIASES = {
    "kill": ("process", "kill"),
    "shell": ("platform", "shell"),
}


@dataclass(frozen=True)
class UnsafeBypass:
    """Returned when a denied command runs because allow_unsafe was set."""

    command: str
    reason: str
    marker: str = "[UNSAFE]"


def _expand(word: str, choices: tuple[str, ...]) -> str:
    if word in choices:
        return word
    matches = [c for c in choices if c.startswith(word)]
    return matches[0] if len(matches) == 1 else word


def normalize(command: str) -> list[str]:
    """The command's words with lldb's prefixes and one-word aliases expanded."""
    text = command.strip()
    if text.startswith("!"):
        return []  # history expansion: no command of its own
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        words = text.split()
    if not words:
        return []
    head = words[0].lower()
    if head in ALIASES:
        return [*ALIASES[head], *words[1:]]
    head = _expand(head, TOP_WORDS)
    out = [head, *words[1:]]
    if head in SUB_WORDS and len(words) > 1:
        out[1] = _expand(words[1].lower(), SUB_WORDS[head])
    return out


def _matches(words: list[str], pattern: DeniedPattern) -> bool:
    if len(words) < len(pattern.words):
        return False
    return all(got.lower() == want for got, want in zip(words, pattern.words))


def _denied(words: list[str]) -> DeniedPattern | None:
    for pattern in DENIED:
        if _matches(words, pattern):
            return pattern
    # `expression @import Foo` loads frameworks into the program.
    if words and words[0] in ("expression", "expr", "e", "p", "po", "print", "call"):
        rest = " ".join(w for w in words[1:] if not w.startswith("-"))
        if rest.lstrip().startswith("@import"):
            return DeniedPattern(("expression", "@import"), "loads frameworks into the program",
                                 "an expression without @import")
    return None


def check_lldb_command(command: str, allow_unsafe: bool = False) -> UnsafeBypass | None:
    """None when `command` is safe; an UnsafeBypass marker when it is denied but
    allow_unsafe was set; CommandDenied (naming the safe alternative) otherwise."""
    if not command or not command.strip():
        raise InvalidInput("The lldb command is empty; give one, e.g. 'bt' or 'frame variable'.")
    if "\n" in command or "\r" in command:
        raise InvalidInput("Give one lldb command per call, on a single line.")
    words = normalize(command)
    pattern = _denied(words)
    if pattern is None:
        return None
    spelled = " ".join(pattern.words)
    if allow_unsafe:
        return UnsafeBypass(command=command, reason=f"{spelled}: {pattern.reason}")
    raise CommandDenied(
        f"'{spelled}' is denied: it {pattern.reason}. Instead: {pattern.alternative}. "
        "To run it anyway, ask the user, then pass allowUnsafe: true.",
        command=command,
        pattern=spelled,
        alternative=pattern.alternative,
    )
