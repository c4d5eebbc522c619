// File-system calls that Glibc's Swift module lacks: renameat2 (glibc declares it only with
// _GNU_SOURCE, and the module is built without it). Called through syscall(2), which sets errno
// like the libc wrapper and works with any glibc; Swift cannot call the variadic syscall() itself.
// No library is linked.
#ifndef BLESEND_CFILECALLS_SHIM_H
#define BLESEND_CFILECALLS_SHIM_H

#include <sys/syscall.h>
#include <unistd.h>

// linux/fs.h: RENAME_NOREPLACE = (1 << 0).
#define BLESEND_RENAME_NOREPLACE 1u

// Renames without replacing: fails with EEXIST if newpath exists, and with EINVAL where the file
// system does not support the flag.
static inline int blesend_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, BLESEND_RENAME_NOREPLACE);
}

#endif
