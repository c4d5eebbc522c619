// Socket calls that Glibc's Swift module lacks: recvmmsg/sendmmsg (they need _GNU_SOURCE, and the
// module is built without it) and eventfd. Called through syscall(2), which sets errno like the
// libc wrappers; the struct is the kernel's `struct mmsghdr`. No library is linked.
#ifndef BLESEND_CSOCKETBATCH_SHIM_H
#define BLESEND_CSOCKETBATCH_SHIM_H

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

struct blesend_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

static inline int blesend_recvmmsg(int fd, struct blesend_mmsghdr *vec, unsigned int count, int flags) {
    return (int)syscall(SYS_recvmmsg, fd, vec, count, flags, (void *)0);
}

static inline int blesend_sendmmsg(int fd, struct blesend_mmsghdr *vec, unsigned int count, int flags) {
    return (int)syscall(SYS_sendmmsg, fd, vec, count, flags);
}

// eventfd2(initval, flags); flags are EFD_CLOEXEC (O_CLOEXEC) and EFD_NONBLOCK (O_NONBLOCK).
static inline int blesend_eventfd_nonblocking(void) {
    return (int)syscall(SYS_eventfd2, 0, 02000000 | 04000);
}

#endif
