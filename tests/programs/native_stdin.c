/* Reads one line of stdin: says what it got, or that it met end of file. */
#include <stdio.h>

int main(void) {
    char line[256];
    if (fgets(line, sizeof line, stdin) == NULL) {
        puts("stdin: eof");
    } else {
        printf("stdin: got %s", line);
    }
    fflush(stdout);
    return 0;
}
