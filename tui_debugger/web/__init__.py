"""The browser view (`tui-debugger serve`): the TUI served to a browser tab.
Runs in the `serve` process, which starts a TUI process per tab.
"""
