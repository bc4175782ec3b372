"""The MCP front end (`tui-debugger mcp`): `server` declares the tools from the
command registry, `stdio` and `http` are its transports. Runs in the MCP server's
own process, a client of the session's host. Imports nothing here, so
`import mcp` elsewhere always means the SDK.
"""
