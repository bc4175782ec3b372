"""Three named worker threads that meet at a barrier, then a breakpoint line."""

import threading

barrier = threading.Barrier(4)
results = {}


def work(n):
    barrier.wait()
    results[n] = n * n
    barrier.wait()


workers = [threading.Thread(target=work, args=(n,), name=f"worker-{n}") for n in range(3)]
for w in workers:
    w.start()
barrier.wait()
barrier.wait()  # @all-started: workers are parked at the second wait
total = sum(results.values())
for w in workers:
    w.join()
print("total", total)
