"""Machine-level commands that need no session: doctor and the one-shot
debug-script."""

import argparse
import asyncio
import os
import platform
import shlex
import sys

from pydantic import Field

from backends import adapters

from .context import parse_location
from .lifecycle import warm_host_view
from .registry import Args, CliSpec, Command, CommandContext, NoArgs, register
from .views import AdapterView, DoctorResult, ScriptResult


async def _doctor(ctx: CommandContext, args: NoArgs) -> DoctorResult:
    from backends.errors import DebuggerError
    from backends.python_env import find_python
    from backends.ray.discover import doctor_info

    where = ctx.client_cwd or os.getcwd()
    # Each starts processes (adapters' --version, the interpreter): side by side.
    discovering = asyncio.ensure_future(asyncio.to_thread(adapters.discover_all))
    ray_info = asyncio.ensure_future(asyncio.to_thread(doctor_info))
    try:
        program_python = (await asyncio.to_thread(find_python, None, where, cwd=where)).describe()
    except DebuggerError as exc:
        program_python = exc.message
    infos = await discovering
    ray = await ray_info
    return DoctorResult(
        adapters=[*(AdapterView(**i.to_dict()) for i in infos), AdapterView(**ray)],
        python=sys.version.split()[0], platform=f"{platform.system()} {platform.machine()}",
        program_python=program_python, warm_host=warm_host_view(),
    )


register(Command(
    id="doctor", help="Which debuggers this machine has, and how to install the missing ones.",
    description="Report each backend's debugger: path and version, or how to install it.",
    args=NoArgs, result=DoctorResult, handler=_doctor, read_only=True, needs_session=False,
    mcp="debug_doctor", cli=[CliSpec(("doctor",))], tui_action=False,
))


class ScriptBreakpoint(Args):
    file: str
    line: int


class ScriptArgs(Args):
    command: str = Field(description="Command that starts the program, e.g. 'node --inspect-brk=9229 app.js' or 'python app.py'.")
    breakpoint: ScriptBreakpoint = Field(description="Where to evaluate: {file, line}.")
    expression: str = Field(description="Expression evaluated at every hit.")
    # seeds/002: a number of milliseconds (1000.5 too); a string such as "3000" is refused.
    timeout: float = Field(strict=True, description="Milliseconds to wait for the program to finish.")


async def _script(ctx: CommandContext, args: ScriptArgs) -> ScriptResult:
    from ..script import run_debug_script

    results = await run_debug_script(
        args.command, args.breakpoint.file, args.breakpoint.line, args.expression, args.timeout,
        cwd=ctx.client_cwd,
    )
    return ScriptResult(results=results)


register(Command(
    id="debug_script", help="One shot: run a command, evaluate an expression at every hit of one breakpoint.",
    description="Run a program once, evaluate `expression` each time `breakpoint` is hit, and "
    "return the typed values in order (node: --inspect-brk=PORT; Python and native too).",
    args=ScriptArgs, result=ScriptResult, handler=_script, needs_session=False,
    mcp="debug-script", tui_action=False,
    cli=[CliSpec(("script",), build=lambda p: (
        p.add_argument("--break", dest="location", required=True, metavar="FILE:LINE"),
        p.add_argument("--expr", required=True, dest="expression"),
        p.add_argument("--timeout", type=float, default=30.0, metavar="S"),
        p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="COMMAND")),
        adapt=lambda ns: {
            "command": shlex.join(ns.cmd[1:] if ns.cmd[:1] == ["--"] else ns.cmd),
            "breakpoint": dict(zip(("file", "line"), parse_location(ns.location))),
            "expression": ns.expression, "timeout": int(ns.timeout * 1000)})],
))
