/* A small process tree with a known memory footprint, for the meter's tests:
 *   alloc_tree MIB [EXIT]
 * forks a child that forks a grandchild; the grandchild allocates and touches MIB mebibytes,
 * holds them for half a second and exits; the leader prints "alloc_tree done" on stdout and
 * "alloc_tree stderr" on stderr, then exits with EXIT (default 0).
 *   alloc_tree shared MIB N
 * allocates and touches MIB mebibytes, then forks N children that hold the same pages without
 * writing them (shared after fork, as a DataLoader's workers) for 0.6 s; all exit 0.
 *   alloc_tree vfork MIB
 * allocates and touches MIB mebibytes, then vforks a child that waits 0.6 s in the parent's own
 * address space before it exits (as a vfork child between vfork and exec); exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void hold(long mib) {
  size_t bytes = (size_t)mib << 20;
  char* p = malloc(bytes);
  if (!p) _exit(90);
  memset(p, 1, bytes); /* touch every page so it counts as resident */
  struct timespec half = {0, 500 * 1000 * 1000};
  nanosleep(&half, NULL);
  volatile char sink = p[bytes - 1];
  (void)sink;
  free(p);
}

static int shared(long mib, int children) {
  size_t bytes = (size_t)mib << 20;
  char* p = malloc(bytes);
  if (!p) return 90;
  memset(p, 1, bytes);
  for (int i = 0; i < children; ++i) {
    if (fork() == 0) {
      struct timespec wait = {0, 600 * 1000 * 1000};
      nanosleep(&wait, NULL);
      volatile char sink = p[bytes / 2]; /* read, never written: the pages stay shared */
      (void)sink;
      _exit(0);
    }
  }
  for (int i = 0; i < children; ++i)
    wait(NULL);
  free(p);
  return 0;
}

static int vforked(long mib) {
  size_t bytes = (size_t)mib << 20;
  char* p = malloc(bytes);
  if (!p) return 90;
  memset(p, 1, bytes);
  pid_t child = vfork();
  if (child == 0) {
    /* Only system calls here: the parent's memory and stack are this child's until it exits. */
    struct timespec wait = {0, 600 * 1000 * 1000};
    nanosleep(&wait, NULL);
    _exit(0);
  }
  if (child < 0) return 91;
  waitpid(child, NULL, 0);
  free(p);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "vfork") == 0) return vforked(atol(argv[2]));
  if (argc > 3 && strcmp(argv[1], "shared") == 0) return shared(atol(argv[2]), atoi(argv[3]));
  long mib = argc > 1 ? atol(argv[1]) : 64;
  int code = argc > 2 ? atoi(argv[2]) : 0;
  pid_t child = fork();
  if (child == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      hold(mib);
      _exit(0);
    }
    int status = 0;
    waitpid(grandchild, &status, 0);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("alloc_tree done\n");
  fprintf(stderr, "alloc_tree stderr\n");
  return code;
}
