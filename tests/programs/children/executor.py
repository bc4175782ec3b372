"""A concurrent.futures ProcessPoolExecutor with one worker given one task."""
from concurrent.futures import ProcessPoolExecutor


def work(n):
    square = n * n  # @worker
    return square  # @worker-return


if __name__ == "__main__":
    with ProcessPoolExecutor(max_workers=1) as pool:
        print("squares", list(pool.map(work, [3])))
