"""A program that exec's into a program that is not Python."""
import os

print("into sleep", flush=True)  # @before-exec
os.execv("/bin/sleep", ["sleep", "60"])
