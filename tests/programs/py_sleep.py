"""Runs for about half a minute, printing a tick every 0.1 s: something to pause,
detach from and attach to."""

import time

for tick in range(300):
    print("tick", tick, flush=True)  # @tick
    time.sleep(0.1)
