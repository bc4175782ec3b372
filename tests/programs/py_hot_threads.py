"""Two threads run the same hot loop (different lengths, one after the other
starts) to a breakpoint after it: on Python 3.12+ the loop's lines are disabled while nothing steps, and
every stop enables them again for the other thread too."""

import threading
import time


def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total  # @done


results = {}


def worker(name, n, delay):
    time.sleep(delay)
    results[name] = spin(n)


# The second starts its loop while the first is stopped at the breakpoint or
# running on (1 s later): two threads at one breakpoint at the same moment are
# another matter (docs/backends.md).
threads = [threading.Thread(target=worker, args=(f"t{k}", 100_000 * (k + 1), k), name=f"t{k}")
           for k in range(2)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print("results", sorted(results.items()))  # @print
