#include "build.h"

#include "loopback.h"

#include "cleanup.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int sr_loopback_up(sr_error_t *err)
{
  /* Interface ioctls act on the network namespace of the socket: ours, the container's.  An
   * AF_UNIX socket serves as well as any and needs no IPv4 in the kernel. */
  _cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sr_error_sys(err, "network namespace: bring lo up: socket");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
    return sr_error_sys(err, "network namespace: bring lo up: SIOCGIFFLAGS");
  if (ifr.ifr_flags & IFF_UP)
    return 0;
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
    return sr_error_sys(err, "network namespace: bring lo up: SIOCSIFFLAGS");
  return 0;
}
