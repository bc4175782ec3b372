"""Two Pool workers, each given one task: both stop at the same breakpoint."""
import multiprocessing


def work(n):
    doubled = n * 2  # @work
    return doubled


if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    with multiprocessing.Pool(2) as pool:
        print("doubled", pool.map(work, [1, 2], chunksize=1))
