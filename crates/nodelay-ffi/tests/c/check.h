/* What the C tests share: CHECK counts a failed condition in `failures`
 * and prints it with the library's last error message; a test's main
 * returns `failures != 0`. */
#ifndef NODELAY_TEST_CHECK_H
#define NODELAY_TEST_CHECK_H

#include <stdio.h>

#include "nodelay.h"

static int failures = 0;

#define CHECK(cond)                                                      \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", \
                    __FILE__, __LINE__, #cond, nodelay_last_error());    \
            failures++;                                                  \
        }                                                                \
    } while (0)

#endif
