"""Which way a command line goes: the quick path or the whole command line.
One place decides, for both sides of the quick path: the door (main.py) asks
before it imports anything, and a session's host asks again once it has parsed
the line the quick client handed it (cli/parse.py, run_on_host). Nothing is
imported here, so the door pays for no more than this file.
"""

from __future__ import annotations

#: The first words of the CLI forms of the commands that act on one live
#: session (tests/test_cli_quick.py checks this against the registry). Any other
#: word takes the whole command line.
SESSION_WORDS = frozenset({
    "activity", "await", "b", "backtrace", "break", "bt", "c", "complete", "context",
    "continue", "detach", "disas", "disassemble", "down", "eval", "finish", "frame", "input",
    "jump", "lldb", "locals", "memory", "n", "next", "nexti", "ni", "out", "output", "p",
    "pause", "print", "restart", "s", "set", "si", "status", "step", "stepi", "stop", "thread",
    "threads", "trace", "until", "up", "wait", "watch", "where", "x",
})

#: Set (to anything) to send every command through the whole command line.
ENV_FULL = "TUI_DEBUGGER_FULL_CLI"


def quick_session_command(argv: list[str], env: dict[str, str]) -> bool:
    """The door: hand this line to the session's host (quick.run_command)."""
    return bool(argv) and argv[0] in SESSION_WORDS and not env.get(ENV_FULL)


def starts_early(argv: list[str]) -> bool:
    """The door: start the new session's host before anything else is imported
    (host/early.py), so that its start-up overlaps the command line's."""
    return bool(argv) and argv[0] in ("run", "start") and not {"-h", "--help"} & set(argv)


def quick_start(argv: list[str], env: dict[str, str]) -> bool:
    """The door: the host started early parses and runs `start` itself (quick.start)."""
    return bool(argv) and argv[0] == "start" and not env.get(ENV_FULL)


def host_runs(*, entry_point: bool, needs_session: bool, creates_session: bool,
              same_session: bool, follows: bool) -> bool:
    """A session's host, on a line the quick client sent it and it has parsed:
    run it here, or hand it back to the whole command line (which then runs it
    from the start: the host's parse had no side effects). Handed back: an
    entry point or a command that is not one live session's (it starts or
    lists sessions), a line naming another session than the one reached, and
    `output --follow` (a stream, not one answer). Help is handed back before
    this is asked (the client prints it itself)."""
    return (not entry_point and needs_session and not creates_session and same_session
            and not follows)
