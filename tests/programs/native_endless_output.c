/* Writes lines to stdout, and now and then to stderr, until it is stopped. */
#include <stdio.h>
#include <string.h>

int main(void) {
    static char line[4096];
    memset(line, 'z', sizeof line - 2);
    line[sizeof line - 2] = '\n';
    for (unsigned long n = 0;; n++) {
        fputs(line, stdout); /* LINE:write */
        if (n % 64 == 0) {
            fprintf(stderr, "still writing %lu\n", n);
        }
    }
    return 0;
}
