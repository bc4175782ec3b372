"""tui-debugger: one live debug session, driven by a person in a Textual TUI and
by a coding agent through MCP tools or CLI commands."""

__version__ = "0.1.0"
