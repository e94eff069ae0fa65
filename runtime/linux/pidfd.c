#include "build.h"

#include "pidfd.h"

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

int sr_pidfd_open(pid_t pid)
{
  return (int)syscall(SYS_pidfd_open, pid, 0);
}

int sr_pidfd_send_signal(int pidfd, int sig)
{
  return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}
