// bench/perf/zerocopy.c: does MSG_ZEROCOPY make a sender cheaper on loopback? (issue 12.2)
// cc -O2 -o /tmp/zerocopy bench/perf/zerocopy.c -lpthread && /tmp/zerocopy [ROUNDS] [MiB]
// One TCP connection on 127.0.0.1; a receiver thread recv()s into a 256 KiB buffer; the sender
// sends the same 2 MiB buffer (as pxfer's sender sends a block) with send() or with
// send(MSG_ZEROCOPY) (SO_ZEROCOPY, completions read from the error queue before the buffer is
// reused). Prints wall time and the sender thread's and receiver thread's CPU (RUSAGE_THREAD),
// rounds interleaved. docs/performance.md section 13 has what it found.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double thread_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

struct receiver {
  int fd;
  uint64_t bytes;
  double cpu;
};

static void* receive(void* arg) {
  struct receiver* r = arg;
  static char buf[256 * 1024];
  double c0 = thread_cpu();
  for (;;) {
    ssize_t n = recv(r->fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    r->bytes += (uint64_t)n;
  }
  r->cpu = thread_cpu() - c0;
  return NULL;
}

// Reads zerocopy completions; returns how many sends they cover.
static uint32_t completions(int fd, int wait_ms) {
  uint32_t done = 0;
  for (;;) {
    struct pollfd p = {fd, 0, 0};
    if (wait_ms >= 0 && poll(&p, 1, wait_ms) <= 0) return done;
    char control[128];
    struct msghdr m = {0};
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return done;
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
      struct sock_extended_err* e = (struct sock_extended_err*)CMSG_DATA(c);
      if (e->ee_origin == SO_EE_ORIGIN_ZEROCOPY) done += e->ee_data - e->ee_info + 1;
    }
    wait_ms = 0;
  }
}

static void run(int zerocopy, uint64_t total) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  bind(l, (struct sockaddr*)&a, sizeof a);
  listen(l, 1);
  socklen_t len = sizeof a;
  getsockname(l, (struct sockaddr*)&a, &len);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int on = 1;
  if (zerocopy && setsockopt(s, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof on) != 0) {
    perror("SO_ZEROCOPY");
    exit(1);
  }
  connect(s, (struct sockaddr*)&a, sizeof a);
  struct receiver r = {accept(l, NULL, NULL), 0, 0};
  pthread_t t;
  pthread_create(&t, NULL, receive, &r);
  static char block[2 * 1024 * 1024];
  memset(block, 0x5a, sizeof block);
  double t0 = now(), c0 = thread_cpu();
  uint32_t sent_calls = 0, completed = 0;
  for (uint64_t done = 0; done < total;) {
    size_t off = 0;
    while (off < sizeof block) {
      ssize_t n = send(s, block + off, sizeof block - off, zerocopy ? MSG_ZEROCOPY : 0);
      if (n < 0 && errno == ENOBUFS) {  // optmem exhausted: wait for completions
        completed += completions(s, 10);
        continue;
      }
      if (n <= 0) {
        perror("send");
        exit(1);
      }
      off += (size_t)n;
      if (zerocopy) ++sent_calls;
    }
    // The buffer is reused for the next block: every send of this one must have completed.
    while (zerocopy && completed < sent_calls) completed += completions(s, 100);
    done += sizeof block;
  }
  double send_cpu = thread_cpu() - c0;
  shutdown(s, SHUT_WR);
  pthread_join(t, NULL);
  double wall = now() - t0;
  printf("%-9s %6.0f MB/s  wall %.2f s  sender CPU %.3f s  receiver CPU %.3f s\n", zerocopy ? "zerocopy" : "send",
         (double)r.bytes / wall / 1e6, wall, send_cpu, r.cpu);
  close(s);
  close(r.fd);
  close(l);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  uint64_t total = (uint64_t)(argc > 2 ? atoi(argv[2]) : 1024) << 20;
  for (int i = 0; i < rounds; ++i) {
    run(0, total);
    run(1, total);
  }
  return 0;
}
