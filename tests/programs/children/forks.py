"""os.fork: the child runs a function, the parent waits for it."""
import os


def in_child():
    pid = os.getpid()  # @forked
    return pid  # @forked-return


child = os.fork()
if child == 0:
    in_child()
    os._exit(0)
os.waitpid(child, 0)
print("parent done")
