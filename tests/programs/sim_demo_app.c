/* Stands in for an iOS app in the simctl tests: a process that runs until it is
 * killed, so a debugger can attach to it, stop it and leave it running. */
#include <unistd.h>

volatile int frames_drawn = 0;

static void draw_frame(void) {
    frames_drawn++; /* LINE:draw_frame */
}

int main(void) {
    for (;;) {
        draw_frame();
        usleep(20 * 1000);
    }
    return 0;
}
