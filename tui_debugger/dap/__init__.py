"""`tui-debugger dap`: a debug adapter an editor starts (VS Code, nvim-dap, Emacs
dape or dap-mode, Zed) that joins the live session as one more front end."""
