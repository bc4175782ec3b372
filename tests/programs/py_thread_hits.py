"""Threads reaching one breakpoint: `stagger` N threads 50 ms apart, or
`barrier` N threads released together (argv: mode, count)."""

import sys
import threading
import time


def work(index, barrier, delay):
    if barrier is not None:
        barrier.wait()
    else:
        time.sleep(delay)
    value = index * 10  # @hit
    return value


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "stagger"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    barrier = threading.Barrier(count) if mode == "barrier" else None
    threads = [threading.Thread(target=work, args=(i, barrier, 0.05 * (i + 1)), name=f"worker-{i}")
               for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("all done")  # @done


main()
