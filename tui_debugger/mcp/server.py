"""`tui-debugger mcp`: every command with an MCP name, served as an MCP tool.

The tools are generated from the command registry: the input schema is the
argument model's (camelCase), the output schema the result model's, the
annotations come from the read-only / destructive flags, and the description
is the command's agent-facing one. Every answer is `structuredContent` (the
result model) plus a short text; every failure is `isError` with
`{"error", "code", "details"?}` and the message as text.

`debug-script` is the one tool whose answers follow another contract
(seeds/002): a success is `{"results": [...]}` with no text, and its two
outcome errors are exactly `{"error": message}`. `_script_result` and
`_script_error` are where that shape lives.

Which session a tool acts on:

- `debugSessionId`, when the call names one;
- else the server's current session: the one named by `--session`, or the one
  this server last launched or attached;
- else the live session a person or the CLI started from this server's
  project (the git top level of its working directory, else the directory),
  joined through its socket; none there, or several, is an error that lists
  the live sessions. Never another project's session by accident.

The server hosts no session: a debug_launch (or attach) starts a host
process for it, as `tui-debugger start` does, and joins it, so a person can
open it with `tui-debugger ui`; everything the agent does shows up there as
origin `mcp`. The sessions it started end when it exits.

How it is reached (stdio, HTTP with a token) is stdio.py and http.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

from backends.errors import DebuggerError, ErrorCode, InternalError, InvalidInput

from .. import __version__, paths
from ..commands import registry
from ..commands.registry import Command, Result, View, without_unset_tree_fields
from .http import HTTP_REQUEST_TIMEOUT_S, serve_http  # noqa: F401
from .stdio import serve_stdio  # noqa: F401
from ..client.router import Router

SERVER_NAME = "tui-debugger"
SCRIPT_TOOL = "debug-script"
SESSION_ARG = "debugSessionId"


def takes_session_arg(cmd: Command) -> bool:
    """Every tool addresses a session with debugSessionId but the ones that
    create one, and the self-contained debug-script."""
    return not cmd.creates_session and cmd.mcp != SCRIPT_TOOL


INSTRUCTIONS = """\
A debugger shared with the person at the terminal. Start with debug_launch (or
debug_attach), or work on the session the person already started: every tool
acts on the current session unless debugSessionId names another (see
debug_sessions). debug_launch takes breakpoints and, with them or stopOnEntry,
answers with the first stop (source and locals), as the step tools do; then
step, continue, evaluate. A step answers the new line and the locals that
changed (unchanged: how many others; debug_variables lists them); its stop has
no reason when the step completed. An answer with a stop is stopped. Run
control waits waitMs for the next stop, else answers 'running': then call
debug_wait. threadId and frameIndex default to the selected ones.
More tools (native, simulator, threads, frames) open by name: debug_tools. debug_variables drills into values by path. debug_output
answers the newest lines; pass nextCursor back as since for what follows.
debug_trace collects an expression's values at each hit of a line without
anyone pressing continue. For a one-shot look at a value in a script,
debug-script runs it, evaluates an expression at every hit of one breakpoint,
and cleans up.
"""


# ============================================================================ schemas


def _walk_schema(node: Any, visit) -> Any:
    """Apply `visit` to every subschema (not to property names)."""
    if not isinstance(node, dict):
        return node
    node = visit(node)
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        if isinstance(node.get(key), dict):
            node[key] = {name: _walk_schema(sub, visit) for name, sub in node[key].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            node[key] = _walk_schema(node[key], visit)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if isinstance(node.get(key), list):
            node[key] = [_walk_schema(sub, visit) for sub in node[key]]
    return node


def _drop_titles(node: dict[str, Any]) -> dict[str, Any]:
    # Titles repeat the property names; descriptions are what an agent reads.
    node.pop("title", None)
    return node


def _optional_as_omitted(node: dict[str, Any]) -> dict[str, Any]:
    """`X | None = None` -> X: leaving the argument out is how a caller says
    'none', and several clients reject anyOf-with-null in tool inputs."""
    arms = node.get("anyOf")
    if isinstance(arms, list) and len(arms) == 2 and node.get("default", 0) is None:
        rest = [a for a in arms if a != {"type": "null"}]
        if len(rest) == 1:
            merged = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
            return {**rest[0], **merged}
    return node


def _drop_closed(node: dict[str, Any]) -> dict[str, Any]:
    # "additionalProperties": false on every object: the command layer refuses
    # unknown arguments itself, with a message that names the valid ones.
    if node.get("additionalProperties") is False:
        del node["additionalProperties"]
    return node


def _drop_bounds(node: dict[str, Any]) -> dict[str, Any]:
    # Bounds and falsy defaults are checked and applied by the command layer,
    # which names them in its error; in tools/list they are bytes every agent
    # session pays for (measured: 1.1 KB over the tools).
    for key in ("minimum", "maximum"):
        node.pop(key, None)
    if "default" in node and node["default"] in (None, False, "", 0, [], {}):
        del node["default"]
    return node


#: Arguments many tools share, described once in the server's instructions.
_SHARED_ARGS = ("threadId", "waitMs", "frameIndex", SESSION_ARG)


def input_schema(cmd: Command) -> dict[str, Any]:
    schema = cmd.args.model_json_schema(by_alias=True)
    schema = _walk_schema(schema, lambda n: _drop_bounds(
        _drop_closed(_optional_as_omitted(_drop_titles(n)))))
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if takes_session_arg(cmd):
        # Said once, in the server's instructions, rather than on 35 tools.
        schema["properties"][SESSION_ARG] = {"type": "string"}
    for name in _SHARED_ARGS:
        if isinstance(schema["properties"].get(name), dict):
            schema["properties"][name].pop("description", None)
    return schema


_JSON_TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"]
_CONSTRAINING = {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "properties",
                 "items", "not"}


def _explicit_any(node: dict[str, Any]) -> dict[str, Any]:
    # `Any` renders as {} ("accepts anything"), which schema linters flag as an
    # accident; name the JSON types it really is (debug-script's `value`).
    if not _CONSTRAINING & node.keys():
        node["anyOf"] = [{"type": t} for t in _JSON_TYPES]
    return node


def error_schema(cmd: Command) -> dict[str, Any]:
    if cmd.mcp == SCRIPT_TOOL:
        props: dict[str, Any] = {"error": {"type": "string"}}
    else:
        props = {"error": {"type": "string", "description": "What went wrong and what to do next."}}
    props["code"] = {"type": "string", "enum": [c.value for c in ErrorCode],
                     "description": "Typed error code."}
    props["details"] = {"type": "object", "description": "Machine-readable extras."}
    return {"type": "object", "properties": props, "required": ["error"],
            "additionalProperties": False}


#: Was the shared output schema of every tool but debug-script (the result
#: model, or the error shape). The full models cost 88 KB of tools/list, paid in
#: context by every agent session, for a shape the text and the docs already say.
COMPACT_OUTPUT_SCHEMA: dict[str, Any] = {"type": "object"}


def output_schema(cmd: Command) -> dict[str, Any] | None:
    """debug-script keeps its contract's full schema (the result, or the error
    shape: clients built on the TypeScript SDK check structuredContent against
    the output schema on errors too). Every other tool declares none: a bare
    `{"type": "object"}` told a client nothing and cost 1.3 KB of tools/list
    (see docs/mcp.md, "Lean answers")."""
    if cmd.mcp != SCRIPT_TOOL:
        return None
    schema = cmd.result.model_json_schema(by_alias=True, mode="serialization")
    schema = _walk_schema(schema, lambda n: _explicit_any(_drop_titles(n)))
    defs = schema.pop("$defs", {})
    name = cmd.result.__name__
    defs[name] = schema
    defs["ToolError"] = error_schema(cmd)
    return {
        "type": "object",
        "anyOf": [{"$ref": f"#/$defs/{name}"}, {"$ref": "#/$defs/ToolError"}],
        "$defs": defs,
    }


def annotations(cmd: Command) -> ToolAnnotations:
    # MCP's defaults assume a tool may destroy and reach the outside world;
    # say plainly which of ours only read and which end a program.
    # Hints at MCP's defaults, or meaningless for the tool, are left out:
    # tools/list is paid for in every agent session. (destructiveHint means
    # something only when readOnlyHint is false.)
    # openWorldHint false and destructiveHint false were said on every tool:
    # 2 KB of tools/list. A hint is published only where it is true.
    if cmd.read_only:
        return ToolAnnotations(read_only_hint=True)
    if cmd.destructive:
        return ToolAnnotations(destructive_hint=True)
    return None


def tool_definition(cmd: Command) -> Tool:
    """The one place a command becomes an MCP tool: its name, the agent-facing
    description, the input and output schemas and the annotations."""
    assert cmd.mcp is not None
    return Tool(name=cmd.mcp, description=cmd.mcp_description, input_schema=input_schema(cmd),
                output_schema=output_schema(cmd), annotations=annotations(cmd))


# ============================================================================ tool sets

#: The tools listed from the start: what a find-the-bug session uses. The
#: others are opened by name (debug_tools, or `tui-debugger mcp --tools`), so
#: tools/list stays under 12 KB (all 41 tools: 19 KB) and under the tool caps
#: of clients (Cursor 40).
DEFAULT_TOOLS: tuple[str, ...] = (
    "debug_launch", "debug_attach", "debug_terminate", "debug_restart", "debug_sessions",
    "debug_breakpoint_add", "debug_breakpoint_remove", "debug_breakpoint_list",
    "debug_continue", "debug_step_over", "debug_step_into", "debug_step_out", "debug_pause",
    "debug_run_to", "debug_wait", "debug_trace", "debug_context", "debug_stack",
    "debug_variables", "debug_evaluate", "debug_set_variable", "debug_output",
    "debug_activity",
)

#: Groups `debug_tools` and `--tools` open at once.
TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "native": ("debug_lldb_command", "debug_disassemble", "debug_memory_read", "debug_watch",
               "debug_stepi", "debug_nexti"),
    "threads": ("debug_threads", "debug_select_thread", "debug_frame"),
    "sim": ("debug_attach_sim",),
    "more": ("debug_detach", "debug_status", "debug_breakpoint_update",
             "debug_exception_breakpoints", "debug_send_input", "debug_complete",
             "debug_doctor", SCRIPT_TOOL),
}

TOOLS_TOOL = "debug_tools"


def tools_tool(closed: list[str]) -> Tool:
    """The tool that opens the others: its description names every one of
    them, so each tool of the brief is reachable by name."""
    return Tool(
        name=TOOLS_TOOL,
        description="Open more tools by name or group (the client is told the list "
        f"changed). Groups: {', '.join(TOOL_GROUPS)}, all. Closed: {', '.join(closed)}.",
        input_schema={"type": "object", "properties": {
            "open": {"type": "array", "items": {"type": "string"}}}, "required": ["open"]},
    )


def resolve_tool_names(names: list[str], known: dict[str, Any]) -> list[str]:
    """Tool names and group names -> tool names, in order; an unknown one is
    an InvalidInput that lists what there is."""
    out: list[str] = []
    for raw in names:
        name = raw.strip()
        if name == "all":
            out.extend(known)
        elif name in TOOL_GROUPS:
            out.extend(TOOL_GROUPS[name])
        elif name in known or f"debug_{name}" in known:
            out.append(name if name in known else f"debug_{name}")
        elif name:
            raise InvalidInput(f"No tool or group {name!r}. Groups: {', '.join(TOOL_GROUPS)}, "
                               f"all; tools: {', '.join(known)}.")
    return list(dict.fromkeys(out))


# ============================================================================ answers


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def error_result(exc: DebuggerError) -> CallToolResult:
    structured: dict[str, Any] = {"error": exc.message, "code": exc.code.value}
    if exc.details:
        structured["details"] = _json_safe(exc.details)
    return CallToolResult(
        content=[TextContent(type="text", text=exc.message)],
        structured_content=structured,
        is_error=True,
    )


def answer_result(structured: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=structured)


def _script_result(result: Result) -> CallToolResult:
    # seeds/002: the values only, no text.
    # seeds/002's shape exactly: none of the tree's fields, at any depth.
    data = without_unset_tree_fields(result.model_dump(mode="json"))
    return CallToolResult(content=[], structured_content=data)


def _script_error(exc: DebuggerError) -> CallToolResult:
    from backends.errors import EndedBeforeHit, NoHitInTime

    if isinstance(exc, (NoHitInTime, EndedBeforeHit)):
        # seeds/002's two errors, exactly: {"error": message} and the same text.
        return CallToolResult(
            content=[TextContent(type="text", text=exc.message)],
            structured_content={"error": exc.message},
            is_error=True,
        )
    return error_result(exc)


# ============================================================================ the server


class McpFrontEnd:
    """The MCP server and the router that takes each call to the host of its
    session (starting one for a launch or an attach).

    Built on the SDK's low-level `Server`: tools/list answers the tools made
    from the registry (`tool_definition`), tools/call hands the arguments
    untouched to `call`, so the command layer validates them and answers with
    its own typed, actionable errors."""

    def __init__(self, session: str | None = None, *, keep_spare: bool = False,
                 tools: list[str] | None = None):
        session = session or paths.pinned_session()
        if session is not None:
            paths.validate_name(session)
        self.session_name = session
        # Its hints name tools and camelCase arguments; the sessions it starts
        # end with it.
        self.router = Router("mcp", session=session, keep_spare=keep_spare,
                             view=View(names="mcp"), owns_started=True)
        self.commands: dict[str, Command] = {
            cmd.mcp: cmd for cmd in registry.all_commands() if cmd.mcp
        }
        self.definitions = {name: tool_definition(cmd) for name, cmd in self.commands.items()}
        self.open_tools: set[str] = set(DEFAULT_TOOLS) & set(self.commands)
        if tools:
            self.open_tools |= set(resolve_tool_names(tools, self.commands))
        self.server: Server[Any] = Server(
            SERVER_NAME, version=__version__, instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
        )

    async def run_stdio(self) -> None:
        """Serve one client over this process's stdin and stdout (serve_stdio)."""
        await serve_stdio(self)

    @property
    def tools(self) -> ListToolsResult:
        """The tools listed now: the open ones, in the registry's order, and
        debug_tools while any is closed."""
        listed = [tool for name, tool in self.definitions.items() if name in self.open_tools]
        closed = [name for name in self.definitions if name not in self.open_tools]
        if closed:
            listed.append(tools_tool(closed))
        return ListToolsResult(tools=listed)

    async def _list_tools(self, ctx: ServerRequestContext[Any],
                          params: PaginatedRequestParams | None) -> ListToolsResult:
        return self.tools

    async def _call_tool(self, ctx: ServerRequestContext[Any],
                         params: CallToolRequestParams) -> CallToolResult:
        before = len(self.open_tools)
        result = await self.call(params.name, params.arguments)
        if len(self.open_tools) != before:
            # Over stdio and HTTP the client is told; the SDK's in-process
            # modern protocol has no unrequested notifications (lists are fresh).
            with contextlib.suppress(Exception):
                await ctx.session.send_tool_list_changed()
        return result

    def answers_directly(self, tool: Any) -> bool:
        """Whether a tools/call of `tool` may be answered beside the SDK's
        dispatch (stdio._ToolCalls): any tool but debug_tools, whose
        answer may change the list and so needs the SDK's notification."""
        return isinstance(tool, str) and tool != TOOLS_TOOL

    def open(self, names: list[str]) -> CallToolResult:
        """debug_tools: open tools by name or group."""
        try:
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise InvalidInput("open: a list of tool or group names, e.g. [\"native\"].")
            wanted = resolve_tool_names(names, self.commands)
        except DebuggerError as exc:
            return error_result(exc)
        self.open_tools |= set(wanted)
        return answer_result({"opened": wanted}, "Opened: " + ", ".join(wanted) + ".")

    #: the CallToolResult of an agent's plain answer, (structured, text)
    plain_result = staticmethod(answer_result)

    async def call(self, tool: str, arguments: dict[str, Any] | None) -> CallToolResult:
        """One tool call, answered: never raises for anything the caller did."""
        answer = await self.answer(tool, arguments)
        return answer if isinstance(answer, CallToolResult) else answer_result(*answer)

    async def answer(self, tool: str, arguments: dict[str, Any] | None
                     ) -> CallToolResult | tuple[dict[str, Any], str]:
        """As `call`, an agent's plain answer left as (structured, text), which
        the stdio transport writes without making a CallToolResult of it
        (stdio._ToolCalls)."""
        if tool == TOOLS_TOOL:
            return self.open((arguments or {}).get("open"))
        # A closed tool answers when called by name all the same.
        cmd = self.commands.get(tool)
        is_script = tool == SCRIPT_TOOL
        try:
            if cmd is None:
                raise InvalidInput(f"Unknown tool {tool!r}. Tools: {', '.join(sorted(self.commands))}.")
            args = dict(arguments or {})
            target = None
            if takes_session_arg(cmd):
                target = args.pop(SESSION_ARG, None)
                if target is not None and not isinstance(target, str):
                    raise InvalidInput(
                        f"{SESSION_ARG} must be a session name (a string); see debug_sessions.")
                if target is not None and not target.strip():
                    # Not "the current session": an empty id must not end the wrong one.
                    raise InvalidInput(
                        f"{SESSION_ARG} is empty. Name a session (see debug_sessions), or leave "
                        f"{SESSION_ARG} out for the current one.")
            if is_script:
                result = await self.router.call(cmd, args, cwd=os.getcwd(), strict=True)
            else:
                structured, text = await self.router.call(
                    cmd, args, session=target if cmd.needs_session else None,
                    cwd=os.getcwd(), for_agent=True, strict=True,
                    prepare=self._with_default_name)
        except DebuggerError as exc:
            return _script_error(exc) if is_script else error_result(exc)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # the server keeps serving whatever one call does
            err = InternalError(f"{tool} failed unexpectedly: {exc!r}. Please report this.")
            return _script_error(err) if is_script else error_result(err)
        return _script_result(result) if is_script else (structured, text)

    def _with_default_name(self, cmd: Command, validated: Any) -> Any:
        """With --session NAME, the first launch or attach creates that session."""
        name = self.session_name
        if (not cmd.creates_session or name is None
                or getattr(validated, "session_name", "absent") is not None
                or any(s.name == name for s in paths.live_sessions())):
            return validated
        return validated.model_copy(update={"session_name": name})

    async def join_live(self) -> str | None:
        """Connect to the live session this server works on, if there is one,
        so the person sees the agent among the session's clients."""
        try:
            joined = await self.router.handle(self.session_name)
        except DebuggerError:
            return None  # none of this project's, or several: the first call says which
        return joined.name

    async def aclose(self) -> None:
        """End the sessions this server started (a launch by terminate, an
        attach by detach) and let go of the ones it joined."""
        with contextlib.suppress(Exception):
            await self.router.end_started()
        with contextlib.suppress(Exception):
            await self.router.close()

    async def __aenter__(self) -> "McpFrontEnd":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def create_server(session: str | None = None, **options: Any) -> McpFrontEnd:
    """The MCP front end, for `run_mcp` and for tests (`Client(front.server)`)."""
    return McpFrontEnd(session, **options)


# ============================================================================ entry point


#: How long after start-up the MCP server starts its spare host (router.prepare_spare).
SPARE_DELAY_S = 3.0


async def serve(session: str | None, transport: str, host: str, port: int,
                tools: list[str] | None = None) -> None:
    # A client only: the sessions it starts live in their own hosts, which end
    # what they started (and end a session whose starter was killed outright).
    front = create_server(session, keep_spare=True, tools=tools)
    loop = asyncio.get_running_loop()
    # The spare host's start-up (a Python process importing the commands) is
    # left until the client's handshake and first calls are answered.
    loop.call_later(SPARE_DELAY_S, front.router.prepare_spare)

    async def stop_now() -> None:
        # A stop request does not wait for the transport to wind down (a
        # client may hold stdin open, or an HTTP connection, for as long as it
        # likes): end the programs this server started, then leave.
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(front.aclose(), 20)
        os._exit(0)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, lambda: loop.create_task(stop_now()))
    try:
        await front.join_live()
        if transport == "stdio":
            await front.run_stdio()
        else:
            await serve_http(front, host, port)
    finally:
        await asyncio.shield(front.aclose())


def run_mcp(session: str | None = None, transport: str = "stdio", host: str = "127.0.0.1",
            port: int = 8765, tools: list[str] | None = None) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (http)."""
    if transport not in ("stdio", "http"):
        print(f"error: unknown transport {transport!r}; use stdio or http", file=sys.stderr)
        return 2
    try:
        if session is not None:
            paths.validate_name(session)
        if tools:
            resolve_tool_names(tools, {c.mcp: c for c in registry.all_commands() if c.mcp})
        # A client only, but every session it starts or joins is found in the
        # runtime directory: one that is unsafe (another user's link or file,
        # open to others) is refused now, with what to do, as `sessions` does.
        paths.runtime_dir()
        asyncio.run(serve(session, transport, host, port, tools))
    except DebuggerError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
