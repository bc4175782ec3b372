"""Session events and socket messages are models: every kind of event crosses
the socket as the same model it was published as, and the messages the quick
CLI client writes as plain JSON are the protocol's. No debugger needed."""

from __future__ import annotations

import json
import typing

import pytest

from backends.models import Breakpoint, BreakpointSpec, SourceLocation
from tui_debugger import events
from tui_debugger.host import wire
from tui_debugger.models import ActivityEntry, ClientInfo, SessionState, StopInfo, Watch
from tui_debugger.output import OutputLine

HERE = SourceLocation(path="/tmp/app.py", line=12, name="app.py")

EXAMPLES: list[events.Event] = [
    events.State(state=SessionState.stopped, origin="mcp"),
    events.Stopped(stop=StopInfo(reason="breakpoint", thread_id=1, location=HERE,
                                 breakpoint_ids=[2], held_threads=[3])),
    events.Continued(thread_id=1, how="step_in", origin="tui"),
    events.Output(line=OutputLine(seq=7, category="stdout", text="hello\n")),
    events.Breakpoints(breakpoints=[Breakpoint(id=1, spec=BreakpointSpec(path="/tmp/app.py",
                                                                         line=12), hits=4)]),
    events.Threads(thread_id=3, reason="held"),
    events.Activity(entry=ActivityEntry(origin="cli", command="next", seq=5)),
    events.Selection(thread_id=1, frame_index=2, placed=True, location=None, function="f"),
    events.Exited(exit_code=3),
    events.Terminated(reason="the program ended", exit_code=None),
    events.Clients(clients=[ClientInfo(id="tui-1", origin="tui")]),
    events.Watches(watches=[Watch(id=1, expression="x", value=None)]),
    events.Values(name="x", value="5"),
    events.ExceptionFilters(filters=["uncaught"]),
    events.Process(session="app.12", parent="app", pid=12, event="stopped", location=HERE),
    events.Notice(text="No stop yet"),
]


def test_every_kind_of_event_has_an_example():
    union = typing.get_args(typing.get_args(events.SessionEvent)[0])
    assert {type(e) for e in EXAMPLES} == set(union)


@pytest.mark.parametrize("event", EXAMPLES, ids=lambda e: e.kind)
def test_an_event_crosses_the_socket_as_the_model_it_was(event):
    event.seq = 41
    line = wire.encode(wire.EventMessage(event=event))
    received = wire.parse_reply(wire.decode(line))
    assert isinstance(received, wire.EventMessage)
    assert type(received.event) is type(event)
    assert received.event == event  # None stays None, defaults stay as sent


def test_the_quick_clients_plain_json_is_the_protocol():
    # What cli/quick.py writes with json.dumps (it imports no pydantic).
    hello = wire.parse_request(json.loads(json.dumps(
        {"type": "hello", "origin": "cli", "client": "cli", "subscribe": False,
         "register": False})))
    assert isinstance(hello, wire.Hello) and not hello.registered
    line = wire.parse_request(json.loads(json.dumps(
        {"type": "cli", "id": 1, "argv": ["print", "x"], "cwd": "/tmp", "session": None,
         "columns": 80})))
    assert isinstance(line, wire.CommandLine) and line.argv == ["print", "x"]
    # and what it reads back: the keys it looks for, no others
    welcome = json.loads(wire.encode(wire.Welcome(session="app", pid=1)))
    assert welcome == {"type": "welcome", "session": "app", "pid": 1, "cli": 1}
    answer = json.loads(wire.encode(wire.Result(id=1, ok=True, cli={"text": "x = 1", "rc": 0})))
    assert answer == {"type": "result", "id": 1, "ok": True, "cli": {"text": "x = 1", "rc": 0}}


def test_a_request_that_is_not_the_protocols_is_refused():
    with pytest.raises(ValueError):
        wire.parse_request({"type": "call", "id": 1, "command": "next", "args": [1, 2]})
    with pytest.raises(ValueError):
        wire.parse_reply({"type": "nonsense"})
