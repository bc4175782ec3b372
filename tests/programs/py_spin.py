"""A module-level loop that runs until a breakpoint or a pause stops it (60 s at
most, then it prints how far it got): something to add a breakpoint to, or
pause, while its lines run untraced."""

import time

start = time.monotonic()
spins = 0
print("spinning", flush=True)
while time.monotonic() - start < 60:  # @while
    spins += 1  # @spin
    last = spins  # @last
print("spun", spins)  # @end
