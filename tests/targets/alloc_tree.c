/* A small process tree with a known memory footprint, for the meter's tests:
 *   alloc_tree MIB [EXIT]
 * forks a child that forks a grandchild; the grandchild allocates and touches MIB mebibytes,
 * holds them for half a second and exits; the leader prints "alloc_tree done" on stdout and
 * "alloc_tree stderr" on stderr, then exits with EXIT (default 0). */
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

int main(int argc, char** argv) {
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
