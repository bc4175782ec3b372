"""The LLDB command-line backend: lldb driven through its prompt, with a Python helper inside it."""
