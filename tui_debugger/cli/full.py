"""The `tui-debugger` executable's whole command line (cli.py is its door).
Session commands are generated from the command registry; `run`, `attach`,
`ui`, `start`, `mcp` and the hidden `daemon` are the entry points that host or
join a session. The parser and what a
parse prints are in cliparse.py, which a session's host imports too."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any, Callable, Sequence

from backends.errors import DebuggerError, InvalidInput

from .. import __version__
from ..commands import registry
from ..commands.registry import Command

from .parse import (  # noqa: F401  (names the command line's callers import from here)
    CLI_VIEW,
    ENTRY_POINTS,
    Parser,
    build_parser,
    cli_args,
    cli_words,
    launch_args_from,
    emit_result,
    error_text,
    emit_error,
    run_on_host,
    _env_pairs,
)


# ============================================================================ client commands


async def _call(cmd: Command, args: dict[str, Any], session: str | None) -> tuple[Any, str | None]:
    """The result, and the name of the session it came from."""
    from ..client.router import RemoteHandle, Router

    router = Router("cli", session=session, register=False, view=CLI_VIEW)
    try:
        handle = await router.handle(session) if cmd.needs_session else None
        result = await router.call(cmd, args, session=session, cwd=os.getcwd())
    finally:
        await router.close()
    if cmd.id in ("terminate", "detach") and isinstance(handle, RemoteHandle) and handle.host_pid:
        # A headless host exits right after answering; return once it has, so the
        # next command never finds a session that is about to vanish.
        from backends.process import pid_alive

        from .. import warm

        def warm_now() -> bool:  # it ended its session and waits for the next one
            return (warm.status() or {}).get("pid") == handle.host_pid

        deadline = time.monotonic() + 5
        while pid_alive(handle.host_pid) and not warm_now() and time.monotonic() < deadline:
            if handle.host_pid == os.getpid():
                break
            await asyncio.sleep(0.05)
    return result, handle.name if handle is not None else None


async def _follow_output(ns: argparse.Namespace, args: dict[str, Any]) -> int:
    from ..client.router import Router

    router = Router("cli", session=ns.session, register=False, view=CLI_VIEW)
    since = args.get("since", 0)
    try:
        while True:
            result = await router.call("output", {"since": since, "limit": 1000})
            for entry in result.entries:
                sys.stdout.write(entry.text)
            sys.stdout.flush()
            since = result.next_cursor
            if not result.truncated:
                status = await router.call("status")
                if status.state == "terminated":
                    return 0
                await asyncio.sleep(0.2)
    except DebuggerError:
        return 0
    finally:
        await router.close()


def run_client_command(ns: argparse.Namespace) -> int:
    cmd = registry.get(ns.command_id)
    as_json = getattr(ns, "json", False)
    try:
        args = cli_args(cmd, ns.cli_spec, ns)
        if cmd.id == "output" and getattr(ns, "follow", False):
            return asyncio.run(_follow_output(ns, args))
        result, acted_on = asyncio.run(_call(cmd, args, ns.session))
    except DebuggerError as exc:
        return emit_error(exc, as_json)
    except KeyboardInterrupt:
        return 130
    from ..paths import several_live

    emit_result(result, as_json, acted_on if acted_on and several_live() else None)
    return 0


# ============================================================================ headless sessions


def start_daemon(command: str, args: dict[str, Any]) -> dict[str, Any]:
    """Start a daemon hosting a new session; return the launch result (or raise)."""
    from ..host.start import start_host

    return asyncio.run(start_host(command, args))


def cmd_start(ns: argparse.Namespace) -> int:
    as_json = getattr(ns, "json", False)
    try:
        args = launch_args_from(ns)
        raw = start_daemon("launch", args)
    except DebuggerError as exc:
        return emit_error(exc, as_json)
    raw.pop("_log", None)
    result = registry.get("launch").result.model_validate(raw)
    emit_result(result, as_json)
    return 0


def cmd_core(ns: argparse.Namespace) -> int:
    as_json = getattr(ns, "json", False)
    args = {"program": ns.program, "core_file": ns.core_file}
    if ns.session:
        args["session_name"] = ns.session
    if ns.adapter:
        args["adapter"] = ns.adapter
    try:
        raw = start_daemon("launch", args)
    except DebuggerError as exc:
        return emit_error(exc, as_json)
    raw.pop("_log", None)
    emit_result(registry.get("launch").result.model_validate(raw), as_json)
    return 0


def attach_args_from(ns: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if ns.sim or ns.bundle_id:
        out: dict[str, Any] = {"bundle_id": ns.bundle_id, "session_name": ns.session, "adapter": ns.adapter}
        if ns.sim:
            import re

            key = "simulator_id" if re.fullmatch(r"[0-9A-Fa-f-]{36}", ns.sim) else "simulator_name"
            out[key] = ns.sim
        if ns.target and ns.target.isdigit():
            out["pid"] = int(ns.target)
        return "attach_sim", {k: v for k, v in out.items() if v is not None}
    out = {"session_name": ns.session, "adapter": ns.adapter, "program": ns.program,
           "wait_for": ns.wait_for}
    if ns.path_map:
        mapping = {}
        for pair in ns.path_map:
            remote, sep, local = pair.partition("=")
            if not sep or not remote or not local:
                raise InvalidInput(f"--path-map takes REMOTE=LOCAL, got {pair!r}.")
            mapping[remote] = local
        out["path_map"] = mapping
    target = ns.target or ""
    if target.isdigit():
        out["pid"] = int(target)
    elif ":" in target:
        host, _, port = target.rpartition(":")
        if not port.isdigit():
            raise InvalidInput(f"Expected PID or HOST:PORT, got {target!r}.")
        out["host"], out["port"] = host or "127.0.0.1", int(port)
    elif target:
        raise InvalidInput(f"Expected PID or HOST:PORT, got {target!r}.")
    elif not ns.wait_for:
        raise InvalidInput("Give a PID, HOST:PORT, --wait-for NAME, or --sim NAME --bundle-id ID.")
    return "attach", {k: v for k, v in out.items() if v is not None}


def cmd_attach(ns: argparse.Namespace) -> int:
    as_json = getattr(ns, "json", False)
    try:
        command, args = attach_args_from(ns)
        if ns.headless:
            raw = start_daemon(command, args)
            raw.pop("_log", None)
            emit_result(registry.get(command).result.model_validate(raw), as_json)
            return 0
    except DebuggerError as exc:
        return emit_error(exc, as_json)
    return _run_tui(mode=command, args=args, session=None)


def program_input_for_tui() -> str:
    """The input of a program the TUI runs: what was redirected into `tui-debugger
    run` (`< in.json`, a pipe), or else a pipe the person types into under Output.
    A redirected stdin is kept for the program, and the TUI's own stdin becomes the
    terminal, so its keys come from the keyboard and not from the file."""
    if sys.stdin is None or sys.stdin.isatty():
        return "pipe"
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
    except OSError as exc:
        raise InvalidInput("Standard input is redirected and there is no terminal to read the "
                           f"keys from ({exc}). Use `tui-debugger start` for a headless "
                           "session, with --stdin FILE for the program's input.") from exc
    kept = os.dup(0)  # the redirected input, for the program
    os.set_inheritable(kept, False)
    os.dup2(tty, 0)
    os.close(tty)
    # By /proc/PID, not /dev/fd: the debugger may open it in another process (a
    # file or a pipe alike), and this process lives as long as the session.
    return f"/proc/{os.getpid()}/fd/{kept}"


def _run_tui(mode: str, args: dict[str, Any], session: str | None) -> int:
    from ..host.early import (default_end_signals, end_signal_exit_code, end_signals,
                             leave_on_end_signals)

    # A SIGTERM or SIGHUP before the app handles them itself (at mount) quits as
    # they do then: the session this TUI started ends with it. Until then they
    # are noted (early_host.leave_on_end_signals) and looked at here, where leaving is
    # safe: before the host starts, and once the TUI is imported; the app reads
    # the rest of them at mount.
    leave_on_end_signals()  # already so under `tui-debugger run`; not for a caller of main()
    if end_signals:
        return end_signal_exit_code(end_signals[0])
    host = None
    if mode != "join":
        # The session's host starts first, so its own start-up overlaps the
        # TUI's import of Textual and first paint.
        from ..host.start import PendingHost, no_first_stop_wait

        try:
            host = PendingHost(mode, no_first_stop_wait(mode, args), origin="tui", owned=True,
                               announce=True)
        except DebuggerError as exc:
            return emit_error(exc, False)
    try:
        from ..tui.app import run_app
    except ImportError as exc:  # pragma: no cover - the TUI ships with the package
        if host is not None:
            asyncio.run(host.abandon())
        print(f"error: the TUI is not available: {exc}", file=sys.stderr)
        return 1
    if end_signals:
        if host is not None:
            asyncio.run(host.abandon())  # the host ends what it started
        return end_signal_exit_code(end_signals[0])
    try:
        return run_app(mode=mode, args=args, session=session, host=host,
                       early_signals=end_signals)
    finally:
        default_end_signals()


def cmd_daemon(ns: argparse.Namespace) -> int:
    from ..host.daemon import read_spec, run_daemon

    spec = read_spec()
    return run_daemon(spec) if spec is not None else 0


def _pinned() -> str | None:
    from ..paths import pinned_session

    return pinned_session()


def cmd_mcp(ns: argparse.Namespace) -> int:
    from ..mcp.server import run_mcp

    tools = [t for t in (ns.tools or "").split(",") if t.strip()] or None
    try:
        pinned = ns.session or _pinned()
    except DebuggerError as exc:
        return emit_error(exc, False)
    return run_mcp(session=pinned, transport=ns.transport, host=ns.host, port=ns.port,
                   tools=tools)


def cmd_dap(ns: argparse.Namespace) -> int:
    from ..dap.serve import run_dap

    try:
        pinned = ns.session or _pinned()
    except DebuggerError as exc:
        return emit_error(exc, False)
    return run_dap(session=pinned, listen=ns.listen)


def cmd_serve(ns: argparse.Namespace) -> int:
    from ..web.serve import run_serve

    return run_serve(ns.session, ns.host, ns.port, ns.allow_host)


def cmd_ray(ns: argparse.Namespace) -> int:
    from .ray import run_ray

    return run_ray(ns)


def cmd_launches(ns: argparse.Namespace) -> int:
    from ..launch_json import list_launch_configs

    try:
        configs = list_launch_configs(os.getcwd())
    except DebuggerError as exc:
        return emit_error(exc, ns.json)
    if ns.json:
        print(json.dumps([c.model_dump(mode="json") for c in configs], indent=2))
    else:
        if configs:
            print(f"{configs[0].source}:")
        for c in configs:
            print(f"  {c.line()}")
    return 0


def main(argv: Sequence[str] | None = None,
         settings_checked: Callable[[], None] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `run` and `start` (on the way to the first stop): the parser of that word
    # alone, 1 ms, not the whole command line's ~15; the same parse and errors.
    parser = build_parser(only=argv[0] if argv[:1] in (["run"], ["start"]) else None)
    if not argv:
        parser.print_help()
        return 2
    ns = parser.parse_args(argv)
    entry = ns.entry
    if entry != "daemon":  # the host of a headless session inherits its starter's settings
        from ..config import apply_config

        try:
            apply_config()  # a broken config file is reported here, once, without a traceback
        except DebuggerError as exc:
            return emit_error(exc, getattr(ns, "json", False))
        if settings_checked is not None:
            settings_checked()  # cli.py's quick path may skip that check now
    try:
        if entry == "run":
            try:
                args = launch_args_from(ns)
            except DebuggerError as exc:
                return emit_error(exc, False)
            if not ns.breakpoints and not args.get("core_file") and args.get("module") != "pytest":
                # (pytest: it stops where a test fails.)
                # With no breakpoint to run to, a person wants to start at the top
                # (as pdb and pudb do), not watch the program run to its end.
                args["stop_on_entry"] = True
            try:
                args.setdefault("stdin", program_input_for_tui())
            except DebuggerError as exc:
                return emit_error(exc, False)
            return _run_tui(mode="launch", args=args, session=None)
        if entry == "start":
            return cmd_start(ns)
        if entry == "attach":
            return cmd_attach(ns)
        if entry == "core":
            return cmd_core(ns)
        if entry == "ui":
            try:
                session = ns.session or _pinned()
            except DebuggerError as exc:
                return emit_error(exc, False)
            return _run_tui(mode="join", args={}, session=session)
        if entry == "mcp":
            return cmd_mcp(ns)
        if entry == "ray":
            return cmd_ray(ns)
        if entry == "serve":
            return cmd_serve(ns)
        if entry == "dap":
            return cmd_dap(ns)
        if entry == "daemon":
            return cmd_daemon(ns)
        if entry == "launches":
            return cmd_launches(ns)
        if getattr(ns, "command_id", None):
            return run_client_command(ns)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        from .quick import reader_left

        return reader_left()
    # A group word alone (`tui-debugger break`): show its subcommands.
    parser.parse_args([*argv, "--help"])
    return 2
