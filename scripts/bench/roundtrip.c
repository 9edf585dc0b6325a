/*
 * What this machine charges for crossing between processes (scripts/bench/shared.js prints it): a system call
 * (getppid) and a round trip of one byte over a Unix socket pair between two processes, the kind a gateway and a
 * PostgreSQL backend make for each statement batch, in µs of wall time and of both processes' CPU. An in-process
 * engine (SQLite) makes none, so the ratio of PostgreSQL's rate to SQLite's moves with these costs from machine to
 * machine. Built by shared.js with the system's `cc` when there is one; `cc -O2 -o rt roundtrip.c && ./rt` alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double us(struct timespec a, struct timespec z) { return (z.tv_sec - a.tv_sec) * 1e6 + (z.tv_nsec - a.tv_nsec) / 1e3; }
static double cpu_us(struct rusage r) { return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 50000;
  int sv[2];
  char b = 'x';
  struct timespec a, z;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < n; i++) getppid();
  clock_gettime(CLOCK_MONOTONIC, &z);
  double syscall = us(a, z) / n;
  struct rusage before, self, children;
  getrusage(RUSAGE_SELF, &before);
  pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < n; i++)
      if (read(sv[1], &b, 1) != 1 || write(sv[1], &b, 1) != 1) _exit(1);
    _exit(0);
  }
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < n; i++)
    if (write(sv[0], &b, 1) != 1 || read(sv[0], &b, 1) != 1) return 1;
  clock_gettime(CLOCK_MONOTONIC, &z);
  waitpid(child, NULL, 0);
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  printf("{\"syscall_us\":%.2f,\"roundtrip_us\":%.1f,\"roundtrip_cpu_us\":%.1f}\n", syscall, us(a, z) / n, (cpu_us(self) - cpu_us(before) + cpu_us(children)) / n);
  return 0;
}
