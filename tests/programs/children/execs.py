"""A program that re-executes itself with os.execv: the new image is debugged."""
import os
import sys

if sys.argv[1:] == ["again"]:
    value = 42  # @again
    print("the new image", value)  # @again-print
else:
    print("before exec", flush=True)
    os.execv(sys.executable, [sys.executable, __file__, "again"])
