"""The TUI's own keys and actions: the pane keys and F8, help, find / go to
line / open a file in the source, the source pane's actions that the app binds
(F9, Shift+F9, Ctrl+F10, J, frame up / down), the disassembly, Ctrl+C.

A mixin of `DebuggerApp` (tui/app.py), which owns the attributes it uses.
"""

from __future__ import annotations

import os
import sys

from textual import events
from textual.actions import SkipAction
from textual.widgets import Input, TabbedContent

from .format import display_path
from .widgets.breakpoints_pane import BreakpointsPane
from .widgets.console_pane import ConsoleInput
from .widgets.disassembly_view import DisassemblyView
from .widgets.output_pane import OutputPane, ProgramInput
from .widgets.source_prompt import SourcePrompt
from .widgets.source_view import SourceView
from .widgets.stack_pane import StackPane
from .widgets.variables_pane import VariablesPane
from .widgets.watches_pane import WatchesPane


class PaneActions:
    """Actions bound to keys (tui/keymap.py) that act on the screen itself."""

    #: Each pane: the tabs that hold it (None for the source), its tab, what gets focus.
    PANES = {
        "source": (None, None, "#source"),
        "output": ("#io-tabs", "tab-output", "#output-log"),
        "console": ("#io-tabs", "tab-console", "#console-input"),
        "activity": ("#io-tabs", "tab-activity", "#activity"),
        "variables": ("#data-tabs", "tab-variables", "#variables"),
        "watches": ("#data-tabs", "tab-watches", "#watch-input"),
        "stack": ("#nav-tabs", "tab-stack", "#stack"),
        "threads": ("#nav-tabs", "tab-threads", "#threads"),
        "breakpoints": ("#nav-tabs", "tab-breakpoints", "#breakpoints"),
    }

    def action_toggle_breakpoint(self) -> None:
        self.source.action_toggle_breakpoint()

    def action_run_to_cursor(self) -> None:
        self.source.action_run_to_cursor()

    def action_jump_to_cursor(self) -> None:
        self.source.action_jump_to_cursor()

    def action_python_shell(self) -> None:
        """pudb's `!`: a full Python shell in the selected frame, in the terminal."""
        if not self._python_session():
            self.notify("The Python shell is for Python programs; the Console (F7) evaluates "
                        "in this one.", severity="warning")
            return
        if self.state != "stopped" or self.link is None:
            self.notify("Stop the program first (F6): the shell runs in a stopped frame.",
                        severity="warning")
            return
        import signal
        import subprocess
        import sys

        from textual.app import SuspendNotSupported

        loc = self.stop_info.location if self.stop_info is not None else None
        where = (f"{display_path(loc.path, self.cwd)}:{loc.line}" if loc and loc.path
                 else "the selected frame")
        command = [sys.executable, "-m", "tui_debugger.tui.shell", "--session", self.link.name,
                   "--frame", str(self.selected_frame), "--where", where]
        # Ctrl+C in the shell reaches this process too (one terminal): ignored meanwhile.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            with self.suspend():
                # The app waits, as for an editor: the terminal is the shell's.
                subprocess.run(command, cwd=self.cwd)
        except SuspendNotSupported:
            self.notify("The full shell needs a terminal of its own (the browser view has none): "
                        "the Console (F7) evaluates here.", severity="warning")
            return
        finally:
            signal.signal(signal.SIGINT, previous)
        # Its assignments and imports: Locals and the watches read again.
        self.run_worker(self._refresh_values, group="refresh-values", exclusive=True)

    def action_toggle_just_my_code(self) -> None:
        """Just my code on or off in the running debugpy, without a restart."""
        if not self._python_session():
            self.notify("Just my code is debugpy's (Python programs).", severity="warning")
            return
        if self.state != "stopped" or self.link is None:
            self.notify("Stop the program first (F6): the switch is made in the stopped program.",
                        severity="warning")
            return
        self.run_worker(self._toggle_just_my_code, group="just-my-code", exclusive=True)

    async def _toggle_just_my_code(self) -> None:
        from backends.errors import DebuggerError

        # pydevd's own switch, the one its launch option `justMyCode` sets: it
        # takes effect at once, for the next step and stop.
        debugger = "__import__('sys').modules['pydevd'].get_global_debugger()"
        frame = {"frame_index": self.selected_frame}
        try:
            now = await self.link.call("evaluate", {"expression":
                                                    f"{debugger}.get_use_libraries_filter()", **frame})
            turn_on = now.value.strip() != "True"
            await self.link.call("evaluate", {
                "expression": f"{debugger}.set_use_libraries_filter({turn_on})", **frame})
        except DebuggerError as exc:
            self.notify(f"Could not switch just my code: {exc.message} It is set at launch too: "
                        "`run --no-just-my-code`, then restart.", severity="error")
            return
        self.notify("Steps and stops skip libraries (your code only)." if turn_on else
                    "Steps go into libraries too, and their exceptions stop.",
                    title=f"Just my code {'on' if turn_on else 'off'}")

    def action_frame_offset(self, offset: int) -> None:
        self._run("frame", {"offset": offset})

    def action_edit_breakpoint(self) -> None:
        self.source.action_edit_breakpoint()

    def action_toggle_disassembly(self) -> None:
        """The source pane shows the machine instructions instead, and back."""
        view = self.query_one(DisassemblyView)
        showing = not view.display
        view.display = showing
        self.source.display = not showing
        (view if showing else self.source).focus()
        if showing:
            self.run_worker(self._refresh_disassembly, group="disassembly", exclusive=True)

    def action_help(self) -> None:
        # on demand, after the first paint
        from .widgets.help_screen import PUDB_KEYS, PYTEST_HOWTO, HelpScreen, binding_rows

        sections = [
            ("Everywhere", binding_rows(list(self.BINDINGS), self.keymap)
             + [("Ctrl+P", "command palette: every command")]),
            ("Source pane (pdb/pudb keys)", binding_rows(SourceView.BINDINGS, self.keymap)),
            ("Breakpoints pane", binding_rows(BreakpointsPane.BINDINGS, self.keymap)),
            ("Watches pane", binding_rows(WatchesPane.BINDINGS, self.keymap)),
            ("Output pane", binding_rows(OutputPane.BINDINGS, self.keymap)),
            ("Program input (under Output)", [("Enter", "send the line to the program")]
             + binding_rows(ProgramInput.BINDINGS, self.keymap)),
            ("Variables pane", [("Enter, Space", "open or close a value")]
             + binding_rows(VariablesPane.BINDINGS, self.keymap)),
            ("Console", binding_rows(ConsoleInput.BINDINGS, self.keymap)
             + [("Enter", "evaluate in the selected frame")]),
            ("Mouse", [("click gutter", "toggle a breakpoint on that line"),
                       ("click row twice", "select a frame / thread, edit a breakpoint"),
                       ("click ▶ in Variables", "expand a value"),
                       ("click footer key", "run that command")]),
            ("Coming from pudb: its keys, and ours", PUDB_KEYS),
            ("Debugging a pytest test (tui-debugger …; docs/projects.md)", PYTEST_HOWTO),
        ]
        self.push_screen(HelpScreen(sections))

    def action_focus_pane(self, name: str) -> None:
        if self.screen is not self.screen_stack[0]:
            raise SkipAction()  # a dialog is open: its own fields keep the key
        tabs, pane, target = self.PANES[name]
        if self.screen.maximized is not None:
            self.screen.minimize()  # a maximized pane would hide the one asked for
        if tabs is not None:
            self.query_one(tabs, TabbedContent).active = pane
        self.query_one(target).focus()

    async def action_focus_step(self, direction: int) -> None:
        """Tab / Shift+Tab (priority bindings, keymap.PRIORITY), on any screen:
        the focused widget's own binding of the key (the console's Tab
        completes), else the next or previous widget of the screen's focus chain."""
        key = "tab" if direction > 0 else "shift+tab"
        # The focused widget and its containers, with the keymap applied, as
        # Textual would have run them had the key bubbled (tui/frames.py
        # fingerprints the chain): not the screen's own Tab, which is this.
        focused = self.focused
        for node, bindings in self.screen._modal_binding_chain:  # noqa: SLF001
            if focused is None or node is self.screen or node is self:
                break  # (nothing focused: the chain starts at the screen)
            if any(not b.priority for b in bindings.key_to_bindings.get(key, ())):
                # Its own Tab (the console completes) is handed to it as the key,
                # to run after the keys typed before it, still in its queue (run
                # here, the completion read the text without them).
                focused._forward_event(events.Key(key, "\t" if key == "tab" else None))  # noqa: SLF001
                return
        if direction > 0:
            self.screen.focus_next()
        else:
            self.screen.focus_previous()

    def action_find(self) -> None:
        self.action_focus_pane("source")
        prompt = self.query_one(SourcePrompt)
        self._find_origin = self.source.cursor_line
        prompt.ask("find", self.source.find_text)
        self.source.typing_into = prompt

    def action_go_to_line(self) -> None:
        if self.source.file is None:
            self.notify("No file is open in the source pane.", severity="warning")
            return
        self.action_focus_pane("source")
        prompt = self.query_one(SourcePrompt)
        prompt.ask("line")
        self.source.typing_into = prompt

    def on_source_prompt_answered(self, message: SourcePrompt.Answered) -> None:
        message.stop()
        source = self.source
        if message.mode == "line":
            if not message.cancelled and message.value.isdigit():
                source.go_to_line(int(message.value))
        elif message.cancelled:
            source.clear_find()
            source.go_to_line(getattr(self, "_find_origin", source.cursor_line))
        elif not message.value:
            source.clear_find()
        else:
            # As you type, search from where the find began, so the match does not run away.
            count = source.find(message.value, getattr(self, "_find_origin", None))
            if message.done and not count:
                self.notify(f"No match for {message.value!r} in this file.", severity="warning")
        if message.done:
            source.typing_into = None
            source.focus()

    def action_open_file(self) -> None:
        from .widgets.open_file_dialog import OpenFileDialog, program_files, project_files

        seen: set[str] = set()
        candidates: list[tuple[str, str]] = []

        def offer(path: str, note: str = "") -> None:
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                candidates.append((path, display_path(path, self.cwd) + note))

        for frame in self.query_one(StackPane).frames:
            if frame.file:
                offer(frame.file, f"  (frame {frame.index}: {frame.name})")
        root = os.path.dirname(os.path.abspath(self.program)) if self.program and \
            os.path.isfile(self.program) else self.cwd
        for path in project_files(self.cwd) or project_files(root):
            offer(path)
        for path in program_files(root):
            offer(path)

        def chosen(path: str | None) -> None:
            if path:
                if self.source.open_file(path):
                    self.source.go_to_line(1)
                self.source.focus()

        self.push_screen(OpenFileDialog(candidates, self.cwd), chosen)

    def action_toggle_maximize(self) -> None:
        if self.screen.maximized is not None:
            self.screen.minimize()
        elif self.focused is not None:
            self.screen.maximize(self.focused)

    def action_interrupt(self) -> None:
        """Ctrl+C: pause the running program, as gdb, lldb and pdb do."""
        if self.state == "running":
            self.invoke_command("pause")
            return
        if isinstance(self.focused, Input) or _is_text_area(self.focused):
            raise SkipAction()  # the field copies its selection
        if self.screen is self.screen_stack[0]:
            self.notify("Ctrl+C pauses the program while it runs; q or Ctrl+Q quits.",
                        title="Not running")


def _is_text_area(widget: object) -> bool:
    """A TextArea, without importing Textual's (~8 ms of the start): a widget
    that is one has imported it already."""
    loaded = sys.modules.get("textual.widgets._text_area")
    return loaded is not None and isinstance(widget, loaded.TextArea)
