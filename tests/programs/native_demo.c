/* A small program for native debugger tests: a struct, a loop, nested calls
 * and a global. Line numbers are referenced by the tests through the
 * "LINE:" markers, so keep each marker on the line it names. */
#include <stdio.h>

struct point {
    int x;
    int y;
    const char *label;
};

int global_counter = 7;

static int square(int value) {
    int result = value * value; /* LINE:square_body */
    return result;
}

static int sum_of_squares(struct point *p) {
    int total = square(p->x); /* LINE:call_square */
    total += square(p->y);
    return total; /* LINE:sum_return */
}

int main(void) {
    struct point origin = {3, 4, "origin"};
    int accumulator = 0;
    for (int i = 0; i < 5; i++) {
        accumulator += i; /* LINE:loop_body */
        global_counter++;
    }
    int distance_squared = sum_of_squares(&origin); /* LINE:after_loop */
    printf("accumulator=%d distance_squared=%d\n", accumulator, distance_squared);
    fflush(stdout);
    return 0; /* LINE:main_return */
}
