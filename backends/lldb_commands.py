"""Which raw LLDB commands run without allowUnsafe: an allowlist of read-only ones.

A raw command comes from a person or an agent through any front end. LLDB's
command language can run a shell (`platform shell`), Python (`script`,
`type summary add --python-script`), native code (`plugin load`), write files
anywhere (`log enable -f`, `memory read --outfile`, `settings write -f`,
`process save-core`), arm commands for the next stop (`target stop-hook add
-o`, `breakpoint command add`) and rename any of that (`command alias`,
`command regex`). A denylist cannot keep up with that, so without allowUnsafe
only the commands below run, each with the options listed for it.

The check understands LLDB's spelling: unique prefixes of command words
(`fr v` is `frame variable`) and the built-in aliases (`bt`, `v`, `p`, `x`,
`image`, ...). What it sends to LLDB is the command spelled out in full
(`thread backtrace -c 5`), never the user's alias: a built-in alias can be
redefined (`command alias bt platform shell ...`), a full command name cannot.

Everything here is linear in the length of the text and bounded by
MAX_COMMAND_CHARS, so no command can hold the event loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import CommandDenied, InvalidInput

#: Longer raw commands are refused before they are read.
MAX_COMMAND_CHARS = 8_192

LIST_NAME = "the read-only allowlist of LLDB commands"


@dataclass(frozen=True)
class Allowed:
    """One allowlisted command: its words spelled out and the options it may take."""

    words: tuple[str, ...]
    #: option name (short letter or long name) -> whether it takes a value
    options: dict[str, bool] = field(default_factory=dict)
    #: raw-input commands (expression, dwim-print) read everything after ` -- ` verbatim
    raw: bool = False


def _opts(spec: str) -> dict[str, bool]:
    """'c:count= s:start= u:unique' -> {'c': True, 'count': True, 's': ..., 'u': False, ...}."""
    out: dict[str, bool] = {}
    for item in spec.split():
        takes = item.endswith("=")
        for name in item.rstrip("=").split(":"):
            if name:
                out[name] = takes
    return out


_VALUE_FORMAT = (
    "A:show-all-children D:depth= F:flat G:gdb-format= L:location O:object-description "
    "P:ptr-depth= R:raw-output S:synthetic-type= T:show-types V:validate= Z:element-count= "
    "d:dynamic-type= f:format="
)
_EXPRESSION = _opts(
    _VALUE_FORMAT + " X:apply-fixits= a:all-threads= i:ignore-breakpoints= j:allow-jit= "
    "t:timeout= u:unwind-on-error= :persistent-result="
)

ALLOWED: tuple[Allowed, ...] = (
    Allowed(("help",), _opts("a:hide-aliases h:show-hidden-commands u:hide-user-commands")),
    Allowed(("apropos",)),
    Allowed(("version",)),
    Allowed(("thread", "backtrace"), _opts("c:count= e:extended= s:start=")),
    Allowed(("thread", "list")),
    Allowed(("thread", "info"), _opts("j:json s:stop-info")),
    Allowed(("thread", "select"), _opts("t:thread-id=")),
    Allowed(("frame", "info")),
    Allowed(("frame", "select"), _opts("r:relative=")),
    Allowed(("frame", "variable"),
            _opts(_VALUE_FORMAT + " a:no-args c:show-declaration g:show-globals l:no-locals "
                  "r:regex s:scope t:no-recognized-args")),
    Allowed(("target", "variable"),
            _opts(_VALUE_FORMAT + " c:show-declaration r:regex s:scope")),
    Allowed(("register", "read"), _opts("A:alternate G:gdb-format= a:all f:format= s:set=")),
    Allowed(("register", "info")),
    Allowed(("memory", "read"),
            _opts(_VALUE_FORMAT + " E:offset= c:count= l:num-per-line= r:force s:size= "
                  "t:type= x:language= :show-tags")),
    Allowed(("memory", "region"), _opts("a:all")),
    Allowed(("disassemble",),
            _opts(":force A:arch= C:context= F:flavor= a:address= b:bytes c:count= "
                  "e:end-address= f:frame k:kind l:line m:mixed n:name= p:pc r:raw "
                  "s:start-address=")),
    Allowed(("source", "list"),
            _opts("a:address= b:show-breakpoints c:count= f:file= l:line= n:name= r:reverse "
                  "s:shlib= y:joint-specifier=")),
    Allowed(("source", "info"),
            _opts("a:address= c:count= e:end-line= f:file= l:line= n:name= s:shlib=")),
    Allowed(("breakpoint", "list"),
            _opts("D:dummy-breakpoints b:brief f:full i:internal v:verbose")),
    Allowed(("watchpoint", "list"), _opts("b:brief f:full v:verbose")),
    Allowed(("target", "list")),
    Allowed(("target", "modules", "list"),
            _opts("A:arch S:symfile-unique a:address= b:basename d:directory f:fullpath "
                  "g:global h:header m:mod-time o:offset p:pointer r:ref-count s:symfile "
                  "t:triple u:uuid")),
    Allowed(("target", "modules", "lookup"),
            _opts(":show-variable-ranges A:all F:function= a:address= f:file= i:no-inlines "
                  "l:line= n:name= o:offset= r:regex s:symbol= t:type= v:verbose")),
    Allowed(("target", "modules", "dump", "symtab"), _opts("m:show-mangled-names s:sort=")),
    Allowed(("target", "modules", "dump", "sections")),
    Allowed(("target", "modules", "dump", "line-table"), _opts("v:verbose")),
    Allowed(("settings", "show")),
    Allowed(("settings", "list")),
    Allowed(("process", "status"), _opts("v:verbose")),
    Allowed(("type", "lookup"), _opts("h:show-help")),
    Allowed(("expression",), _EXPRESSION, raw=True),
    Allowed(("dwim-print",), _EXPRESSION, raw=True),
)
_BY_WORDS = {a.words: a for a in ALLOWED}

# Every word LLDB 19 resolves at each level (commands and built-in aliases), so a
# prefix is expanded only where LLDB itself would find it unique.
_TOP_COMMANDS = (
    "apropos", "breakpoint", "command", "diagnostics", "disassemble", "dwim-print",
    "expression", "frame", "gdb-remote", "gui", "help", "kdp-remote", "language", "log",
    "memory", "platform", "plugin", "process", "quit", "register", "scripting", "session",
    "settings", "source", "statistics", "target", "thread", "trace", "type", "version",
    "watchpoint",
)
# Built-in aliases: one-to-one ones map to the full words (plus fixed options);
# the regex ones (bt, f, up, down, list) have their own expansion below.
_ALIASES: dict[str, tuple[str, ...]] = {
    "add-dsym": ("target", "symbols", "add"), "attach": ("process", "attach"),
    "b": ("breakpoint", "set"), "c": ("process", "continue"),
    "call": ("expression", "--"), "continue": ("process", "continue"),
    "detach": ("process", "detach"), "di": ("disassemble",), "dis": ("disassemble",),
    "display": ("target", "stop-hook", "add"), "env": ("settings", "set", "target.env-vars"),
    "exit": ("quit",), "file": ("target", "create"), "finish": ("thread", "step-out"),
    "h": ("help",), "history": ("session", "history"), "image": ("target", "modules"),
    "j": ("thread", "jump"), "jump": ("thread", "jump"), "kill": ("process", "kill"),
    "n": ("thread", "step-over"), "next": ("thread", "step-over"),
    "nexti": ("thread", "step-inst-over"), "ni": ("thread", "step-inst-over"),
    "p": ("dwim-print", "--"), "parray": ("expression", "-Z"), "po": ("dwim-print", "-O", "--"),
    "poarray": ("expression", "-O", "-Z"), "print": ("dwim-print", "--"), "q": ("quit",),
    "r": ("process", "launch"), "rbreak": ("breakpoint", "set", "-r"),
    "re": ("register",), "run": ("process", "launch"), "s": ("thread", "step-in"),
    "sc": ("script",), "scr": ("script",), "scri": ("script",), "scrip": ("script",),
    "script": ("script",), "shell": ("platform", "shell"), "si": ("thread", "step-inst"),
    "sif": ("thread", "step-in", "-t"), "step": ("thread", "step-in"),
    "stepi": ("thread", "step-inst"), "t": ("thread", "select"),
    "tbreak": ("breakpoint", "set", "-o"), "undisplay": ("target", "stop-hook", "delete"),
    "v": ("frame", "variable"), "var": ("frame", "variable"), "vo": ("frame", "variable", "-O"),
    "x": ("memory", "read"),
    # regex aliases, expanded by _expand_regex_alias
    "bt": ("thread", "backtrace"), "f": ("frame", "select"), "up": ("frame", "select"),
    "down": ("frame", "select"), "l": ("source", "list"), "list": ("source", "list"),
}
_REGEX_ALIASES = {"bt", "f", "up", "down", "l", "list", "parray", "poarray"}
_SUB_COMMANDS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("thread",): ("backtrace", "continue", "exception", "info", "jump", "list", "plan",
                  "return", "select", "siginfo", "step-in", "step-inst", "step-inst-over",
                  "step-out", "step-over", "step-scripted", "trace", "until"),
    ("frame",): ("diagnose", "info", "recognizer", "select", "variable"),
    ("memory",): ("find", "history", "read", "region", "tag", "write"),
    ("register",): ("info", "read", "write"),
    ("target",): ("create", "delete", "dump", "list", "modules", "select",
                  "show-launch-environment", "stop-hook", "symbols", "variable"),
    ("target", "modules"): ("add", "dump", "list", "load", "lookup", "search-paths",
                            "show-unwind"),
    ("target", "modules", "dump"): ("ast", "line-table", "objfile", "pcm-info", "sections",
                                    "separate-debug-info", "symfile", "symtab"),
    ("breakpoint",): ("clear", "command", "delete", "disable", "enable", "list", "modify",
                      "name", "read", "set", "write"),
    ("watchpoint",): ("command", "delete", "disable", "enable", "ignore", "list", "modify",
                      "set"),
    ("source",): ("cache", "info", "list"),
    ("settings",): ("append", "clear", "insert-after", "insert-before", "list", "read",
                    "remove", "replace", "set", "show", "write"),
    ("type",): ("category", "filter", "format", "lookup", "summary", "synthetic"),
    ("process",): ("attach", "connect", "continue", "detach", "handle", "interrupt", "kill",
                   "launch", "load", "plugin", "save-core", "signal", "status", "trace",
                   "unload"),
}
_TOP_WORDS = tuple(sorted(set(_TOP_COMMANDS) | set(_ALIASES)))


@dataclass(frozen=True)
class Vetted:
    """What to send to LLDB for a raw command, and whether it bypassed the allowlist."""

    text: str
    unsafe: bool = False
    #: the command as resolved (e.g. 'platform shell'), for the log and the error
    resolved: str = ""
    marker: str = "[UNSAFE]"


def _resolve_word(word: str, choices: tuple[str, ...]) -> str | None:
    """LLDB's own rule: an exact name, else the one name this is a prefix of."""
    if word in choices:
        return word
    found = None
    for choice in choices:
        if choice.startswith(word):
            if found is not None:
                return None
            found = choice
    return found


_SPACE = " \t"


def tokenize(text: str) -> list[str]:
    """LLDB's argument splitting (whitespace; ", ' and ` quote; backslash escapes
    outside single quotes), in one linear pass. Unbalanced quotes end at the end
    of the text, as in LLDB."""
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in _SPACE:
            i += 1
        if i >= n:
            break
        parts: list[str] = []
        while i < n and text[i] not in _SPACE:
            ch = text[i]
            if ch in "\"'`":
                end = i + 1
                while end < n and text[end] != ch:
                    end += 2 if (text[end] == "\\" and ch != "'" and end + 1 < n) else 1
                body = text[i + 1:end]
                if ch == '"':
                    body = re.sub(r"\\(.)", r"\1", body)
                parts.append(body if ch != "`" else f"`{body}`")
                i = end + 1
            elif ch == "\\" and i + 1 < n:
                parts.append(text[i + 1])
                i += 2
            else:
                j = i
                while j < n and text[j] not in _SPACE and text[j] not in "\"'`\\":
                    j += 1
                j = max(j, i + 1)  # a lone backslash at the very end is itself
                parts.append(text[i:j])
                i = j
        tokens.append("".join(parts))
    return tokens


def _quote(token: str) -> str:
    if token and not any(c in token for c in " \t\"'`\\"):
        return token
    return '"' + token.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _deny(spelled: str, why: str) -> CommandDenied:
    return CommandDenied(
        f"'{spelled}' is not on {LIST_NAME} ({why}). Read-only inspection runs as is: "
        "bt, frame variable, p EXPR, memory read, register read, disassemble, image lookup, "
        "source list, breakpoint list (see docs/reliability.md for the whole list). Run control "
        "and breakpoints have their own commands (continue, next, break add). To run it "
        "anyway, ask the user, then pass allowUnsafe: true.",
        command=spelled, list="allowlist",
    )


def _check_options(allowed: Allowed, tokens: list[str], spelled: str) -> None:
    """Every option must be one the allowlist names for this command, written
    so that LLDB's parser (getopt_long_only, which also reads `-name` and
    unique prefixes of long names) cannot read it as another."""
    expect_value = False
    for token in tokens:
        if expect_value:
            expect_value = False
            continue
        if token == "--":
            return
        if not token.startswith("-") or token == "-" or re.fullmatch(r"-\d+", token):
            continue
        if token.startswith("--"):
            name, eq, _ = token[2:].partition("=")
            if name not in allowed.options or (eq and not allowed.options[name]):
                raise _deny(spelled, f"option {token.split('=')[0]} is not allowed here")
            expect_value = allowed.options[name] and not eq
            continue
        body = token[1:]
        if len(body) == 1:
            if body not in allowed.options:
                raise _deny(spelled, f"option {token} is not allowed here")
            expect_value = allowed.options[body]
            continue
        if body in allowed.options and len(body) > 1:  # -name: a long option, one dash
            expect_value = allowed.options[body]
            continue
        short, rest = body[0], body[1:]
        if short in allowed.options and rest.isdigit():  # -c5
            continue
        raise _deny(spelled, f"option {token} is not allowed here; write each option "
                    "apart and spell long ones with two dashes")


def _expand_regex_alias(head: str, rest: list[str]) -> list[str] | None:
    """The built-in regex aliases, for the forms that stay read-only."""
    if head == "bt":
        if not rest:
            return ["thread", "backtrace"]
        if len(rest) == 1 and rest[0].isdigit():
            return ["thread", "backtrace", "-c", rest[0]]
        if rest == ["all"]:
            return ["thread", "backtrace", "all"]
        return ["thread", "backtrace", *rest]
    if head == "f":
        return ["frame", "select", *rest]
    if head in ("up", "down"):
        count = rest[0] if rest else "1"
        if len(rest) > 1 or not count.isdigit():
            return None
        return ["frame", "select", "-r", count if head == "up" else f"-{count}"]
    if head in ("l", "list"):
        if not rest:
            return ["source", "list"]
        if rest[0].startswith("-"):
            return ["source", "list", *rest]
        if len(rest) != 1:
            return None
        arg = rest[0]
        if arg.isdigit():
            return ["source", "list", "-l", arg]
        if re.fullmatch(r"0x[0-9a-fA-F]+|\*.+", arg):
            return ["source", "list", "-a", arg.lstrip("*")]
        file, colon, line = arg.rpartition(":")
        if colon and file and line.isdigit():
            return ["source", "list", "-f", file, "-l", line]
        return ["source", "list", "-n", arg]
    return None


def _raw_tail(text: str, words_used: int) -> str:
    """The text after the first `words_used` words, verbatim (raw-input commands)."""
    i, n = 0, len(text)
    for _ in range(words_used):
        while i < n and text[i] in _SPACE:
            i += 1
        while i < n and text[i] not in _SPACE:
            i += 1
    return text[i:].strip()


def _vet_raw(allowed: Allowed, prefix: list[str], tail: str, spelled: str) -> str:
    """expression/dwim-print: options (if any) up to ` -- `, then the expression verbatim."""
    options, expr = [], tail
    if tail.startswith("-"):
        if tail == "--" or tail.startswith("-- "):
            options, expr = [], tail[2:].strip()
        else:
            head, sep, after = tail.partition(" -- ")
            if not sep:
                raise _deny(spelled, "put ' -- ' between the options and the expression")
            options, expr = tokenize(head), after.strip()
    # the alias' own fixed words (e.g. po's -O) are options too
    fixed = [w for w in prefix if w != "--"]
    all_options = [*fixed, *options]
    _check_options(allowed, [*all_options, "--"], spelled)
    plain = [o for o in all_options if o != "--"]
    if any(o in ("-r", "--repl", "-p", "--top-level") for o in plain):
        raise _deny(spelled, "a REPL or top-level code")
    if expr.lstrip().startswith("@import"):
        raise _deny(spelled, "@import loads frameworks into the program")
    if not expr:
        raise InvalidInput(f"'{spelled}' needs an expression, e.g. '{spelled} -- x + 1'.")
    return " ".join([*allowed.words, *map(_quote, plain), "--", expr])


def vet_lldb_command(command: str, allow_unsafe: bool = False) -> Vetted:
    """The text to send to LLDB for `command`: the command spelled out in full
    when it is on the allowlist; the user's own text, marked unsafe, when it is
    not and allow_unsafe is set; CommandDenied (naming the allowlist) otherwise."""
    if len(command) > MAX_COMMAND_CHARS:
        raise InvalidInput(
            f"The lldb command is {len(command):,} characters; the limit is "
            f"{MAX_COMMAND_CHARS:,}. Send a shorter command.")
    text = command.strip()
    if not text:
        raise InvalidInput("The lldb command is empty; give one, e.g. 'bt' or 'frame variable'.")
    if "\n" in text or "\r" in text or "\x00" in text:
        raise InvalidInput("Give one lldb command per call, on a single line.")
    try:
        text_for_lldb = _vet(text)
    except CommandDenied as denied:
        if not allow_unsafe:
            raise
        return Vetted(text=text, unsafe=True, resolved=str(denied.details.get("command", "")))
    return Vetted(text=text_for_lldb, resolved=" ".join(tokenize(text_for_lldb)[:2]))


def _vet(text: str) -> str:
    if text.startswith("!"):
        raise _deny(text.split()[0], "history expansion re-runs an earlier command")
    tokens = tokenize(text)
    if not tokens:
        raise InvalidInput("The lldb command is empty; give one, e.g. 'bt' or 'frame variable'.")
    first, slash, gdb_format = tokens[0].partition("/")
    if slash:  # x/4xw, p/x: gdb's format letters after the command word
        tokens = [first, "-G", gdb_format, *tokens[1:]]
        text = " ".join([first, "-G", _quote(gdb_format), "--", _raw_tail(text, 1)]) \
            if _ALIASES.get(first, ("",))[0] in ("dwim-print", "expression") else text
    head = _resolve_word(first, _TOP_WORDS)
    if head is None:
        raise _deny(first, "not an LLDB command this check knows, or an ambiguous prefix")
    if head in _REGEX_ALIASES:
        if head in ("parray", "poarray"):
            if len(tokens) < 3:
                raise InvalidInput(f"Usage: {head} COUNT EXPRESSION.")
            count = tokens[1]
            prefix = [*_ALIASES[head][1:], count, "--"]
            return _vet_raw(_BY_WORDS[("expression",)], prefix, _raw_tail(text, 2),
                            head)
        expanded = _expand_regex_alias(head, tokens[1:])
        if expanded is None:
            raise _deny(head, "this form of the alias is not read-only")
        words = expanded
    else:
        words = [*_ALIASES.get(head, (head,)), *tokens[1:]]
        # The one-to-one aliases with a trailing -- (p, po, call) are raw-input
        # commands whose expression follows verbatim.
        if head in _ALIASES and _ALIASES[head][0] in ("expression", "dwim-print"):
            alias = _ALIASES[head]
            return _vet_raw(_BY_WORDS[(alias[0],)], list(alias[1:]), _raw_tail(text, 1), head)
        if head in ("expression", "dwim-print"):
            return _vet_raw(_BY_WORDS[(head,)], [], _raw_tail(text, 1), head)
    # Sub-command words, expanded by prefix as LLDB does.
    path = [words[0]]
    i = 1
    while tuple(path) in _SUB_COMMANDS and i < len(words):
        sub = _resolve_word(words[i], _SUB_COMMANDS[tuple(path)])
        if sub is None:
            break
        path.append(sub)
        i += 1
    allowed = _BY_WORDS.get(tuple(path))
    spelled = " ".join(path)
    if allowed is None:
        if len(path) == 1 and i < len(words) and not words[i].startswith("-") \
                and tuple(path) not in _SUB_COMMANDS:
            spelled = f"{spelled} {words[i]}"  # name the sub-command the user meant
        below = [" ".join(a.words) for a in ALLOWED if a.words[:len(path)] == tuple(path)]
        raise _deny(spelled, "it is not read-only" + (
            f"; the allowed ones here: {', '.join(below)}" if below else ""))
    rest = words[i:]
    _check_options(allowed, rest, spelled)
    return " ".join([*allowed.words, *map(_quote, rest)])


def names_lldb_command(text: str) -> bool:
    """Whether the text starts with an LLDB command or built-in alias spelled in
    full (`platform shell id`), as opposed to an expression that failed."""
    first = text.strip().split(None, 1)[0] if text.strip() else ""
    return first.partition("/")[0] in _TOP_WORDS


def check_lldb_command(command: str, allow_unsafe: bool = False) -> Vetted:
    """Same as vet_lldb_command (kept for callers that only need the verdict)."""
    return vet_lldb_command(command, allow_unsafe)
