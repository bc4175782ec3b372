"""The command line's parser, generated from the command registry, and what a
parse prints: shared by the executable's whole command line (full.py)
and a session's host, which parses there the command lines the quick
client hands it (`run_on_host`). It starts no host and imports no front end,
so the host can import it without importing the command line that starts hosts."""

from __future__ import annotations

import argparse
import contextvars
import io
import json
import sys
from typing import TYPE_CHECKING, Any

from backends.errors import DebuggerError, InvalidInput

from .. import __version__
from ..commands import registry
from ..commands.registry import CliSpec, Command, View
from ..commands.render import render
from . import route

if TYPE_CHECKING:
    from ..host.wire import CommandLine

#: How the command line shows answers: its hints name command words and --options.
CLI_VIEW = View(names="cli")

ENTRY_POINTS = {"run", "attach", "ui", "start", "mcp", "daemon", "launches", "core", "serve", "dap"}


class _Capture:
    """Where a parse on a session's host writes what argparse would print, and
    the width of the client's terminal it wraps usage to."""

    def __init__(self, columns: int):
        self.columns = columns
        self.out = io.StringIO()
        self.err = io.StringIO()


_CAPTURE: contextvars.ContextVar[_Capture | None] = contextvars.ContextVar("cli_capture", default=None)


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage, errors and help can be caught (on a
    session's host, for the client that sent the command line), wrapped to the
    client's terminal. Subparsers are of the same class."""

    def _print_message(self, message: str, file: Any = None) -> None:
        capture = _CAPTURE.get()
        if capture is None:
            super()._print_message(message, file)
        elif message:
            (capture.out if file is sys.stdout else capture.err).write(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        capture = _CAPTURE.get()
        if capture is None:
            return super()._get_formatter()
        return self.formatter_class(prog=self.prog, width=max(capture.columns - 2, 10))


# ============================================================================ parser


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", metavar="NAME",
                        help="session to use (default: $TUI_DEBUGGER_SESSION, else the one "
                        "live session of this project)")
    parser.add_argument("--json", action="store_true", help="print the result model as JSON")


def _add_launch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", metavar="NAME", help="name for the new session")
    parser.add_argument("--adapter", help="debugpy, lldb-dap, lldb-cli, dlv or node (default: by program type)")
    parser.add_argument("--break", "-b", dest="breakpoints", action="append", default=[],
                        metavar="FILE:LINE", help="breakpoint to set before start (repeatable)")
    parser.add_argument("--stop-on-entry", action="store_true", help="stop at the first line")
    parser.add_argument("--cwd", help="working directory of the program")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="environment variable (repeatable)")
    parser.add_argument("--launch", dest="launch_config", metavar="NAME",
                        help="use this configuration from .vscode/launch.json")
    parser.add_argument("--core", dest="core_file", metavar="COREFILE",
                        help="open a core dump of PROGRAM post-mortem")
    parser.add_argument("--stdin", metavar="FILE",
                        help="a file the program reads as its stdin (default: end of file; "
                             "'pipe': type it with `tui-debugger input`, or in the TUI under Output)")
    parser.add_argument("--python", metavar="PATH",
                        help="the Python that runs the program (default: $VIRTUAL_ENV, a "
                             ".venv/venv above the program, python3 on PATH)")
    parser.add_argument("--no-just-my-code", dest="just_my_code", action="store_false",
                        default=None, help="Python: also stop and step in library code "
                        "(default: your code only)")
    # Everything after the module is its own (`-m pytest -q -x t.py`), as with python -m.
    parser.add_argument("-m", dest="module", metavar="MODULE", nargs=argparse.REMAINDER,
                        help="run a Python module, as `python -m MODULE ARGS`")
    parser.add_argument("program", nargs="?", metavar="PROGRAM")
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="ARGS")


_CLI_NAMES: dict[str, str] = {}


def cli_words(text: str | None) -> str | None:
    """Help written once for both front ends, in the CLI's words: an MCP tool
    name becomes its CLI command, a camelCase argument its --flag."""
    if not text:
        return text
    import re

    names = _CLI_NAMES
    if not names:
        for cmd in registry.all_commands():
            if cmd.mcp and cmd.cli:
                names[cmd.mcp] = " ".join(cmd.cli[0].path)
            for field_name, field in cmd.args.model_fields.items():
                alias = field.alias or field_name
                if alias != field_name:
                    names[alias] = "--" + field_name.replace("_", "-")
    if "debug_" not in text and not re.search(r"[a-z][A-Z]", text):
        return text
    return re.sub(r"\b(debug_[a-z_]+|[a-z]+[A-Z][A-Za-z]*)\b",
                  lambda m: names.get(m.group(1), m.group(1)), text)


def _generated_field_args(parser: argparse.ArgumentParser, cmd: Command, spec: CliSpec) -> None:
    """Flags from the argument model for commands without a custom CLI shape."""
    for name, field in cmd.args.model_fields.items():
        if name in spec.fixed:
            continue
        flag = "--" + name.replace("_", "-")
        help_text = cli_words(field.description)
        if name == "frame_index":  # --frame, as every command with a frame spells it
            parser.add_argument("--frame", "--frame-index", type=int, dest=name,
                                help=_frame_help(help_text))
            continue
        annotation = str(field.annotation)
        if name in spec.positional:
            parser.add_argument(name, type=int if "int" in annotation else str, help=help_text)
        elif field.annotation is bool:
            parser.add_argument(flag, action="store_true", dest=name, help=help_text)
        elif "int" in annotation:
            parser.add_argument(flag, type=int, dest=name, help=help_text)
        elif "list" in annotation:
            parser.add_argument(flag, nargs="+", dest=name, help=help_text)
        else:
            parser.add_argument(flag, dest=name, help=help_text)


def _frame_help(text: str | None) -> str:
    text = (text or "Frame.").rstrip(".")
    if "innermost" not in text:
        text = text.replace("Frame", "Frame (0 = innermost, as `backtrace` numbers them)", 1)
    return text + "."


def _described_from_the_model(parser: argparse.ArgumentParser, cmd: Command) -> None:
    """A flag a custom CLI shape added without help takes its field's
    description (`--frame` said nothing of which frame 0 is)."""
    fields = cmd.args.model_fields
    for action in parser._actions:
        field = fields.get(action.dest)
        if action.help is None and field is not None and field.description:
            text = cli_words(field.description)
            action.help = _frame_help(text) if action.dest == "frame_index" else text


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only`, the parser of the command lines
    that begin with that word alone (a session's host parses one command's
    line: 1 ms, not 30). It prints the same usage and errors for them, since
    the list of commands is shown as COMMAND."""
    parser = Parser(
        prog="tui-debugger",
        description="A terminal debugger that a person and a coding agent drive together.",
    )
    parser.add_argument("--version", action="version", version=f"tui-debugger {__version__}")
    sub = parser.add_subparsers(dest="entry", metavar="COMMAND")
    if only is None:
        _add_entry_points(sub)
    elif only == "start":
        _add_start(sub)
    elif only == "run":
        _add_run(sub)
    _add_commands(sub, only)
    return parser


def _add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="open the TUI on a new session of PROGRAM (stopped at its "
                       "first line unless --break is given)")
    _add_launch_options(p)


def _add_start(sub: Any) -> None:
    p = sub.add_parser("start", help="start a headless session in the background")
    _add_launch_options(p)
    p.add_argument("--json", action="store_true")


def _add_entry_points(sub: Any) -> None:
    _add_run(sub)
    _add_start(sub)
    p = sub.add_parser("core", help="open a core dump post-mortem in a headless session "
                       "(stack, threads, locals, memory, disassembly)")
    p.add_argument("program", metavar="PROGRAM")
    p.add_argument("core_file", metavar="COREFILE")
    p.add_argument("--session", metavar="NAME", help="name for the new session")
    p.add_argument("--adapter", help="lldb-dap, lldb-cli or dlv (default: by program type)")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("attach", help="open the TUI attached to PID, HOST:PORT or a simulator app")
    p.add_argument("target", nargs="?", metavar="PID|HOST:PORT")
    p.add_argument("--session", metavar="NAME")
    p.add_argument("--adapter")
    p.add_argument("--program", help="the executable, for symbols")
    p.add_argument("--wait-for", metavar="NAME", help="wait for a process with this name (lldb)")
    p.add_argument("--path-map", action="append", default=[], metavar="REMOTE=LOCAL",
                   help="source paths of a program built elsewhere: REMOTE prefix is LOCAL "
                   "here (repeatable)")
    p.add_argument("--sim", metavar="NAME|UDID", help="iOS simulator (by name or UDID)")
    p.add_argument("--bundle-id", metavar="ID", help="app bundle id in the simulator")
    p.add_argument("--headless", action="store_true", help="no TUI: serve the session in the background")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("ui", help="open the TUI on a live session (default: this project's)")
    p.add_argument("--session", metavar="NAME")
    p = sub.add_parser("serve", help="serve a live session's TUI to web browsers (each tab "
                       "one more client of it; loopback and a token by default)")
    p.add_argument("--session", metavar="NAME")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8766, help="port (default: 8766; 0 picks a free one)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="another name the browser reaches this server by (a forwarded "
                        "port's host), accepted in the Host header (repeatable)")
    p = sub.add_parser("ray", help="list a Ray cluster's tasks and actors paused for a debugger; "
                       "`ray attach [ADDRESS] [TASK...|--all]` attaches to them",
                       description="tui-debugger ray [ADDRESS] [--json] lists the paused tasks; "
                       "tui-debugger ray attach [ADDRESS] [TASK...|--all] attaches to them "
                       "(headless sessions, like `start`); --ui opens the TUI on them. ADDRESS "
                       "is the cluster's dashboard (default: $RAY_ADDRESS, else 127.0.0.1:8265).")
    p.add_argument("words", nargs="*", metavar="[attach] [ADDRESS] [TASK]")
    p.add_argument("--all", action="store_true", help="attach to every paused task")
    p.add_argument("--ui", action="store_true", help="attach, then open the TUI on the first")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("mcp", help="serve the debugger as MCP tools (joins the live session of "
                       "its project when there is one)")
    p.add_argument("--session", metavar="NAME")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--tools", metavar="LIST",
                   help="more tools listed from the start, beside the default set: names or "
                   "groups (native, threads, sim, more, all), comma-separated")
    p = sub.add_parser("dap", help="a debug adapter an editor starts (VS Code, nvim-dap, Emacs, "
                       "Zed): attach joins the live session, launch starts one")
    p.add_argument("--session", metavar="NAME", help="the session attach joins by default")
    p.add_argument("--listen", type=int, metavar="PORT",
                   help="serve editors on this loopback port (their attach or launch carries "
                   "the token it prints) instead of stdin/stdout")
    p = sub.add_parser("launches", help="list configurations in .vscode/launch.json")
    p.add_argument("--json", action="store_true")
    # Internal: the host of a headless session; its spec comes on stdin.
    sub.add_parser("daemon")


def _add_commands(sub: Any, only: str | None) -> None:
    groups: dict[str, Any] = {}

    def parent_for(words: tuple[str, ...]) -> Any:
        if len(words) == 1:
            return sub
        if words[0] not in groups:
            group_parser = sub.add_parser(words[0], help=f"{words[0]} commands")
            groups[words[0]] = group_parser.add_subparsers(dest="sub", metavar="SUBCOMMAND")
        return groups[words[0]]

    for cmd in registry.all_commands():
        for spec in cmd.cli:
            same_level = [a[-1] for a in spec.aliases
                          if len(a) == len(spec.path) and a[:-1] == spec.path[:-1]]
            other = [a for a in spec.aliases if a[-1] not in same_level or len(a) != len(spec.path)]
            said = spec.help or cmd.help  # a form of its own (jump beside until) says its own
            forms = [(spec.path, {"help": cli_words(said), "aliases": same_level})]
            forms += [(a, {}) for a in other]  # listed nowhere, accepted everywhere
            for words, extra in forms:
                if only is not None and only != words[0] and not (
                        len(words) == 1 and only in extra.get("aliases", ())):
                    continue
                # The command's own help, not the agents' description: that one
                # names tools and camelCase arguments.
                cp = parent_for(words).add_parser(words[-1], description=cli_words(said),
                                                  **extra)
                cp.set_defaults(command_id=cmd.id, cli_spec=spec)
                if spec.build:
                    spec.build(cp)
                    _described_from_the_model(cp, cmd)
                else:
                    _generated_field_args(cp, cmd, spec)
                _add_common(cp)


def cli_args(cmd: Command, spec: CliSpec, ns: argparse.Namespace) -> dict[str, Any]:
    if spec.adapt is not None:
        values = spec.adapt(ns)
    else:
        values = {}
        for name in cmd.args.model_fields:
            value = getattr(ns, name, None)
            if value is not None and value is not False:
                values[name] = value
    values.update(spec.fixed)
    return values


def _env_pairs(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        if "=" not in pair:
            raise InvalidInput(f"--env takes NAME=VALUE, got {pair!r}.")
        key, value = pair.split("=", 1)
        env[key] = value
    return env


def launch_args_from(ns: argparse.Namespace) -> dict[str, Any]:
    module_argv = list(getattr(ns, "module", None) or [])
    module = module_argv[0] if module_argv else None
    if getattr(ns, "module", None) == []:
        raise InvalidInput("-m needs a module name: `tui-debugger start -m pytest -q tests/`.")
    if not ns.program and not ns.launch_config and not module:
        raise InvalidInput("Give the program to debug, e.g. `tui-debugger start app.py`, "
                           "or a Python module: `tui-debugger start -m json.tool`.")
    args = list(ns.args or [])
    if args[:1] == ["--"]:
        args = args[1:]
    if module:
        # `-m pytest -- -q`: argparse ends -m's share at `--` and gives the rest to
        # the program and its arguments; all of it is the module's.
        args = [*module_argv[1:], *([ns.program] if ns.program else []), *args]
        if args[:1] == ["--"]:
            args = args[1:]
        ns.program = None
    optional: dict[str, Any] = {
        "args": args, "adapter": ns.adapter, "stop_on_entry": ns.stop_on_entry,
        "session_name": ns.session, "breakpoints": ns.breakpoints, "env": _env_pairs(ns.env),
        "cwd": ns.cwd, "launch_config": ns.launch_config, "module": module,
        "core_file": getattr(ns, "core_file", None), "stdin": getattr(ns, "stdin", None),
        "python": getattr(ns, "python", None),
    }
    # Only what was given, so the launch command's own defaults (and launch.json) apply.
    given = {k: v for k, v in optional.items() if v}
    if getattr(ns, "just_my_code", None) is not None:
        given["just_my_code"] = ns.just_my_code  # False is given too
    return {"program": ns.program or "", **given}


# ============================================================================ output


def _json_of(result: Any) -> Any:
    """A result's JSON (registry.Result.as_json: the tree's fields only when set)."""
    if hasattr(result, "as_json"):
        return result.as_json()
    return result.model_dump(mode="json", by_alias=True)


def emit_result(result: Any, as_json: bool, session: str | None = None) -> None:
    """Print a result; `session`: the session it came from, named in the answer
    (when several are live, so nobody mistakes one for another)."""
    if as_json:
        data = _json_of(result)
        if session is not None:
            data.setdefault("session", session)
        print(json.dumps(data, indent=2))
    else:
        text = render(result)
        if text:
            print(f"[session {session}] {text}" if session is not None else text)


def error_text(exc: DebuggerError, as_json: bool) -> tuple[str, str]:
    """What a failed command prints: (stdout, stderr)."""
    out = json.dumps({"error": exc.to_dict()}, indent=2) + "\n" if as_json else ""
    return out, f"error: {exc.message}\n"


def result_answer(result: Any, as_json: bool) -> dict[str, Any]:
    """What emit_result prints, for a client to print (stdout, stderr, rc)."""
    if as_json:
        out = json.dumps(_json_of(result), indent=2) + "\n"
    else:
        text = render(result)
        out = text + "\n" if text else ""
    return {"stdout": out, "stderr": "", "rc": 0}


def error_answer(exc: DebuggerError, as_json: bool) -> dict[str, Any]:
    """What emit_error prints, for a client to print (stdout, stderr, rc)."""
    out, err = error_text(exc, as_json)
    return {"stdout": out, "stderr": err, "rc": 1}


def emit_error(exc: DebuggerError, as_json: bool) -> int:
    out, err = error_text(exc, as_json)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return 1


# ============================================================================ on a session's host

#: A session's host's parsers, by the first word of the command lines they parse.
_HOST_PARSERS: dict[str, argparse.ArgumentParser] = {}


def start_on_host(argv: list[str], columns: int | None
                  ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, bool]:
    """`tui-debugger start ...`'s whole argv, handed by the quick `start`
    to the host it started (daemon.run_daemon), parsed there as commandline.py
    parses it: (the launch's arguments, None, --json) to run, or (None, what
    the client prints, --json) when the parse answers it (a usage error,
    arguments the launch cannot take)."""
    parser = build_parser(only="start")
    capture = _Capture(columns or 80)
    token = _CAPTURE.set(capture)
    try:
        try:
            ns = parser.parse_args(argv)
        except SystemExit as exc:
            return None, {"stdout": capture.out.getvalue(), "stderr": capture.err.getvalue(),
                          "rc": exc.code if isinstance(exc.code, int) else 2}, False
    finally:
        _CAPTURE.reset(token)
    as_json = bool(getattr(ns, "json", False))
    try:
        return launch_args_from(ns), None, as_json
    except DebuggerError as exc:
        return None, error_answer(exc, as_json), as_json


async def run_on_host(hub: Any, session: Any, request: CommandLine, client: str) -> dict[str, Any]:
    """A command line that the quick client sent to the session's host:
    parsed, run and rendered here, where the registry and the models are
    already imported, into what the client prints. {"fallback": true} hands it
    back to the client's whole command line (help, a command that is not one
    session's, another session named than the one reached): that parse has no
    side effects, so nothing has happened yet."""
    from ..execute import execute

    argv = list(request.argv)
    if not argv:
        return {"fallback": True}
    parser = _HOST_PARSERS.get(argv[0])
    if parser is None:
        parser = _HOST_PARSERS[argv[0]] = build_parser(only=argv[0])
    capture = _Capture(request.columns or 80)
    token = _CAPTURE.set(capture)
    try:
        try:
            ns = parser.parse_args(argv)
        except SystemExit as exc:
            if exc.code == 0:  # help: the client prints it itself
                return {"fallback": True}
            return {"stdout": capture.out.getvalue(), "stderr": capture.err.getvalue(),
                    "rc": exc.code if isinstance(exc.code, int) else 2}
    finally:
        _CAPTURE.reset(token)
    command_id = getattr(ns, "command_id", None)
    cmd = registry.get(command_id) if command_id is not None else None
    if cmd is None or not route.host_runs(
            entry_point=ns.entry in ENTRY_POINTS, needs_session=cmd.needs_session,
            creates_session=cmd.creates_session, same_session=ns.session == request.session,
            follows=cmd.id == "output" and bool(getattr(ns, "follow", False))):
        return {"fallback": True}
    as_json = bool(getattr(ns, "json", False))
    cwd = request.cwd
    try:
        args = cli_args(cmd, ns.cli_spec, ns)
        result = await execute(hub, cmd.id, args, origin="cli", session=session,
                               client_cwd=cwd, client=client, view=CLI_VIEW,
                               named=request.session is not None)
    except DebuggerError as exc:
        out, err = error_text(exc, as_json)
        return {"stdout": out, "stderr": err, "rc": 1}
    answer: dict[str, Any] = {"rc": 0, "wait_exit": cmd.id in ("terminate", "detach")}
    if getattr(result, "process", None) is not None:
        answer["acted"] = result.process.session  # the process of the tree it acted on
    if as_json:
        answer["json"] = _json_of(result)
    else:
        from ..commands.render import relative_to

        with relative_to(cwd):
            answer["text"] = render(result)
    return answer
