/* A hosted static bot (docs/hosted.md): a random legal index, read from the line's "num_actions". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char line[1 << 21];

int main(void) {
    srand(12345);
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"decision_request\"") == NULL) continue;
        const char *p = strstr(line, "\"num_actions\":");
        int n = p ? atoi(p + 14) : 1;
        printf("%d\n", n > 0 ? rand() % n : 0);
        fflush(stdout);
    }
    return 0;
}
