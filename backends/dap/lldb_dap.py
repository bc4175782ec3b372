"""lldb-dap: its adapter profile and backend (the registry's "lldb-dap"),
with lldb-dap 19's quirks smoothed so that it reads like the lldb-cli backend.
Everything else is the generic DapBackend.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from typing import Any

from ..errors import DebuggerError, DependencyMissing, InvalidInput
from ..models import (AttachRequest, ContinuedEvent, EvalResult, LaunchRequest, OutputEvent,
                      Variable)
from .backend import DapBackend
from .profile import AdapterProfile, stdin_path

log = logging.getLogger("backends.dap")


class LldbDapProfile(AdapterProfile):
    """lldb-dap (formerly lldb-vscode) over stdio. Its repl runs LLDB commands."""

    name = "lldb-dap"
    adapter_id = "lldb-dap"
    # A gdb-remote server (lldb-server gdbserver) holds its program stopped.
    remote_attach_stops = True
    repl_is_command_language = True
    attach_pid = True
    attach_wait_for = True
    attach_remote = True
    core_files = True
    #: an adapter command chosen by the caller (Xcode's, from `xcrun --find lldb-dap`)
    explicit_argv: list[str] | None = None
    #: the FIFOs the launched program writes its stdout and stderr to (program_pipes.py)
    output_paths: dict[str, str] | None = None

    def adapter_argv(self) -> list[str]:
        from ..adapters import _native_hint, find_lldb_dap

        if self.explicit_argv:
            return list(self.explicit_argv)
        path = find_lldb_dap()
        if not path:
            raise DependencyMissing(
                "lldb-dap was not found. " + _native_hint("lldb-19  (provides lldb-dap-19)"),
                adapter=self.name,
            )
        return [path]

    def launch_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        program = os.path.abspath(request.program)
        if not os.path.isfile(program):
            raise InvalidInput(f"There is no program at {program}. Check the path.")
        arguments: dict[str, Any] = {
            "program": program,
            "args": list(request.args),
            "cwd": request.cwd or os.getcwd(),
            "stopOnEntry": request.stop_on_entry,
        }
        if request.env:
            # lldb-dap 19 takes "NAME=VALUE" strings; later versions take either form.
            arguments["env"] = [f"{k}={v}" for k, v in request.env.items()]
        arguments.update(request.extra)
        # Its program otherwise reads a pty nobody writes: a read waits forever.
        from ..lldb_cli.protocol import lldb_quote

        stdin = stdin_path(request)
        own = [f"settings set target.input-path {lldb_quote(stdin)}"]
        if self.output_paths:
            own += [f"settings set target.output-path {lldb_quote(self.output_paths['stdout'])}",
                    f"settings set target.error-path {lldb_quote(self.output_paths['stderr'])}"]
        arguments["preRunCommands"] = [*own, *(arguments.get("preRunCommands") or [])]
        return arguments

    def attach_arguments(self, request: AttachRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        if request.program:
            arguments["program"] = os.path.abspath(request.program)
        if request.pid is not None:
            arguments["pid"] = request.pid
        elif request.wait_for:
            arguments["program"] = request.program or request.wait_for
            arguments["waitFor"] = True
        elif request.port is not None:
            arguments["gdb-remote-port"] = request.port
            arguments["gdb-remote-hostname"] = request.host or "127.0.0.1"
            # The server holds its program before the first instruction: keep it
            # there (as gdb's `target remote` does) so breakpoints can be set first.
            arguments["stopOnEntry"] = True
        else:
            raise InvalidInput("Attach with lldb-dap needs a PID, a process name to wait for, "
                               "or HOST:PORT of a gdb-remote server.")
        if request.path_map:
            arguments["sourceMap"] = [[remote, local] for remote, local in request.path_map.items()]
        arguments.update(request.extra)
        return arguments

    def core_arguments(self, request: LaunchRequest) -> dict[str, Any]:
        program = os.path.abspath(os.path.join(request.cwd or os.getcwd(), request.program))
        core = os.path.abspath(os.path.join(request.cwd or os.getcwd(), request.core_file or ""))
        for what, path in (("program", program), ("core file", core)):
            if not os.path.isfile(path):
                raise InvalidInput(f"There is no {what} at {path}. Check the path.")
        # lldb-dap opens a core through its attach request.
        return {"program": program, "coreFile": core, **request.extra}


LEFT_IN_EXPRESSION = ('The process has been left at the point where it was interrupted, use '
                      '"thread return -x" to return to the state before expression evaluation.')
UNWOUND = "The process has been returned to the state before expression evaluation."
#: how long an unwound expression waits for lldb-dap to tell its stop (_unwind):
#: it comes 10-30 ms after the answer on an idle machine, and the wait ends
#: then; 1 s was outlasted in a run of three test files at once
EXPRESSION_STOP_WAIT_S = 5.0
#: LLDB's first line for an expression stopped inside (a signal, a breakpoint),
#: which is what says it was left there: the second (LEFT_IN_EXPRESSION) did not
#: always reach the repl's answer (1 run in ~5 of the forking-expression fault
#: test, lldb-dap 19), and a crash left in place then killed the program at the
#: next continue
INTERRUPTED = re.compile(r"Execution was interrupted, reason: ")
#: what lldb-dap reads as a variable path without running code: `a`, `a.b`, `a->b[2]`
VARIABLE_PATH = re.compile(r"[A-Za-z_]\w*(?:(?:\.|->)[A-Za-z_]\w*|\[\d+\])*")
#: the persistent result an `expression` command made: `(int) $3 = 0`
RESULT_NAME = re.compile(r"^\(.*?\) (\$\d+) = ", re.M)


class LldbDapBackend(DapBackend):
    """lldb-dap, with lldb 19's quirks smoothed so that it reads like the lldb-cli
    backend (docs/backends/native.md):

    - the stop at entry and the stop after a pause both come as reason
      "exception" with "signal SIGSTOP": reported as "entry" and "pause";
    - `waitFor` needs a program path: a bare process name waits through
      `process attach --waitfor` instead;
    - there is no readMemory request (and lldb-dap 19 dies on one): memory is
      read with `memory read` in the repl;
    - lldb-dap 19 often crashes while it exits, after `terminated`, and sends
      its crash report as stderr output: dropped.
    """

    name = "lldb-dap"
    profile_class = LldbDapProfile
    memory_read_limit = 1 << 20
    #: lldb-dap 19 ignores DAP's instruction granularity (it steps a line):
    #: its repl's own instruction steps do it
    step_instruction_commands = {False: "thread step-inst", True: "thread step-inst-over"}

    def __init__(self, emit, *, adapter_argv: list[str] | None = None, **options: Any) -> None:
        super().__init__(emit, **options)
        if adapter_argv:
            self.profile.explicit_argv = list(adapter_argv)
        self._entry_stop_pending = False
        self._pause_requested = False
        #: HOST:PORT of a gdb-remote server, when attached to one; and whether it went away
        self._remote: str | None = None
        self._remote_lost = False
        #: the threads told stopped at a gdb-remote program's entry, until it first
        #: runs: None once it has (see _on_event)
        self._entry_threads: set[Any] | None = None
        #: signals an unwound expression left as the thread's stop reason, kept from
        #: the program until it has run again (_resumed)
        self._held_signals: set[str] = set()
        #: an expression that may run code is being evaluated, or was interrupted
        #: and its own stop has not been read yet: a stop read then is the
        #: expression's, not the program's (_note_stopped, _run_expression)
        self._expression_stop_due = False
        self._expression_stop_read = asyncio.Event()
        self._pipes = None  # the launched program's stdout and stderr (ProgramPipes)

    async def launch(self, request: LaunchRequest, configure) -> None:
        if request.core_file:
            self._require_idle()
            self._launched = False
            self.post_mortem = True
            arguments = self.profile.core_arguments(request)
            await self._start_session("attach", request, arguments, configure,
                                      f"the core file {arguments['coreFile']}")
            return
        self._entry_stop_pending = request.stop_on_entry
        if self._pipes is None and "stdio" not in request.extra:
            # Its output as written: two pipes, not lldb-dap's pty (program_pipes.py).
            from ..program_pipes import ProgramPipes

            self._pipes = ProgramPipes(self._program_output)
            self._pipes.open()
            self.profile.output_paths = self._pipes.paths
        await super().launch(request, configure)

    def _program_output(self, category: str, text: str) -> None:
        # Straight to the session, not behind the adapter's queued messages: what
        # the program wrote before a stop is told before the stop.
        self._publish(OutputEvent(category=category, text=text))

    async def dispose(self) -> None:
        await super().dispose()
        if self._pipes is not None:
            self._pipes.close()

    async def attach(self, request: AttachRequest, configure) -> None:
        import shutil

        if request.pid is None and request.wait_for and not request.program:
            found = request.wait_for if os.sep in request.wait_for else shutil.which(
                request.wait_for)
            if found:
                request = request.model_copy(update={"program": os.path.abspath(found)})
            else:
                quoted = '"' + request.wait_for.replace("\\", "\\\\").replace('"', '\\"') + '"'
                request = request.model_copy(update={"extra": {
                    "program": None, "waitFor": False,
                    "attachCommands": [f"process attach --name {quoted} --waitfor"],
                    **request.extra,
                }})
        # A gdb-remote server's program is held at its entry: that first stop says so.
        self._entry_stop_pending = request.pid is None and request.port is not None
        if self._entry_stop_pending:
            self._remote = f"{request.host or '127.0.0.1'}:{request.port}"
            self._entry_threads = set()
        await super().attach(request, configure)

    def _note_stopped(self, body) -> bool | None:
        """lldb-dap 19 may tell a gdb-remote program's entry stop twice: its
        configurationDone tells it (stopOnEntry), and the connect's own stop, which
        its event thread skips only while configurationDone has not come, is told
        again when that thread reads it late (with both cores loaded, 4 attaches
        in 13: two identical SIGSTOP stops of one thread). Read as a new stop, the
        repeat replaced the entry stop with an "exception" one: it is kept from
        the session here, on the reader, before it counts as a stop. The program
        cannot stop anew before it runs, and lldb-dap tells `continued` when it
        does."""
        if self._expression_stop_due:
            # The interrupted expression's own stop, told by lldb-dap's event
            # thread around or after the evaluate's answer. The expression is
            # unwound (_unwind) and the program is where it was: no new stop.
            # Told to the session, it was read after the next continue had gone
            # out and taken for that continue's stop (ticks stayed 1 in CI).
            log.debug("lldb-dap told an interrupted expression's stop: not the program's")
            self._expression_stop_due = False
            self._expression_stop_read.set()
            return False
        if self._entry_threads is not None:
            thread = body.get("threadId")
            if thread in self._entry_threads:
                log.debug("lldb-dap told the entry stop of thread %s again: dropped", thread)
                return False
            self._entry_threads.add(thread)
        return DapBackend._note_stopped(self, body)

    def _note_continued(self, body) -> bool | None:
        self._entry_threads = None  # it ran: a stop from now on is a new one
        # lldb-dap's event thread tells in order: an expression's stop not told
        # before the program ran again never will be
        self._expression_stop_due = False
        self._resumed()  # (a continue or step typed in the repl tells only this)
        return DapBackend._note_continued(self, body)

    _NOTES = {**DapBackend._NOTES, "stopped": _note_stopped, "continued": _note_continued}

    async def _resume(self, command: str, arguments: dict[str, Any], thread_id: int) -> None:
        await super()._resume(command, arguments, thread_id)
        # Answered, it was resumed: a stop from now on is a new one, whether or
        # not a `continued` came before it.
        self._entry_threads = None
        self._resumed()

    def _lost_text(self) -> str:
        return (f"lldb lost the connection to the gdb-remote server at {self._remote}: it went "
                "away, or the network did. Start it again and attach anew.")

    async def pause(self, thread_id: int | None) -> None:
        self._pause_requested = True
        await super().pause(thread_id)

    def _apply_capabilities(self, body) -> None:
        super()._apply_capabilities(body)
        self.capabilities.read_memory = True
        self.capabilities.instruction_step = True

    async def step_instruction(self, thread_id: int, over: bool) -> None:
        self._require_stopped(action="step")
        frames, _ = await self.stack_trace(thread_id, 0, 1)
        if not frames:
            raise InvalidInput(f"Thread {thread_id} has no frames to step in.")
        generation = self._stop_generation
        # With a frame, lldb-dap's repl selects that frame's thread first.
        await self._evaluate(self.step_instruction_commands[over], frames[0].id, "repl",
                             self.profile.request_timeout)
        self._resumed()
        if self._stop_generation == generation and self._state == "stopped":
            self._state = "running"
            self._events.put_nowait(ContinuedEvent(thread_id=thread_id))

    async def disassemble(self, address: str, count: int = 32, offset: int = 0):
        """lldb-dap 19 decodes a negative instructionOffset from a guessed byte
        offset, mid-instruction: start at the enclosing function instead."""
        if offset >= 0:
            return await super().disassemble(address, count, offset)
        self._require_stopped()
        start = None
        with contextlib.suppress(DebuggerError):
            lookup = await self.raw_command(f"image lookup -a {address}",
                                            self.profile.request_timeout)
            found = re.search(r"Summary: \S+?`\S+(?: \+ (\d+))?", lookup)
            if found:
                start = int(address, 16) - int(found.group(1) or 0)
        if start is None:
            return await super().disassemble(address, count, 0)
        pc = int(address, 16)
        listing = await super().disassemble(hex(start), pc - start + count + 1, 0)
        index = next((i for i, ins in enumerate(listing) if int(ins.address, 16) >= pc),
                     len(listing))
        first = max(0, index + offset)
        return listing[first:first + count]

    async def _data_breakpoint_info(self, spec):
        # lldb-dap 19 reads `name` as an address when it is evaluated in a frame:
        # watch what the expression names, at its address, for its size.
        if spec.address and spec.size:
            # lldb-dap's own dataId form: hex address without 0x, a slash, the size
            return {"dataId": f"{int(spec.address, 16):X}/{int(spec.size)}",
                    "accessTypes": ["read", "write", "readWrite"]}
        if spec.frame_id is None:
            raise InvalidInput("A watchpoint on lldb-dap needs a frame to read the expression in.")
        info = await self._request(
            "dataBreakpointInfo", {"name": f"&({spec.expression})", "frameId": spec.frame_id})
        if info.get("dataId"):
            with contextlib.suppress(DebuggerError):
                value = await self._evaluate(spec.expression, spec.frame_id, "watch",
                                             self.profile.request_timeout)
                info = {**info, "type": value.type}
        elif "undeclared identifier" in str(info.get("description") or "") or \
                "error:" in str(info.get("description") or ""):
            info = {**info, "description": str(info["description"]).strip().splitlines()[0]}
        return info

    async def _translate(self, message):
        from ..models import ExitedEvent, OutputEvent, StoppedEvent, TerminatedEvent

        if self._pipes is not None and message.get("event") in ("stopped", "exited",
                                                                "terminated"):
            self._pipes.drain()  # what it wrote before it stopped or ended comes first
        event = await super()._translate(message)
        if isinstance(event, OutputEvent) and event.category in ("console", "stdout"):
            # (what lldb's Python prints comes as the adapter's stdout)
            event = _without_lldb_chatter(event)
            if event is None:
                return None
        if self._remote and isinstance(event, ExitedEvent) and event.exit_code == -1:
            # lldb's own words for a gdb-remote connection that dropped: status -1
            self._remote_lost = True
            self._publish(OutputEvent(category="important", text=self._lost_text() + "\n"))
        if self._remote_lost and isinstance(event, TerminatedEvent):
            event = event.model_copy(update={"reason": self._lost_text()})
        if isinstance(event, StoppedEvent) and (event.description or "").startswith(
                "watchpoint"):
            event = event.model_copy(update={"reason": "data breakpoint"})
        if self._held_signals and isinstance(event, ExitedEvent):
            self._release_held_signals()
        if isinstance(event, StoppedEvent):
            sigstop = event.reason == "exception" and (event.description or "").startswith(
                "signal SIGSTOP")
            if self._entry_stop_pending:
                event = event.model_copy(update={"reason": "entry", "text": None})
            elif self._pause_requested and (sigstop or event.reason == "step"):
                # a pause that lands while lldb single-steps internally says "trace"
                event = event.model_copy(update={"reason": "pause", "text": None})
            self._entry_stop_pending = False
            self._pause_requested = False
        elif (isinstance(event, OutputEvent) and event.category == "stderr"
              and self._adapter_terminated.is_set()):
            return None
        return event

    # ------------------------------------------------ expressions that fork
    # LLDB 19 takes a fork or vfork inside an expression (`(int)system("true")`)
    # for a crash and unwinds it, leaving the vfork child held and the program
    # blocked in the kernel: the next continue never returned (llvm-project#78515).
    # lldb-dap's evaluate always unwinds on error, so an expression that may run
    # code goes through `expression --unwind-on-error false` and its result `$N`
    # is read back as a value; a real crash is unwound here, and its signal kept
    # from the program on the next run (restored once it ran: _resumed), as LLDB
    # does when it unwinds. The same as the lldb-cli backend's helper
    # (run_expression).

    async def _evaluate_expression(self, expression: str, frame_id: int | None, context: str,
                                   timeout: float):
        from ..errors import CommandFailed
        from .values import user_error

        text = expression.strip()
        if (context == "hover" or frame_id is None or VARIABLE_PATH.fullmatch(text)
                or "`" in text or not text.isprintable()):
            # No code runs, or text that must not reach a command line (a line
            # break would end it; a backtick is substituted): lldb-dap's own evaluate.
            return await self._evaluate(expression, frame_id, context, timeout)
        async def evaluated() -> str:
            said = (await self._evaluate(
                f"`expression --unwind-on-error false --apply-fixits false -- {text}",
                frame_id, "repl", timeout)).value
            # lldb-dap echoes the command first: "(lldb) expression ..."
            return "\n".join(line for line in said.splitlines() if not line.startswith("(lldb) "))

        said = await self._run_expression(evaluated, frame_id, timeout)
        result = RESULT_NAME.search(said)
        if result is None:
            error = re.search(r"^error:.*", said, re.M | re.S)
            if error:
                raise CommandFailed(user_error(error.group(0).strip()), expression=expression)
            return EvalResult(value=said.strip())  # no value (void): the text
        return await self._evaluate(result.group(1), frame_id, "watch", timeout)

    async def raw_command(self, command: str, timeout: float) -> str:
        words = command.lstrip("`").split(None, 1)
        expression = bool(words) and words[0] in ("expression", "dwim-print")
        if not expression:
            return await super().raw_command(command, timeout)
        command = f"{words[0]} --unwind-on-error false {words[1] if len(words) > 1 else ''}"
        return await self._run_expression(
            lambda: super(LldbDapBackend, self).raw_command(command, timeout), None, timeout)

    async def _run_expression(self, run, frame_id: int | None, timeout: float) -> str:
        """What `run()` answers for an expression that may run code; one that was
        interrupted is unwound first. A stop told meanwhile, or after an
        interrupted one until its stop is read, is the expression's
        (_note_stopped); one that finished or failed tells none."""
        self._expression_stop_due = True
        self._expression_stop_read.clear()
        try:
            said = await run()
        except BaseException:
            self._expression_stop_due = False
            raise
        if not INTERRUPTED.search(said):
            self._expression_stop_due = False
            return said
        await self._unwind(said, frame_id, timeout)
        return said.replace(LEFT_IN_EXPRESSION, UNWOUND)

    async def _unwind(self, said: str, frame_id: int | None, timeout: float) -> None:
        await self._evaluate("`thread return -x", frame_id, "repl", timeout)
        # The interrupted expression's own stop is told by lldb-dap's event
        # thread after the answer (10-30 ms idle; over 1 s under load). It is
        # never the program's (_note_stopped); waiting for it here, briefly,
        # lets the answer come after it, as the stop came before the answer.
        if self._expression_stop_due:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._expression_stop_read.wait(), EXPRESSION_STOP_WAIT_S)
        signal = re.search(r"reason: signal (SIG[A-Z0-9]+)", said)
        if signal and signal.group(1) not in self._held_signals:
            await self._evaluate(f"`process handle {signal.group(1)} --pass false",
                                 frame_id, "repl", timeout)
            self._held_signals.add(signal.group(1))

    def _resumed(self) -> None:
        """The program ran (not an expression: lldb-dap hears nothing of those):
        lldb chose each thread's signal to deliver as it resumed it, so a held
        signal has been kept from the program and its handling can be restored.
        Not at the next stop: an interrupted expression's own stop is told after
        the answer, by lldb-dap's event thread, and read late (under load, after
        the hold) it released the signal before the continue, which then gave the
        program its SIGSEGV. A `continued` comes from that same thread, after any
        such stop; requests are handled in order, so a restore sent once a resume
        is answered lands after it."""
        if self._held_signals:
            self._release_held_signals()

    def _release_held_signals(self) -> None:
        held, self._held_signals = self._held_signals, set()
        for name in held:
            task = asyncio.get_running_loop().create_task(self._evaluate(
                f"`process handle {name} --pass true", None, "repl",
                self.profile.request_timeout))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def return_value(self, thread_id: int) -> Variable | None:
        """lldb-dap 19 lists no return value: lldb's own answer, through its repl
        (the thread's stop return value, described as lldb-cli describes it)."""
        self._require_stopped()
        script = (
            "script import json; t = lldb.debugger.GetSelectedTarget().GetProcess()"
            f".GetThreadByID({int(thread_id)}); v = t.GetStopReturnValue(); "
            "print('@@TDBG' + '-RV ' + json.dumps([v.GetValue(), v.GetSummary(), "
            "v.GetDisplayTypeName()] if v.IsValid() else None))"
        )
        text = await self.raw_command(script, self.profile.request_timeout)
        found = re.search(r"@@TDBG-RV (.*)", text)
        if not found:
            return None
        answer = json.loads(found.group(1))
        if not answer:
            return None
        plain, summary, type_name = answer
        value = " ".join(part for part in (plain, summary) if part) or type_name or ""
        return Variable(name="(Return Value)", value=value, type=type_name or None)

    async def read_memory(self, address: str, count: int) -> bytes:
        from ..errors import CommandFailed

        if self.adapter_capabilities.get("supportsReadMemoryRequest"):
            return await super().read_memory(address, count)
        try:
            start = int(str(address), 0)
        except ValueError:
            raise InvalidInput(f"{address!r} is not an address; give one like 0x7ffc1000.") from None
        if not 0 < count <= self.memory_read_limit:
            raise InvalidInput(f"Read between 1 and {self.memory_read_limit} bytes.")
        self._require_stopped()
        text = await self.raw_command(
            f"memory read --force --format x --size 1 --count {count} {start:#x}",
            self.profile.request_timeout,
        )
        data = bytearray()
        for line in text.splitlines():
            head, colon, rest = line.partition(":")
            if colon and head.strip().lower().startswith("0x"):
                data.extend(int(token, 16) for token in rest.split() if token.startswith("0x"))
        if not data:
            raise CommandFailed(f"lldb could not read memory at {start:#x}: {text.strip()}")
        return bytes(data[:count])


#: lldb-dap's console lines about its own doings, not the program's: the echo of
#: the settings we send before the launch, the exit status (an exited event says
#: it, and the session's status), and our own return-value query's answer
_LLDB_CHATTER = re.compile(
    r"Running preRunCommands:\n|\(lldb\) settings set target\.(?:input|output|error)-path .*\n"
    r"|Process \d+ exited with status = .*\n?|@@TDBG-RV .*\n?")


def _without_lldb_chatter(event):
    text = _LLDB_CHATTER.sub("", event.text)
    if text == event.text:
        return event
    return event.model_copy(update={"text": text}) if text.strip() else None
