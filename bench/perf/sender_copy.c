// The sender's copies, outside pxfer (docs/performance.md, section 6): CPU seconds of a thread
// sending FILE over loopback TCP in 256 KiB chunks, each chunk read once in user space (a stand-in
// for the hash and the MAC), by:
//   0 pread into a buffer + send        (pxfer before: two copies)
//   1 pread into a buffer + sendfile    (the hash reads the buffer, the socket takes page-cache pages)
//   2 whole file mmap + send            (one mapping for the run; its unmap at exit not counted)
//   3 whole file mmap + sendfile
//   5 mmap per 2 MiB block, MAP_POPULATE, munmap after it + send
//   6 mmap per 2 MiB block, munmap after it + send                (what pxfer does now)
//   7 mmap per 2 MiB block, munmap after it + sendfile            (section 24)
// gcc -O2 -o sender_copy bench/perf/sender_copy.c -lpthread
// for r in 1 2 3 4 5 6 7; do for m in 0 5 6; do ./sender_copy /dev/shm/1g.bin $m; done; done
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define CHUNK (256 * 1024)
#define BLOCK (2 << 20)
static int listener;
static volatile uint64_t sink;
static double cpu(void) {
  struct rusage r;
  getrusage(RUSAGE_THREAD, &r);
  return r.ru_utime.tv_sec + r.ru_stime.tv_sec + (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}
static uint64_t touch(const uint8_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v;
    memcpy(&v, p + i, 8);
    s ^= v;
  }
  return s;
}
static void* receive(void* arg) {
  (void)arg;
  int c = accept(listener, 0, 0);
  char* b = malloc(CHUNK);
  double t0 = cpu();
  ssize_t n;
  size_t total = 0;
  while ((n = recv(c, b, CHUNK, 0)) > 0) total += (size_t)n;
  fprintf(stderr, "  receiver cpu %.3f s (%zu bytes)\n", cpu() - t0, total);
  close(c);
  return 0;
}
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  int mode = atoi(argv[2]);
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  fstat(fd, &st);
  size_t size = (size_t)st.st_size;
  listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
  socklen_t l = sizeof a;
  bind(listener, (void*)&a, sizeof a);
  getsockname(listener, (void*)&a, &l);
  listen(listener, 1);
  pthread_t t;
  pthread_create(&t, 0, receive, 0);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  connect(s, (void*)&a, sizeof a);
  int one = 1;
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  uint8_t* buf = malloc(CHUNK);
  uint8_t *map = 0, *block = 0;
  if (mode == 2 || mode == 3) map = mmap(0, size, PROT_READ, MAP_SHARED, fd, 0);
  struct timespec w0, w1;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  double c0 = cpu();
  for (size_t off = 0; off < size; off += CHUNK) {
    size_t n = CHUNK;
    const uint8_t* p;
    if (mode == 5 || mode == 6 || mode == 7) {
      if (off % BLOCK == 0) {
        if (block) munmap(block, BLOCK);
        block = mmap(0, BLOCK, PROT_READ, MAP_SHARED | (mode == 5 ? MAP_POPULATE : 0), fd, (off_t)off);
      }
      p = block + off % BLOCK;
    } else if (mode == 2 || mode == 3) {
      p = map + off;
    } else {
      if (pread(fd, buf, n, (off_t)off) != (ssize_t)n) return 1;
      p = buf;
    }
    sink ^= touch(p, n);
    if (mode == 1 || mode == 3 || mode == 7) {
      off_t o = (off_t)off;
      for (size_t d = 0; d < n;) d += (size_t)sendfile(s, fd, &o, n - d);
    } else {
      for (size_t d = 0; d < n;) d += (size_t)send(s, p + d, n - d, 0);
    }
  }
  if (block) munmap(block, BLOCK);
  double c1 = cpu();
  clock_gettime(CLOCK_MONOTONIC, &w1);
  shutdown(s, SHUT_WR);
  pthread_join(t, 0);
  printf("mode %d sender cpu %.3f s wall %.3f s\n", mode, c1 - c0,
         (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9);
  return 0;
}
