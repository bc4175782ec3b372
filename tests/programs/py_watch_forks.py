"""A watched account in child processes: each forked child changes its own
copy, then the parent changes its own.

    py_watch_forks.py fork | held | pool | executor | spawn | subprocess

held: the child waits for the parent to stop after the fork, then spends.
"""
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor


class Account:
    def __init__(self, balance):
        self.balance = balance


acct = Account(100)


def spend(amount):
    acct.balance -= amount  # LINE:spend
    return acct.balance


def main(kind):
    print("children by", kind)  # LINE:opened
    if kind == "fork":
        pid = os.fork()
        if pid == 0:
            spend(30)  # LINE:child
            spend(5)
            os._exit(0)
        os.waitpid(pid, 0)
    elif kind == "held":
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.read(read, 1)
            spend(30)
            os._exit(0)
        print("forked", pid)  # LINE:forked
        os.write(write, b"x")
        os.waitpid(pid, 0)
    elif kind == "executor":
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
            print("child balances", list(pool.map(spend, [30, 5])))
    elif kind == "subprocess":
        subprocess.run([sys.executable, __file__, "alone"], check=True)
    elif kind == "alone":
        spend(30)
        return
    else:  # pool: the fork start method; spawn
        start = "fork" if kind == "pool" else kind
        with multiprocessing.get_context(start).Pool(1) as pool:
            print("child balances", pool.map(spend, [30, 5]))
    acct.balance += 5  # LINE:after
    print("parent balance", acct.balance)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fork")
