// LD_PRELOAD malloc tracer for bench/alloc_trace.py: one 32-byte record (op, pointer, size,
// glibc size field) per call, written while rm_start .. rm_stop. Ops: 1 malloc, 5 the
// aligned allocations (the alignment above the op's low byte), 2 free (its size: the break after it, to see glibc trim the heap),
// 3 calloc, 4 realloc's new chunk (after a free record of the old one whose size is 1),
// 6 malloc_trim (its size: the pad; its aux: the break after), 9 rm_mark(n): a phase boundary
// and the break. glibc serves calloc and realloc without its per-thread cache, so a replay
// (bench/glibc_replay.rs) must know them apart. gcc -O2 -shared -fPIC -o alloc_trace.so
// alloc_trace.c -ldl
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <malloc.h>
#include <dlfcn.h>
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
typedef struct { uint64_t op, ptr, size, aux; } rec;
static rec buf[8192]; static int n; static int fd = -1; static int on;
// One lock over each call and its record: a process's other threads allocate too (from the
// main arena at first), and a record lost or out of order would leave the replay a chunk it
// never saw made. Nothing inside it allocates.
static char busy;
static void lock(void) { while (__atomic_test_and_set(&busy, __ATOMIC_ACQUIRE)) {} }
static void unlock(void) { __atomic_clear(&busy, __ATOMIC_RELEASE); }
static void flush(void) { if (fd >= 0 && n) { write(fd, buf, n * sizeof(rec)); } n = 0; }
static void put(uint64_t op, void *p, uint64_t s, uint64_t a) {
  if (!on) return;
  buf[n].op = op; buf[n].ptr = (uint64_t)p; buf[n].size = s; buf[n].aux = a;
  if (++n == 8192) flush();
}
static uint64_t chunk(void *p) { return p ? ((uint64_t *)p)[-1] : 0; }  // size field incl. flag bits
void rm_start(const char *path) { lock(); if (!on) { fd = open(path, O_WRONLY|O_CREAT|O_TRUNC, 0644); on = 1; } unlock(); }
// RM_TRACE_ALL=PATH traces from the process's start (mark 1000: the break then), so that a
// replay sees the whole heap; rm_start then does nothing.
__attribute__((constructor)) static void trace_all(void) {
  const char *path = getenv("RM_TRACE_ALL");
  if (path) { rm_start(path); lock(); put(9, 0, 1000, (uint64_t)sbrk(0)); unlock(); }
}
void rm_mark(uint64_t m) { lock(); put(9, 0, m, (uint64_t)sbrk(0)); unlock(); }
void rm_stop(void) { lock(); put(9, 0, 999, (uint64_t)sbrk(0)); on = 0; flush(); close(fd); fd = -1; unlock(); }
void *malloc(size_t s) { lock(); void *p = __libc_malloc(s); put(1, p, s, chunk(p)); unlock(); return p; }
void *calloc(size_t a, size_t b) { lock(); void *p = __libc_calloc(a, b); put(3, p, a * b, chunk(p)); unlock(); return p; }
void free(void *p) { lock(); uint64_t c = chunk(p); __libc_free(p); if (p) put(2, p, (uint64_t)sbrk(0), c); unlock(); }
void *realloc(void *q, size_t s) {
  lock(); uint64_t old = chunk(q); if (q) put(2, q, 1, old); void *p = __libc_realloc(q, s); put(4, p, s, chunk(p)); unlock(); return p;
}
void *memalign(size_t a, size_t s) { lock(); void *p = __libc_memalign(a, s); put(5 | a << 8, p, s, chunk(p)); unlock(); return p; }
int posix_memalign(void **r, size_t a, size_t s) {
  lock(); void *p = __libc_memalign(a, s); *r = p; put(5 | a << 8, p, s, chunk(p)); unlock(); return p ? 0 : 12;
}
void *aligned_alloc(size_t a, size_t s) { lock(); void *p = __libc_memalign(a, s); put(5 | a << 8, p, s, chunk(p)); unlock(); return p; }
int malloc_trim(size_t pad) {
  static int (*next)(size_t);
  if (!next) next = (int (*)(size_t))dlsym(RTLD_NEXT, "malloc_trim");  // dlsym may allocate: unlocked
  lock(); int r = next(pad); put(6, 0, pad, (uint64_t)sbrk(0)); unlock(); return r;
}
