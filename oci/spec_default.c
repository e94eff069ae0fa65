#include "build.h"

#include "spec_default.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char sr_spec_default[] =
    "{\n"
    "\t\"ociVersion\": \"1.3.0\",\n"
    "\t\"process\": {\n"
    "\t\t\"terminal\": true,\n"
    "\t\t\"user\": {\n"
    "\t\t\t\"uid\": 0,\n"
    "\t\t\t\"gid\": 0\n"
    "\t\t},\n"
    "\t\t\"args\": [\n"
    "\t\t\t\"sh\"\n"
    "\t\t],\n"
    "\t\t\"env\": [\n"
    "\t\t\t\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
    "\t\t\t\"TERM=xterm\"\n"
    "\t\t],\n"
    "\t\t\"cwd\": \"/\",\n"
    "\t\t\"capabilities\": {\n"
    "\t\t\t\"bounding\": [\n"
    "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
    "\t\t\t\t\"CAP_KILL\",\n"
    "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
    "\t\t\t],\n"
    "\t\t\t\"effective\": [\n"
    "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
    "\t\t\t\t\"CAP_KILL\",\n"
    "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
    "\t\t\t],\n"
    "\t\t\t\"permitted\": [\n"
    "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
    "\t\t\t\t\"CAP_KILL\",\n"
    "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
    "\t\t\t],\n"
    "\t\t\t\"ambient\": [\n"
    "\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
    "\t\t\t\t\"CAP_KILL\",\n"
    "\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
    "\t\t\t]\n"
    "\t\t},\n"
    "\t\t\"rlimits\": [\n"
    "\t\t\t{\n"
    "\t\t\t\t\"type\": \"RLIMIT_NOFILE\",\n"
    "\t\t\t\t\"hard\": 1024,\n"
    "\t\t\t\t\"soft\": 1024\n"
    "\t\t\t}\n"
    "\t\t],\n"
    "\t\t\"noNewPrivileges\": true\n"
    "\t},\n"
    "\t\"root\": {\n"
    "\t\t\"path\": \"rootfs\",\n"
    "\t\t\"readonly\": true\n"
    "\t},\n"
    "\t\"hostname\": \"seerun\",\n"
    "\t\"mounts\": [\n"
    "\t\t{\n"
    "\t\t\t\"destination\": \"/proc\",\n"
    "\t\t\t\"type\": \"proc\",\n"
    "\t\t\t\"source\": \"proc\"\n"
    "\t\t},\n"
    "\t\t{\n"
    "\t\t\t\"destination\": \"/dev\",\n"
    "\t\t\t\"type\": \"tmpfs\",\n"
    "\t\t\t\"source\": \"tmpfs\",\n"
    "\t\t\t\"options\": [\"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\"]\n"
    "\t\t},\n"
    "\t\t{\n"
    "\t\t\t\"destination\": \"/dev/pts\",\n"
    "\t\t\t\"type\": \"devpts\",\n"
    "\t\t\t\"source\": \"devpts\",\n"
    "\t\t\t\"options\": [\"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", "
    "\"mode=0620\", \"gid=5\"]\n"
    "\t\t},\n"
    "\t\t{\n"
    "\t\t\t\"destination\": \"/dev/shm\",\n"
    "\t\t\t\"type\": \"tmpfs\",\n"
    "\t\t\t\"source\": \"shm\",\n"
    "\t\t\t\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\"]\n"
    "\t\t},\n"
    "\t\t{\n"
    "\t\t\t\"destination\": \"/dev/mqueue\",\n"
    "\t\t\t\"type\": \"mqueue\",\n"
    "\t\t\t\"source\": \"mqueue\",\n"
    "\t\t\t\"options\": [\"nosuid\", \"noexec\", \"nodev\"]\n"
    "\t\t},\n"
    "\t\t{\n"
    "\t\t\t\"destination\": \"/sys\",\n"
    "\t\t\t\"type\": \"sysfs\",\n"
    "\t\t\t\"source\": \"sysfs\",\n"
    "\t\t\t\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"ro\"]\n"
    "\t\t},\n"
    "\t\t{\n"
    "\t\t\t\"destination\": \"/sys/fs/cgroup\",\n"
    "\t\t\t\"type\": \"cgroup\",\n"
    "\t\t\t\"source\": \"cgroup\",\n"
    "\t\t\t\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"relatime\", \"ro\"]\n"
    "\t\t}\n"
    "\t],\n"
    "\t\"linux\": {\n"
    "\t\t\"resources\": {\n"
    "\t\t\t\"devices\": [\n"
    "\t\t\t\t{\n"
    "\t\t\t\t\t\"allow\": false,\n"
    "\t\t\t\t\t\"access\": \"rwm\"\n"
    "\t\t\t\t}\n"
    "\t\t\t]\n"
    "\t\t},\n"
    "\t\t\"namespaces\": [\n"
    "\t\t\t{\"type\": \"pid\"},\n"
    "\t\t\t{\"type\": \"network\"},\n"
    "\t\t\t{\"type\": \"ipc\"},\n"
    "\t\t\t{\"type\": \"uts\"},\n"
    "\t\t\t{\"type\": \"mount\"},\n"
    "\t\t\t{\"type\": \"cgroup\"}\n"
    "\t\t],\n"
    "\t\t\"maskedPaths\": [\n"
    "\t\t\t\"/proc/acpi\",\n"
    "\t\t\t\"/proc/asound\",\n"
    "\t\t\t\"/proc/kcore\",\n"
    "\t\t\t\"/proc/keys\",\n"
    "\t\t\t\"/proc/latency_stats\",\n"
    "\t\t\t\"/proc/timer_list\",\n"
    "\t\t\t\"/proc/timer_stats\",\n"
    "\t\t\t\"/proc/sched_debug\",\n"
    "\t\t\t\"/sys/firmware\",\n"
    "\t\t\t\"/proc/scsi\"\n"
    "\t\t],\n"
    "\t\t\"readonlyPaths\": [\n"
    "\t\t\t\"/proc/bus\",\n"
    "\t\t\t\"/proc/fs\",\n"
    "\t\t\t\"/proc/irq\",\n"
    "\t\t\t\"/proc/sys\",\n"
    "\t\t\t\"/proc/sysrq-trigger\"\n"
    "\t\t]\n"
    "\t}\n"
    "}\n";

/* Replaces the one occurrence of from in *s; false when it is not there (the template and
 * this code disagree: a build-time mistake the unit tests catch). */
static bool replace_once(char **s, const char *from, const char *to)
{
  char *at = strstr(*s, from);
  if (at == NULL)
    return false;
  size_t head = (size_t)(at - *s), flen = strlen(from), tlen = strlen(to);
  size_t tail = strlen(at + flen);
  char *n = malloc(head + tlen + tail + 1);
  if (n == NULL)
    return false;
  memcpy(n, *s, head);
  memcpy(n + head, to, tlen);
  memcpy(n + head + tlen, at + flen, tail + 1);
  free(*s);
  *s = n;
  return true;
}

char *sr_spec_default_rootless(unsigned uid, unsigned gid)
{
  char maps[256];
  snprintf(maps, sizeof(maps),
           "\t\t\t{\"type\": \"cgroup\"},\n"
           "\t\t\t{\"type\": \"user\"}\n"
           "\t\t],\n"
           "\t\t\"uidMappings\": [\n"
           "\t\t\t{\"containerID\": 0, \"hostID\": %u, \"size\": 1}\n"
           "\t\t],\n"
           "\t\t\"gidMappings\": [\n"
           "\t\t\t{\"containerID\": 0, \"hostID\": %u, \"size\": 1}\n"
           "\t\t],\n",
           uid, gid);
  char *s = strdup(sr_spec_default);
  if (s == NULL)
    return NULL;
  /* runc's specconv.ToRootless: no network namespace, a user namespace mapping only the
   * caller, no uid=/gid= mount options, /sys bound rather than mounted, no resources. */
  bool ok =
      replace_once(&s, "\t\t\t{\"type\": \"network\"},\n", "") &&
      replace_once(&s, "\t\t\t{\"type\": \"cgroup\"}\n\t\t],\n", maps) &&
      replace_once(&s, ", \"gid=5\"]", "]") &&
      replace_once(&s,
                   "\t\t\t\"type\": \"sysfs\",\n"
                   "\t\t\t\"source\": \"sysfs\",\n"
                   "\t\t\t\"options\": [\"nosuid\", \"noexec\", \"nodev\", \"ro\"]\n",
                   "\t\t\t\"type\": \"none\",\n"
                   "\t\t\t\"source\": \"/sys\",\n"
                   "\t\t\t\"options\": [\"rbind\", \"nosuid\", \"noexec\", \"nodev\", \"ro\"]\n") &&
      replace_once(&s,
                   "\t\t\"resources\": {\n"
                   "\t\t\t\"devices\": [\n"
                   "\t\t\t\t{\n"
                   "\t\t\t\t\t\"allow\": false,\n"
                   "\t\t\t\t\t\"access\": \"rwm\"\n"
                   "\t\t\t\t}\n"
                   "\t\t\t]\n"
                   "\t\t},\n",
                   "");
  if (!ok) {
    free(s);
    return NULL;
  }
  return s;
}
