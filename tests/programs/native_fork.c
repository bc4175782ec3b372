/* A program that forks a child, for the note that lldb does not follow it. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int in_child(void) {
    sleep(3);
    return 7; /* LINE:child */
}

int main(void) {
    pid_t child = fork();
    if (child == 0) {
        return in_child();
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("child exited %d\n", WEXITSTATUS(status)); /* LINE:after */
    return 0;
}
