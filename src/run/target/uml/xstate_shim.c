/*
 * fslab: a ptrace shim preloaded into a User-Mode Linux kernel process on a host whose
 * XSAVE area is larger than the kernel's FP buffer (src/run/target/uml/xstate.rs).
 *
 * UML 6.1 and 6.12 keep each guest thread's FP state in an 832-byte buffer (x87/SSE 512,
 * the XSAVE header 64, AVX 256) and move it with PTRACE_GETREGSET/PTRACE_SETREGSET of
 * NT_X86_XSTATE. The host refuses a SETREGSET that is not its whole XSAVE area (EFAULT),
 * and that area is larger on a CPU with AVX-512 or AMX, so the guest's init dies at its
 * first system call ("userspace - ptrace set fp regs failed, errno = 14").
 *
 * This shim keeps the whole area per UML buffer (one buffer per guest thread): a
 * GETREGSET fills it and gives UML its first bytes; a SETREGSET lays UML's bytes over
 * it and sets the whole area. Every other ptrace request is passed through unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef long (*ptrace_fn)(enum __ptrace_request, pid_t, void *, void *);
static ptrace_fn real;
static size_t full;
#define SLOTS 4096
static struct { void *base; unsigned char *st; } map[SLOTS];

static unsigned char *slot(void *base, int *fresh) {
  size_t h = ((size_t)base >> 4) % SLOTS;
  for (size_t i = 0; i < SLOTS; i++) {
    size_t k = (h + i) % SLOTS;
    if (map[k].base == base) { *fresh = 0; return map[k].st; }
    if (!map[k].base) {
      map[k].base = base; map[k].st = calloc(1, full); *fresh = 1; return map[k].st;
    }
  }
  return NULL;
}

long ptrace(enum __ptrace_request req, ...) {
  va_list ap; va_start(ap, req);
  pid_t pid = va_arg(ap, pid_t); void *addr = va_arg(ap, void *); void *data = va_arg(ap, void *);
  va_end(ap);
  if (!real) real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
  if ((req == PTRACE_GETREGSET || req == PTRACE_SETREGSET) && (long)addr == NT_X86_XSTATE && data) {
    struct iovec *iov = data;
    if (!full) {
      static unsigned char probe[1 << 16];
      struct iovec f = { probe, sizeof probe };
      long r = real(PTRACE_GETREGSET, pid, addr, &f);
      if (r < 0) return r;
      full = f.iov_len;
    }
    if (iov->iov_len < full) {
      int fresh; unsigned char *st = slot(iov->iov_base, &fresh);
      if (!st) { errno = ENOMEM; return -1; }
      struct iovec f = { st, full };
      if (req == PTRACE_GETREGSET) {
        long r = real(PTRACE_GETREGSET, pid, addr, &f);
        if (r < 0) return r;
        memcpy(iov->iov_base, st, iov->iov_len);
        return r;
      }
      if (fresh) { long r = real(PTRACE_GETREGSET, pid, addr, &f); if (r < 0) return r; }
      memcpy(st, iov->iov_base, iov->iov_len);
      return real(PTRACE_SETREGSET, pid, addr, &f);
    }
  }
  return real(req, pid, addr, data);
}
