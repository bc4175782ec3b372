"""A multiprocessing Pool with the start method given as the argument."""
import multiprocessing
import sys


def work(n):
    square = n * n  # @worker
    return square  # @worker-return


if __name__ == "__main__":
    multiprocessing.set_start_method(sys.argv[1] if len(sys.argv) > 1 else "spawn")
    with multiprocessing.Pool(1) as pool:
        print("squares", pool.map(work, [3]))
