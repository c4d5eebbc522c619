// File-system calls and flags that Glibc's Swift module lacks: renameat2 (glibc declares it only
// with _GNU_SOURCE, and the module is built without it), O_TMPFILE and AT_EMPTY_PATH (likewise
// _GNU_SOURCE only). renameat2 goes through syscall(2), which sets errno like the libc wrapper and
// works with any glibc; Swift cannot call the variadic syscall() itself. No library is linked.
#ifndef BLESEND_CFILECALLS_SHIM_H
#define BLESEND_CFILECALLS_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

// linux/fs.h: RENAME_NOREPLACE = (1 << 0).
#define BLESEND_RENAME_NOREPLACE 1u
// linux/fcntl.h: AT_EMPTY_PATH = 0x1000 on every architecture.
#define BLESEND_AT_EMPTY_PATH 0x1000

// pipe2(fds, O_CLOEXEC): both ends close-on-exec from the start, so a process that another
// thread forks meanwhile cannot inherit them (pipe() then fcntl() leaves that window open).
static inline int blesend_pipe_cloexec(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}

// Renames without replacing: fails with EEXIST if newpath exists, and with EINVAL where the file
// system does not support the flag.
static inline int blesend_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, BLESEND_RENAME_NOREPLACE);
}

// openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode): a file with no name in the directory
// open at dirfd, linkable later (no O_EXCL). Fails with EOPNOTSUPP (or EISDIR on kernels before
// 3.11) where the file system cannot.
static inline int blesend_open_unnamed(int dirfd, unsigned int mode) {
#ifdef __O_TMPFILE
    return openat(dirfd, ".", __O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

// linkat(fd, "", newdirfd, newpath, AT_EMPTY_PATH): gives the open file `fd` the name newpath.
// Needs CAP_DAC_READ_SEARCH on most kernels (ENOENT without it).
static inline int blesend_link_descriptor(int fd, int newdirfd, const char *newpath) {
    return linkat(fd, "", newdirfd, newpath, BLESEND_AT_EMPTY_PATH);
}

#endif
