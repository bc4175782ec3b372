"""Every command, declared once, by area. Importing this package declares them
all, in the order the front ends list them (CLI help, MCP tools/list, the TUI's
palette); `registry` looks them up.

    registry   the declaration (Command, Args, Result) and the lookup
    views      the result models
    context    what the areas share: views built from a session, path resolution
    lifecycle, breakpoints, control, inspect, console, native, tools, ray    the commands
"""

from . import lifecycle, breakpoints, control, inspect, console, native, tools, ray  # noqa: F401  (declaration order)
