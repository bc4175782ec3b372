/* Output floods and huge values, for the caps of the fault suite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int deep(int n) {
    if (n == 0) {
        return 0; /* LINE:deepest */
    }
    return deep(n - 1) + 1;
}

int main(void) {
    static int big_array[1000000];
    size_t size = 10 * 1024 * 1024;
    char *big_string = malloc(size + 1);
    memset(big_string, 'x', size);
    big_string[size] = 0;
    for (int i = 0; i < 1000000; i++) {
        big_array[i] = i;
    }
    char *line = malloc(1024 * 1024 + 2);
    memset(line, 'y', 1024 * 1024);
    line[1024 * 1024] = '\n';
    line[1024 * 1024 + 1] = 0;
    for (int i = 0; i < 4; i++) {
        fputs(line, stdout); /* a 1 MiB line, four times */
    }
    fflush(stdout);
    int depth = deep(300);
    printf("%d %d %zu\n", depth, big_array[5], strlen(big_string)); /* LINE:after_flood */
    return 0;
}
