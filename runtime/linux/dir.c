#include "build.h"

#include "dir.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int sr_dir_mkdir_p(const char *path, mode_t mode, sr_error_t *err)
{
  char buf[PATH_MAX];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof(buf))
    return sr_error_make(err, ENAMETOOLONG, "mkdir `%s`", path);
  memcpy(buf, path, len + 1);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      if (mkdir(buf, mode) < 0 && errno != EEXIST)
        return sr_error_sys(err, "mkdir `%s`", buf);
      *p = saved;
      if (saved == '\0')
        break;
    }
  }
  struct stat st;
  if (stat(path, &st) < 0)
    return sr_error_sys(err, "stat `%s`", path);
  if (!S_ISDIR(st.st_mode))
    return sr_error_make(err, ENOTDIR, "`%s`", path);
  return 0;
}

DIR *sr_dir_open_fd(int dirfd)
{
  /* A new open file description: its offset is its own, so a stream never resumes where
   * another one stopped. */
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    int saved = errno;
    close(fd);
    errno = saved;
  }
  return d;
}
