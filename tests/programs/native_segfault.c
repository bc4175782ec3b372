/* Dereferences a null pointer, for signal-stop tests. */
#include <stdio.h>

struct node {
    int value;
    struct node *next;
};

static int read_next_value(struct node *n) {
    return n->next->value; /* LINE:crash */
}

int main(void) {
    struct node lonely = {1, NULL};
    printf("about to crash\n");
    fflush(stdout);
    return read_next_value(&lonely);
}
