/* A thread that counts as fast as it can while main stops at a breakpoint:
   shows whether an expression evaluated on main lets the other threads run. */
#include <pthread.h>
#include <unistd.h>

volatile long spins = 0;

static void *spin(void *arg) {
    for (;;)
        spins++;
    return arg;
}

int main(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, spin, NULL);
    while (spins == 0)
        usleep(1000);
    usleep(1000); /* LINE:stop */
    return 0;
}
