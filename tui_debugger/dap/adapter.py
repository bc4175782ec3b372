"""One editor's DAP connection, as a front end of a live session.

The editor is the DAP client and this is its adapter: `attach` joins a live
session (the one named, else the project's, as the CLI picks it), `launch`
starts one in a host of its own (as `tui-debugger start` does), so the TUI,
the CLI and an agent can join it too. Each request runs one command of the
registry through the session's socket, with the editor's `clientID` as the
origin ("vscode", "neovim"): the activity log says the editor did it, and the
breakpoints it sets are its own. Every event of the session, whoever caused
it, is told to the editor as DAP's (`stopped`, `continued`, `output`,
`breakpoint`, `thread`, `exited`, `terminated`).

Requests are answered one at a time, in order (a step answers as soon as it is
under way, as the TUI's do), except the ones that must not wait behind
another: pause, terminate. A disconnect waits for the requests before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from typing import Any, Awaitable, Callable

from backends.errors import DebuggerError, InvalidInput, NotSupported

from .. import events
from ..client.router import RemoteHandle, join, resolve_live
from ..commands.context import join_path
from ..commands.registry import View
from .breakpoints import BreakpointBook
from .handles import Handles
from .inspection import InspectionRequests

#: Shown as the editor's panes are: each scope on its own, values cut by the editor.
DAP_VIEW = View(panes=True)

#: the origin of a client that sends no usable clientID
DEFAULT_ORIGIN = "dap"
_ORIGIN = re.compile(r"[a-z0-9][a-z0-9_.-]{0,23}")

#: the DAP requests answered beside the queue (see the module's docstring)
OUT_OF_LINE = {"pause", "terminate"}

#: the requests answered before attach or launch joined a session
WITHOUT_SESSION = {"initialize", "attach", "launch", "disconnect"}
NO_SESSION = "No session yet: send attach (to join a live one) or launch first."

#: Capabilities flag -> DAP capability
CAPABILITIES = {
    "conditional_breakpoints": "supportsConditionalBreakpoints",
    "hit_conditional_breakpoints": "supportsHitConditionalBreakpoints",
    "log_points": "supportsLogPoints",
    "function_breakpoints": "supportsFunctionBreakpoints",
    "set_variable": "supportsSetVariable",
    "data_breakpoints": "supportsDataBreakpoints",
}

Send = Callable[[dict[str, Any]], Awaitable[None]]


def origin_of(client_id: Any) -> str:
    """The editor's clientID as an origin: lower case, short, plain; else "dap"."""
    text = str(client_id or "").strip().lower()
    return text if _ORIGIN.fullmatch(text) else DEFAULT_ORIGIN


class DapAdapter(InspectionRequests):
    def __init__(self, send: Send, *, session: str | None = None, token: str | None = None):
        self._send = send
        self.session_name = session
        #: with --listen: attach and launch must carry it (serve.py)
        self.token = token
        self.origin = DEFAULT_ORIGIN
        self.handle: RemoteHandle | None = None
        self.handles = Handles()
        self.breakpoints = BreakpointBook(self)
        self._seq = 0
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        #: how this client ends what it started: "terminate" after its launch
        self.started: str | None = None
        self.configured = False
        self.stop_on_entry = False
        self.lines_start_at_1 = True
        self.columns_start_at_1 = True
        self.selected_thread: int | None = None
        self.capabilities: dict[str, Any] = {}
        #: the session whose capabilities initialize answered
        self._told_caps_of: str | None = None
        self.closed = asyncio.Event()
        #: the editor said goodbye (disconnect): what it started is as it asked
        self.said_goodbye = False
        self.told_terminated = False
        #: a restart goes on from the program's entry: that stop is not told
        self._past_entry = False
        #: the editor starts child debug sessions when asked (startDebugging)
        self.starts_children = False
        #: the child processes' sessions it was asked to start, by name
        self._children_offered: set[str] = set()

    # ------------------------------------------------------------------ wire

    async def send(self, message: dict[str, Any]) -> None:
        self._seq += 1
        await self._send({"seq": self._seq, **message})

    async def event(self, name: str, body: dict[str, Any] | None = None) -> None:
        await self.send({"type": "event", "event": name, **({"body": body} if body else {})})

    async def _respond(self, request: dict[str, Any], body: Any = None,
                       error: str | None = None) -> None:
        reply: dict[str, Any] = {"type": "response", "request_seq": request.get("seq", 0),
                                 "command": request.get("command", ""), "success": error is None}
        if error is not None:
            reply["message"] = error
            # format is a template ({name} is a variable): the text is not one
            reply["body"] = {"error": {"id": 1, "format": error.replace("{", "(").replace(
                "}", ")"), "showUser": True}}
        elif body is not None:
            reply["body"] = body
        await self.send(reply)

    def receive(self, message: dict[str, Any]) -> None:
        """One message from the editor (serve.py reads and decodes them)."""
        if message.get("type") != "request":
            return  # a response to a reverse request, or an event: none is asked for
        if message.get("command") in OUT_OF_LINE:
            asyncio.ensure_future(self._answer(message))
        else:
            self._queue.put_nowait(message)

    async def run(self) -> None:
        """Answer requests in order until the editor leaves (feed None)."""
        try:
            while (request := await self._queue.get()) is not None:
                await self._answer(request)
                if self.closed.is_set():
                    break
        finally:
            await self.close()

    def editor_gone(self) -> None:
        self._queue.put_nowait(None)

    async def _answer(self, request: dict[str, Any]) -> None:
        command = str(request.get("command", ""))
        handler = getattr(self, f"request_{command}", None)
        args = request.get("arguments") or {}
        if handler is None:
            await self._respond(request, error=f"{command!r} is not a request this adapter "
                                "answers (see its capabilities).")
            return
        if not isinstance(args, dict):
            await self._respond(request, error=f"{command}: arguments must be an object.")
            return
        if self.handle is None and command not in WITHOUT_SESSION:
            await self._respond(request, error=NO_SESSION)
            return
        try:
            body = await handler(args)
        except DebuggerError as exc:
            await self._respond(request, error=exc.message)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # the adapter keeps serving whatever one request does
            await self._respond(request, error=f"{command} failed unexpectedly: {exc!r}. "
                                "Please report this.")
        else:
            await self._respond(request, body)

    async def call(self, command: str, args: dict[str, Any] | None = None) -> Any:
        """A command of the registry on the joined session, as this editor."""
        if self.handle is None:
            raise InvalidInput(NO_SESSION)
        return await self.handle.call(command, args or {})

    # ------------------------------------------------------------------ life cycle

    async def request_initialize(self, args: dict[str, Any]) -> dict[str, Any]:
        self.origin = origin_of(args.get("clientID"))
        self.lines_start_at_1 = args.get("linesStartAt1", True) is not False
        self.columns_start_at_1 = args.get("columnsStartAt1", True) is not False
        self.starts_children = args.get("supportsStartDebuggingRequest") is True
        base = {
            "supportsConfigurationDoneRequest": True,
            "supportsEvaluateForHovers": True,
            "supportsExceptionInfoRequest": True,
            "supportTerminateDebuggee": True,
            "supportsTerminateRequest": True,
            "supportsSteppingGranularity": True,
            # the debugger's own completions, else the frame's names (the complete command)
            "supportsCompletionsRequest": True,
            # the session's restart (a launched program's; an attached one says so)
            "supportsRestartRequest": True,
        }
        if self.token is None:
            # Stdio: the editor started this process, and the session it joins can be
            # told now (the project's, or --session): its debugger's capabilities.
            # Over --listen nothing of a session is told before the token came.
            with contextlib.suppress(DebuggerError):
                name = await resolve_live(self.session_name)
                base.update(await self._session_capabilities(await join(
                    name, self.origin, subscribe=False, register=False, view=DAP_VIEW),
                    close=True))
                self._told_caps_of = name
        self.capabilities = base
        return base

    async def _session_capabilities(self, handle: RemoteHandle, close: bool = False
                                    ) -> dict[str, Any]:
        """What the debugger under the session can do, in DAP's words."""
        try:
            status = await handle.call("status", {})
            flags = set(status.capabilities)
            out: dict[str, Any] = {dap: name in flags for name, dap in CAPABILITIES.items()}
            try:
                listed = await handle.call("exception_breakpoints", {})
                out["exceptionBreakpointFilters"] = [
                    {"filter": f.id, "label": f.label, "default": f.enabled}
                    for f in listed.filters]
            except DebuggerError:
                out["exceptionBreakpointFilters"] = []
            return out
        finally:
            if close:
                await handle.close()

    def _check_token(self, args: dict[str, Any]) -> None:
        if self.token is None:
            return
        import hmac

        given = args.get("token")
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(),
                                                                 self.token.encode()):
            raise InvalidInput("This adapter listens on a port: attach and launch must carry "
                               "its token (\"token\" in the configuration; it is in the file "
                               "`tui-debugger dap --listen` named when it started).")

    async def request_attach(self, args: dict[str, Any]) -> None:
        self._check_token(args)
        if self.handle is not None:
            raise InvalidInput("Already attached to a session; disconnect first.")
        name = args.get("session", self.session_name)
        if name is not None and not isinstance(name, str):
            raise InvalidInput("session: a session's name (see `tui-debugger sessions`).")
        await self._link(await resolve_live(name or None, cwd=_cwd(args)))
        await self.event("initialized")

    async def request_launch(self, args: dict[str, Any]) -> None:
        from ..host.start import start_host

        self._check_token(args)
        if self.handle is not None:
            raise InvalidInput("Already attached to a session; disconnect first.")
        program = args.get("program")
        module = args.get("module")
        if not (isinstance(program, str) and program) and not (isinstance(module, str)
                                                               and module):
            raise InvalidInput("launch needs \"program\" (a .py, .js, native or Go program) "
                               "or \"module\".")
        # Stopped at the entry until configurationDone, so the editor's breakpoints
        # are set before the program runs (DAP's order, written once here).
        self.stop_on_entry = args.get("stopOnEntry") is True
        wire: dict[str, Any] = {"stopOnEntry": True}
        for key in ("program", "module", "args", "cwd", "env", "adapter", "python",
                    "sessionName", "justMyCode", "stdin"):
            if args.get(key) is not None:
                wire[key] = args[key]
        result = await start_host("launch", wire, cwd=_cwd(args) or os.getcwd(),
                                  origin=self.origin, owned=True, view=DAP_VIEW.to_wire())
        self.started = "terminate"
        await self._link(result["session"])
        await self.event("initialized")

    async def _link(self, name: str) -> None:
        self.handle = await join(name, self.origin, view=DAP_VIEW)
        if name != self._told_caps_of:
            # Another session than initialize's (or none was known then): DAP's
            # capabilities event tells the editor what this one's debugger can do.
            caps = await self._session_capabilities(self.handle)
            changed = {k: v for k, v in caps.items() if self.capabilities.get(k) != v}
            self.capabilities.update(caps)
            if changed:
                await self.event("capabilities", {"capabilities": changed})
        await self.breakpoints.learn((await self.call("breakpoint_list")).breakpoints)
        self._pump = asyncio.ensure_future(self._events())

    async def request_configurationDone(self, args: dict[str, Any]) -> None:
        self.configured = True
        status = await self.call("status")
        if self.started and not self.stop_on_entry and status.state == "stopped":
            await self.call("continue", {"waitMs": 0})
        elif status.state == "stopped" and status.stop is not None:
            # Stopped before this editor came (or at the entry it asked for): say so,
            # as the stop it would have heard.
            await self._stopped(events.Stopped(stop=status.stop))
        await self._offer_children()

    async def _offer_children(self) -> None:
        """Each child process's session of the joined one, live now, offered to
        the editor as a child debug session; the later ones come as Process events."""
        from .. import paths

        if self.handle is None:
            return
        for entry in paths.live_sessions():
            if entry.parent == self.handle.name:
                await self._offer_child(entry.name, entry.program_pid)

    async def _offer_child(self, name: str, pid: int | None) -> None:
        """DAP's startDebugging: the editor starts another adapter (or
        connection) that attaches to the child's session, as debugpy's own
        subprocess support has VS Code do."""
        if not self.starts_children or name in self._children_offered:
            return
        self._children_offered.add(name)
        configuration: dict[str, Any] = {"request": "attach", "session": name,
                                         "name": f"{name}" + (f" (pid {pid})" if pid else "")}
        if self.token is not None:
            configuration["token"] = self.token  # the editor gave it; the child's attach needs it
        await self.send({"type": "request", "command": "startDebugging",
                         "arguments": {"request": "attach", "configuration": configuration}})

    async def request_disconnect(self, args: dict[str, Any]) -> None:
        # DAP's default: a launched program ends with its editor, an attached one runs on.
        terminate = args.get("terminateDebuggee", self.started is not None) is True
        if terminate and self.started and self.handle is not None:
            with contextlib.suppress(DebuggerError):
                await self.call("terminate")
        self.said_goodbye = True
        self.closed.set()
        self.editor_gone()

    async def request_restart(self, args: dict[str, Any]) -> None:
        """The program again from the start, its breakpoints kept: the session's
        restart, which every client of it sees."""
        self.handles.reset()
        # A program this editor launched stops at its entry (launch asked for it,
        # so that breakpoints were set first): past it, unless the editor wants it.
        self._past_entry = bool(self.started and not self.stop_on_entry)
        await self.call("restart", {"waitMs": 0})

    async def request_terminate(self, args: dict[str, Any]) -> None:
        if not self.started:
            raise InvalidInput("This editor joined the session, it did not start it: "
                               "disconnect leaves it running; end it with `tui-debugger "
                               "stop` where it was started.")
        await self.call("terminate")

    async def close(self) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(BaseException):
                await self._pump
            self._pump = None
        if self.started and not self.said_goodbye and self.handle is not None:
            # The editor went without a word (closed the pipe, the adapter was
            # stopped): the program it launched ends with it, as a TUI's does.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.call("terminate"), 20)
        if self.handle is not None:
            handle, self.handle = self.handle, None
            await handle.close()
        self.closed.set()

    # ------------------------------------------------------------------ events

    async def _events(self) -> None:
        assert self.handle is not None
        async for event in self.handle.events():
            handler = self.EVENTS.get(type(event))
            if handler is None:
                continue
            try:
                await handler(self, event)
            except (ConnectionError, OSError):
                break  # the editor is gone
            except Exception:  # one event the editor cannot be told must not stop the rest
                continue
        if not self.closed.is_set():
            # The session's host went away: the editor's session is over.
            with contextlib.suppress(Exception):
                await self._terminated(events.Terminated())

    async def _stopped(self, event: events.Stopped) -> None:
        if not self.configured:
            return  # told at configurationDone, once the editor is ready for it
        if self._past_entry and event.stop.reason == "entry":
            # A restart's stop at the entry (request_restart): not told, gone on from.
            self._past_entry = False
            await self.call("continue", {"waitMs": 0})
            return
        self.handles.reset()
        stop = event.stop
        thread = stop.thread_id or self.selected_thread
        if thread is None:
            threads = (await self.call("threads")).threads
            thread = threads[0].id if threads else 1
        self.selected_thread = thread
        body: dict[str, Any] = {"reason": stop.reason, "threadId": thread,
                                "allThreadsStopped": True}
        if stop.description:
            body["description"] = stop.description
        if stop.text:
            body["text"] = stop.text
        if stop.breakpoint_ids:
            body["hitBreakpointIds"] = stop.breakpoint_ids
        await self.event("stopped", body)

    async def _continued(self, event: events.Continued) -> None:
        self.handles.reset()
        if event.origin == self.origin or not self.configured:
            return  # DAP: not told for the editor's own resume
        body: dict[str, Any] = {"allThreadsContinued": True}
        body["threadId"] = event.thread_id or self.selected_thread or 1
        await self.event("continued", body)

    async def _output(self, event: events.Output) -> None:
        category = event.line.category
        await self.event("output", {"category": category if category in (
            "stdout", "stderr", "console", "important") else "console",
            "output": event.line.text})

    async def _threads(self, event: events.Threads) -> None:
        if event.thread_id is not None and event.reason in ("started", "exited"):
            await self.event("thread", {"reason": event.reason, "threadId": event.thread_id})

    async def _selection(self, event: events.Selection) -> None:
        if event.thread_id is not None:
            self.selected_thread = event.thread_id

    async def _exited(self, event: events.Exited) -> None:
        if event.exit_code is not None:
            await self.event("exited", {"exitCode": event.exit_code})

    async def _terminated(self, event: events.Terminated) -> None:
        if not self.told_terminated:  # once: the session's end, then its host's
            self.told_terminated = True
            await self.event("terminated")

    async def _values(self, event: events.Values) -> None:
        # Someone changed a value: the editor reads its variables again.
        self.handles.reset()
        await self.event("invalidated", {"areas": ["variables"]})

    async def _breakpoints(self, event: events.Breakpoints) -> None:
        await self.breakpoints.changed(event)

    async def _process(self, event: events.Process) -> None:
        if (event.event == "started" and self.configured and self.handle is not None
                and event.parent == self.handle.name):
            await self._offer_child(event.session, event.pid)

    EVENTS: dict[type, Callable[["DapAdapter", Any], Awaitable[None]]] = {
        events.Stopped: _stopped, events.Continued: _continued, events.Output: _output,
        events.Threads: _threads, events.Selection: _selection, events.Exited: _exited,
        events.Terminated: _terminated, events.Values: _values,
        events.Breakpoints: _breakpoints, events.Process: _process,
    }

    # ------------------------------------------------------------------ run control

    async def _run(self, command: str, args: dict[str, Any]) -> None:
        thread = args.get("threadId")
        call: dict[str, Any] = {"waitMs": 0}
        if isinstance(thread, int):
            call["threadId"] = thread
        self.handles.reset()
        await self.call(command, call)

    async def request_continue(self, args: dict[str, Any]) -> dict[str, Any]:
        await self._run("continue", args)
        return {"allThreadsContinued": True}

    async def request_next(self, args: dict[str, Any]) -> None:
        await self._run("nexti" if args.get("granularity") == "instruction" else "next", args)

    async def request_stepIn(self, args: dict[str, Any]) -> None:
        await self._run("stepi" if args.get("granularity") == "instruction" else "step", args)

    async def request_stepOut(self, args: dict[str, Any]) -> None:
        await self._run("finish", args)

    async def request_pause(self, args: dict[str, Any]) -> None:
        await self._run("pause", args)

    # ------------------------------------------------------------------ breakpoints

    async def request_setBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        source = args.get("source") or {}
        path = source.get("path") if isinstance(source, dict) else None
        if not isinstance(path, str) or not path:
            raise InvalidInput("setBreakpoints needs source.path (a file on this machine).")
        wanted = args.get("breakpoints")
        if wanted is None:
            wanted = [{"line": line} for line in args.get("lines") or []]
        return {"breakpoints": await self.breakpoints.set_file(path, wanted)}

    async def request_setFunctionBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"breakpoints": await self.breakpoints.set_functions(
            args.get("breakpoints") or [])}

    async def request_dataBreakpointInfo(self, args: dict[str, Any]) -> dict[str, Any]:
        """What a data breakpoint on a variable would watch: the variable's path
        as an expression, read in its frame (the dataId says both)."""
        name = args.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInput("dataBreakpointInfo needs the variable's name.")
        index = 0
        if args.get("variablesReference"):
            ref = self.handles.values(args["variablesReference"])
            if ref is None:
                raise InvalidInput("No such variables reference at this stop: ask scopes again.")
            expression = join_path(ref.expression or ref.path, name)
            index = ref.frame.index
        else:
            expression = name
            if args.get("frameId") is not None:
                index = self._frame(args["frameId"]).index
        if not self.capabilities.get("supportsDataBreakpoints"):
            return {"dataId": None, "description": "This debugger has no data breakpoints."}
        return {"dataId": f"{index}:{expression}", "description": expression,
                "accessTypes": ["write", "read", "readWrite"], "canPersist": False}

    async def request_setDataBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        """The editor's watchpoints, all of them: this editor's others are removed."""
        wanted = [b for b in args.get("breakpoints") or []
                  if isinstance(b, dict) and isinstance(b.get("dataId"), str)]
        listed = (await self.call("watch", {})).watches
        mine = {(w.expression, w.access): w for w in listed if w.set_by == self.origin}
        keys = []
        for item in wanted:
            index, _, expression = item["dataId"].partition(":")
            access = item.get("accessType") or "write"
            keys.append((expression, access, int(index) if index.isdigit() else 0))
        stale = [w.id for key, w in mine.items() if key not in {k[:2] for k in keys}]
        if stale:
            await self.call("watch", {"remove": stale})
        answers = []
        for expression, access, index in keys:
            if (expression, access) in mine:
                w = mine[(expression, access)]
                answers.append({"id": w.id, "verified": w.verified})
                continue
            try:
                result = await self.call("watch", {"expression": expression, "access": access,
                                                   "frameIndex": index})
            except DebuggerError as exc:
                answers.append({"verified": False, "message": exc.message})
                continue
            w = next((w for w in reversed(result.watches) if w.expression == expression
                      and w.access == access and w.set_by == self.origin), None)
            answers.append({"id": w.id, "verified": w.verified, **(
                {"message": w.message} if w.message else {})} if w else {"verified": False})
        return {"breakpoints": answers}

    async def request_setExceptionBreakpoints(self, args: dict[str, Any]) -> dict[str, Any]:
        filters = [f for f in args.get("filters") or [] if isinstance(f, str)]
        offered = {f["filter"] for f in self.capabilities.get("exceptionBreakpointFilters", [])}
        if not offered:
            # Nothing was offered, so the editor's empty list is no choice of its
            # own: the session's filters (uncaught exceptions stop) stay.
            return {"breakpoints": []}
        try:
            await self.call("exception_breakpoints", {"filters": filters})
        except NotSupported:
            pass
        return {"breakpoints": [{"verified": True} for _ in filters]}


def _cwd(args: dict[str, Any]) -> str | None:
    cwd = args.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else None
