"""os.fork: the child runs a function, the parent waits for it."""
import os


def in_child(n):
    pid = os.getpid()  # @forked
    return n * 2  # @forked-return


child = os.fork()
if child == 0:
    in_child(7)
    os._exit(0)
os.waitpid(child, 0)
print("parent done")
