"""How a front end reaches a session: `router` finds or starts the session a
call means, `remote` is the socket client that stands in for it. Runs in every
client process (the TUI's, a CLI command's, the MCP server's, the browser
view's); imports nothing here.
"""
