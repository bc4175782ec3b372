"""Two Pool workers, each given one task: both stop at the same breakpoint.
Both workers are up before either takes a task (a barrier in the
initializer), so on a busy machine one worker cannot take both tasks."""
import multiprocessing


def ready(barrier):
    barrier.wait()


def work(n):
    doubled = n * 2  # @work
    return doubled  # @return


if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    barrier = multiprocessing.Barrier(2)
    with multiprocessing.Pool(2, initializer=ready, initargs=(barrier,)) as pool:
        print("doubled", pool.map(work, [1, 2], chunksize=1))
