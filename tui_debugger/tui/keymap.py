"""Key bindings: generated from the command registry (each command's default
keys), plus the TUI's own actions. Every binding has an id, so a `keymap`
setting ({binding id or command id: "key,key"}) rebinds it through Textual's
keymap mechanism."""

from __future__ import annotations

from textual.binding import Binding

from ..commands import registry

#: Short labels for the footer and help; the registry's help text is the long form.
LABELS = {
    "continue": "Continue", "next": "Over", "step": "Into", "finish": "Out",
    "pause": "Pause", "terminate": "Stop", "restart": "Restart", "until": "Run to cursor",
    "stepi": "Into (instruction)", "nexti": "Over (instruction)",
}
#: What the footer shows at 80 columns; everything else is in `?` and the palette.
FOOTER = ("continue", "next", "step", "finish", "toggle_breakpoint", "help")

#: The TUI's own bindable actions: (id, default keys, action, description).
TUI_ACTIONS = [
    ("toggle_breakpoint", "f9", "toggle_breakpoint", "Break"),
    ("edit_breakpoint", "shift+f9", "edit_breakpoint",
     "Breakpoint condition / hit count / log message on the cursor line"),
    ("help", "question_mark", "help", "Keys"),
    ("quit", "ctrl+q", "quit", "Quit"),
    # `q` asks first (pudb's q opens a menu); Ctrl+Q quits at once.
    ("quit_ask", "q", "ask_quit", "Quit (asks first)"),
    # Ctrl+C pauses the program, as in gdb, lldb and pdb (in a text field, with
    # the program stopped, it copies).
    ("interrupt", "ctrl+c", "interrupt", "Pause the running program"),
    ("attach_dialog", "ctrl+a", "attach_dialog", "Attach / launch (a new session)"),
    ("next_stopped_process", "alt+n", "next_stopped_process",
     "Show the next stopped process of the program"),
    # Every pane has a key: Alt and a letter of its name, and the F keys people
    # already know for the four most used. Not Alt+digits (Textual reads ESC digit
    # as the character macOS types with Option), nor Alt+B / Alt+F (word moves),
    # nor Alt+T / Alt+K, which reach Textual garbled through tmux.
    ("focus_source", "f2,alt+s", "focus_pane('source')", "Go to the Source pane"),
    ("focus_output", "f4,alt+o", "focus_pane('output')", "Go to the Output pane"),
    ("focus_console", "f7,alt+c", "focus_pane('console')", "Go to the Console pane"),
    ("focus_activity", "alt+a", "focus_pane('activity')", "Go to the Activity pane"),
    ("focus_variables", "f3,alt+v", "focus_pane('variables')", "Go to the Variables pane"),
    ("focus_watches", "alt+w", "focus_pane('watches')", "Go to the Watches pane"),
    ("focus_stack", "alt+u", "focus_pane('stack')", "Go to the Stack pane"),
    ("focus_threads", "alt+h", "focus_pane('threads')", "Go to the Threads pane"),
    ("focus_breakpoints", "alt+p", "focus_pane('breakpoints')", "Go to the Breakpoints pane"),
    ("focus_next", "tab", "focus_step(1)", "Next pane or field"),
    ("focus_previous", "shift+tab", "focus_step(-1)", "Previous pane or field"),
    ("jump_to_cursor", "ctrl+shift+f10", "jump_to_cursor",
     "Jump to the cursor line: it runs next (set next statement)"),
    ("go_to_line", "ctrl+g", "go_to_line", "Go to line in the source"),
    ("open_file", "ctrl+o", "open_file", "Open a file in the source"),
    ("maximize", "f8", "toggle_maximize", "Maximize pane"),
    # pudb's `!`: the terminal goes to a full Python shell until Ctrl+D.
    ("python_shell", "exclamation_mark", "python_shell",
     "Python shell in the selected frame (the whole terminal; Ctrl+D returns)"),
    ("disassembly", "ctrl+d", "toggle_disassembly", "Disassembly / source"),
    ("frame_up", "ctrl+up", "frame_offset(1)", "Frame up (caller)"),
    ("frame_down", "ctrl+down", "frame_offset(-1)", "Frame down"),
]

#: Bindings that act even in a text field, where the letter would be typed
#: otherwise (Alt+P in the console typed `p`); Ctrl+C before the field copies.
#: Tab and Shift+Tab too, so that the focus has moved before the keys typed
#: right behind them are handed to a widget (Textual runs a key's non-priority
#: bindings once it has bubbled back up to the app, after the next keys went
#: to the widget the focus was leaving); a widget's own Tab still runs first
#: (PaneActions.action_focus_step).
PRIORITY = {"interrupt", "focus_source", "focus_output", "focus_console", "focus_activity",
            "focus_variables", "focus_watches", "focus_stack", "focus_threads",
            "focus_breakpoints", "focus_next", "focus_previous"}

#: TUI actions the palette lists too (the rest are registry commands already there).
PALETTE_ACTIONS = {binding_id for binding_id, *_ in TUI_ACTIONS} - {"toggle_breakpoint", "help",
                                                                    "quit", "attach_dialog",
                                                                    "quit_ask", "interrupt",
                                                                    "focus_next", "focus_previous"}


def command_bindings() -> list[Binding]:
    """One binding per registry command that has default keys."""
    bindings = []
    for cmd in registry.all_commands():
        if not cmd.keys or not cmd.tui_action:
            continue
        action = "run_to_cursor" if cmd.id == "until" else f"run_command('{cmd.id}')"
        bindings.append(Binding(",".join(cmd.keys), action, LABELS.get(cmd.id, cmd.help),
                                show=cmd.id in FOOTER, id=cmd.id,
                                key_display=display_key(cmd.keys[0])))
    return bindings


def app_bindings() -> list[Binding]:
    return command_bindings() + [
        Binding(key, action, description, show=binding_id in FOOTER, id=binding_id,
                key_display=display_key(key.split(",")[0]), priority=binding_id in PRIORITY)
        for binding_id, key, action, description in TUI_ACTIONS
    ]


def user_keymap() -> dict[str, str]:
    """The `keymap` setting, if the settings model has one: {id: "key[,key]"}."""
    from ..config import settings

    keymap = getattr(settings(), "keymap", None) or {}
    return {str(k): str(v) for k, v in dict(keymap).items()}


_NAMES = {"question_mark": "?", "slash": "/", "period": ".", "space": "Space",
          "exclamation_mark": "!", "asterisk": "*",
          "delete": "Del", "escape": "Esc", "enter": "Enter", "pageup": "PgUp",
          "pagedown": "PgDn", "up": "↑", "down": "↓"}


def display_key(key: str) -> str:
    """"ctrl+shift+f5" -> "Ctrl+Shift+F5"; "question_mark" -> "?"."""
    parts = key.strip().split("+")
    out = []
    for part in parts:
        if part in _NAMES:
            out.append(_NAMES[part])
        elif len(part) == 1:
            out.append(part.upper() if len(parts) > 1 else part)
        else:
            out.append(part[0].upper() + part[1:])
    return "+".join(out)


def bindable_ids() -> list[str]:
    """Every id a keymap may name: the app's bindings and the panes'."""
    from .widgets.breakpoints_pane import BreakpointsPane
    from .widgets.console_pane import ConsoleInput
    from .widgets.output_pane import OutputPane, ProgramInput
    from .widgets.source_view import SourceView
    from .widgets.variables_pane import VariablesPane
    from .widgets.watches_pane import WatchesPane

    ids = [b.id for b in app_bindings()]
    for widget in (SourceView, BreakpointsPane, OutputPane, ProgramInput, VariablesPane,
                   WatchesPane, ConsoleInput):
        ids += [b.id for b in widget.BINDINGS if isinstance(b, Binding) and b.id]
    return [i for i in ids if i]
