"""The command line (`tui-debugger ...`): `main` is the executable's door and
decides, in one place, whether a command takes the quick path (`quick`: the
standard library only, the session's host parses and runs the line) or the
whole command line (`full`). `parse` is the parser generated from the command
registry, shared with a session's host, which parses there the lines the quick
client hands it; `ray` is the Ray commands' own parsing. Runs in the process
of each CLI command. Imports nothing here: a host that imports `parse` must
not import the door, which starts hosts.
"""
