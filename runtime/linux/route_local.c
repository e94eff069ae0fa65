#include "build.h"

#include "route_local.h"

#include "cleanup.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int sr_route_local(int family, const unsigned char *addr, bool *local, sr_error_t *err)
{
  size_t alen = family == AF_INET ? 4 : 16;
  _cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return sr_error_sys(err, "route lookup: socket(NETLINK_ROUTE)");
  union {
    struct nlmsghdr nh;
    char bytes[NLMSG_SPACE(sizeof(struct rtmsg)) + RTA_SPACE(16)];
  } req;
  memset(&req, 0, sizeof(req));
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  req.nh.nlmsg_type = RTM_GETROUTE;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.nh.nlmsg_seq = 1;
  struct rtmsg *rt = NLMSG_DATA(&req.nh);
  rt->rtm_family = (unsigned char)family;
  rt->rtm_dst_len = (unsigned char)(alen * 8);
  struct rtattr *dst = (struct rtattr *)(req.bytes + NLMSG_ALIGN(req.nh.nlmsg_len));
  dst->rta_type = RTA_DST;
  dst->rta_len = (unsigned short)RTA_LENGTH(alen);
  memcpy(RTA_DATA(dst), addr, alen);
  req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(dst->rta_len);
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  ssize_t n;
  while ((n = sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
                     sizeof(kernel))) < 0 && errno == EINTR)
    ;
  if (n < 0)
    return sr_error_sys(err, "route lookup: send RTM_GETROUTE");
  union {
    struct nlmsghdr nh;
    char bytes[8192];
  } reply;
  for (;;) {
    struct sockaddr_nl from;
    socklen_t fl = sizeof(from);
    n = recvfrom(fd, &reply, sizeof(reply), 0, (struct sockaddr *)&from, &fl);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return sr_error_sys(err, "route lookup: receive RTM_GETROUTE's answer");
    if (from.nl_pid != 0)
      continue; /* only the kernel answers */
    size_t left = (size_t)n;
    for (struct nlmsghdr *h = &reply.nh; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_seq != 1)
        continue;
      if (h->nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *e = NLMSG_DATA(h);
        if (e->error == 0)
          continue;
        if (e->error == -ENETUNREACH || e->error == -EHOSTUNREACH || e->error == -ENETDOWN) {
          *local = false; /* no route: nothing here takes it either */
          return 0;
        }
        return sr_error_make(err, -e->error, "route lookup: RTM_GETROUTE");
      }
      if (h->nlmsg_type == RTM_NEWROUTE) {
        const struct rtmsg *r = NLMSG_DATA(h);
        *local = r->rtm_type == RTN_LOCAL || r->rtm_type == RTN_BROADCAST ||
                 r->rtm_type == RTN_ANYCAST || r->rtm_type == RTN_MULTICAST;
        return 0;
      }
    }
  }
}
