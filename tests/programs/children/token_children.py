"""Starts Python children three ways (a script, `-c`, a fork that execs), each
writing its pid to OUTDIR and then waiting to be ended with the session."""

import os
import subprocess
import sys
import time

WAIT = "import os, sys, time; open(os.path.join(sys.argv[1], sys.argv[2] + '.pid'), 'w').write(str(os.getpid())); time.sleep(300)"

if len(sys.argv) > 2:  # a child: name its pid, then wait
    out, kind = sys.argv[1], sys.argv[2]
    with open(os.path.join(out, kind + ".pid"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(300)
    sys.exit(0)

out = sys.argv[1]
children = [subprocess.Popen([sys.executable, __file__, out, "script"]),
            subprocess.Popen([sys.executable, "-c", WAIT, out, "code"])]
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, __file__, out, "exec"])
time.sleep(300)
