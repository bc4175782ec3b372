/* A local declared in an inner block: part of the locals at a stop there. */
#include <stdio.h>

int main(void) {
    int total = 0;
    for (int i = 0; i < 3; i++) {
        int square = i * i;
        total += square; /* LINE:block */
    }
    printf("%d\n", total);
    return 0;
}
