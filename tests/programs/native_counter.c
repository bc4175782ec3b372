/* Runs until killed, printing a counter, for attach and pause tests. */
#include <stdio.h>
#include <unistd.h>

volatile int ticks = 0;

static void tick(void) {
    ticks++; /* LINE:tick */
}

int main(void) {
    for (;;) {
        tick();
        printf("tick %d\n", ticks);
        fflush(stdout);
        usleep(100 * 1000);
    }
    return 0;
}
