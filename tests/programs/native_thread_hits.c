/* Threads reaching one breakpoint: `stagger` N threads 50 ms apart, or
   `barrier` N threads released together (argv: mode, count). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t barrier;
static int use_barrier;

static void *work(void *arg) {
    long index = (long)arg;
    if (use_barrier)
        pthread_barrier_wait(&barrier);
    else
        usleep(50000 * (index + 1));
    volatile long value = index * 10; /* @hit */
    return (void *)value;
}

int main(int argc, char **argv) {
    int count = argc > 2 ? atoi(argv[2]) : 10;
    use_barrier = argc > 1 && strcmp(argv[1], "barrier") == 0;
    pthread_t threads[128];
    if (count > 128)
        count = 128;
    if (use_barrier)
        pthread_barrier_init(&barrier, NULL, count);
    for (long i = 0; i < count; i++)
        pthread_create(&threads[i], NULL, work, (void *)i);
    for (int i = 0; i < count; i++)
        pthread_join(threads[i], NULL);
    printf("all done\n");
    return 0;
}
