// The kernel's clock discipline, which Glibc's Swift module lacks (sys/timex.h). Headers only; no
// library is linked.
#ifndef BLESEND_CCLOCKCALLS_SHIM_H
#define BLESEND_CCLOCKCALLS_SHIM_H

#include <sys/timex.h>

enum {
    BLESEND_STA_UNSYNC = STA_UNSYNC,
    BLESEND_TIME_ERROR = TIME_ERROR,
};

// Reads the clock's state without changing anything (adjtimex with modes 0, which needs no
// privilege): the clock state (TIME_OK ... TIME_ERROR) and the status bits, or -1 with errno set.
static inline int blesend_clock_state(int *status) {
    struct timex t = {0};
    int state = adjtimex(&t);
    if (state < 0) return -1;
    *status = t.status;
    return state;
}

#endif
