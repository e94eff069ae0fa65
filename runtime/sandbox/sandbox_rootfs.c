/* The built-in root filesystem of a sandbox: a small tmpfs made for each run (a few dozen
 * syscalls, nothing cached, nothing shared between sandboxes), holding
 *
 * - the mount points (/usr, /proc, /dev, /tmp, /var/tmp, /run, /out, the --ro destinations);
 * - the host's top-level links into /usr (bin -> usr/bin, lib64 -> usr/lib64, ...), so that
 *   /bin/sh and the ELF interpreter resolve as on the host; where the host has a real
 *   directory instead of a link, it is bound read-only like /usr;
 * - a generated /etc: passwd, group, hosts, hostname, resolv.conf, nsswitch.conf and mtab.
 *   Nothing else of the host's /etc: no shadow, no SSH keys, no credentials.  The host's
 *   /etc/alternatives (the links /usr's commands go through) and its CA certificates
 *   (/etc/ssl/certs, /etc/pki/tls/certs, /etc/pki/ca-trust/extracted: public, and what pip,
 *   npm and curl need for HTTPS) are bound read-only;
 * - the mount point of HOME (/home/sandbox, a tmpfs of the sandbox user's).  The host's
 *   /usr/local (site configuration and tools) is hidden by the config unless --ro /usr/local.
 *
 * It is made detached (fsopen/fsmount) and populated through its descriptor, then attached in
 * the runtime's private mount namespace for the create; the container gets an idmapped clone
 * of it, and it goes away with the last process that uses it. */
#include "build.h"

#include "sandbox.h"

#include "cleanup.h"
#include "mountapi.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Top-level names that merged-/usr systems make links into /usr. */
static const char *const top_links[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};

void sr_sandbox_rootfs_sysdirs_free(struct sr_sandbox_sysdirs *sys)
{
  for (size_t i = 0; i < sys->n; i++)
    free(sys->paths[i]);
  sys->n = 0;
}

static int add_sysdir(struct sr_sandbox_sysdirs *sys, const char *path, sr_error_t *err)
{
  if (sys->n >= sizeof(sys->paths) / sizeof(sys->paths[0]))
    return sr_error_make(err, E2BIG, "sandbox: too many system directories");
  sys->paths[sys->n] = strdup(path);
  if (sys->paths[sys->n] == NULL)
    return sr_error_make(err, ENOMEM, "sandbox");
  sys->n++;
  return 0;
}

/* mkdir -p of a relative path below root (our own tmpfs, which nobody else can see yet). */
static int mkdir_p_at(int root, const char *path, bool last_is_file, sr_error_t *err)
{
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
    return sr_error_make(err, ENAMETOOLONG, "sandbox root filesystem: `%s`", path);
  _cleanup_close_ int dir = dup(root);
  if (dir < 0)
    return sr_error_sys(err, "dup");
  char *save = NULL;
  char *comp = strtok_r(buf, "/", &save);
  while (comp) {
    char *next = strtok_r(NULL, "/", &save);
    if (next == NULL && last_is_file) {
      int fd = openat(dir, comp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0)
        return sr_error_sys(err, "sandbox root filesystem: create `%s`", path);
      close(fd);
      return 0;
    }
    if (mkdirat(dir, comp, 0755) < 0 && errno != EEXIST)
      return sr_error_sys(err, "sandbox root filesystem: mkdir `%s`", path);
    int sub = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
      return sr_error_sys(err, "sandbox root filesystem: `%s`", path);
    close(dir);
    dir = sub;
    comp = next;
  }
  return 0;
}

static int write_file(int root, const char *name, const char *text, sr_error_t *err)
{
  _cleanup_close_ int fd =
      openat(root, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || sr_fileio_write_all(fd, text, strlen(text)) < 0)
    return sr_error_sys(err, "sandbox root filesystem: write `/%s`", name);
  return 0;
}

/* Only the resolver lines of the host's resolv.conf, for a sandbox on the host's network. */
static int write_resolv_conf(int root, bool network, sr_error_t *err)
{
  char out[4096] = "";
  if (network) {
    _cleanup_free_ char *buf = NULL;
    size_t len;
    sr_error_t e = NULL;
    if (sr_fileio_read_at(AT_FDCWD, "/etc/resolv.conf", 64 * 1024, &buf, &len, &e) < 0)
      sr_error_free(&e);
    size_t used = 0;
    char *save = NULL;
    for (char *line = buf ? strtok_r(buf, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save)) {
      if (strncmp(line, "nameserver", 10) != 0 && strncmp(line, "search", 6) != 0 &&
          strncmp(line, "options", 7) != 0)
        continue;
      int w = snprintf(out + used, sizeof(out) - used, "%s\n", line);
      if (w < 0 || (size_t)w >= sizeof(out) - used)
        break;
      used += (size_t)w;
    }
  }
  return write_file(root, "etc/resolv.conf", out, err);
}

static int populate_etc(int root, const struct sr_sandbox_opts *o, sr_error_t *err)
{
  char passwd[512], group[256], hosts[256];
  snprintf(passwd, sizeof(passwd),
           "root:x:0:0:root:/root:/usr/sbin/nologin\n"
           "sandbox:x:%d:%d:sandbox:" SR_SANDBOX_HOME ":/bin/sh\n"
           "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
           SR_SANDBOX_UID, SR_SANDBOX_UID);
  snprintf(group, sizeof(group), "root:x:0:\nsandbox:x:%d:\nnogroup:x:65534:\n", SR_SANDBOX_UID);
  snprintf(hosts, sizeof(hosts),
           "127.0.0.1\tlocalhost %s\n::1\tlocalhost ip6-localhost ip6-loopback\n",
           SR_SANDBOX_HOSTNAME);
  if (write_file(root, "etc/passwd", passwd, err) < 0 ||
      write_file(root, "etc/group", group, err) < 0 ||
      write_file(root, "etc/hosts", hosts, err) < 0 ||
      write_file(root, "etc/hostname", SR_SANDBOX_HOSTNAME "\n", err) < 0 ||
      write_file(root, "etc/nsswitch.conf",
                 "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
                 "networks: files\nprotocols: files\nservices: files\n",
                 err) < 0 ||
      write_resolv_conf(root, o->network, err) < 0)
    return -1;
  if (symlinkat("../proc/self/mounts", root, "etc/mtab") < 0)
    return sr_error_sys(err, "sandbox root filesystem: /etc/mtab");
  return 0;
}

/* The host's /bin, /lib64 ...: the same link where it is one, else a read-only bind. */
static int mirror_top_level(int root, struct sr_sandbox_sysdirs *sys, sr_error_t *err)
{
  for (size_t i = 0; i < sizeof(top_links) / sizeof(top_links[0]); i++) {
    const char *name = top_links[i];
    char host[32];
    snprintf(host, sizeof(host), "/%s", name);
    struct stat st;
    if (lstat(host, &st) < 0)
      continue;
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      ssize_t n = readlink(host, target, sizeof(target) - 1);
      if (n <= 0)
        continue;
      target[n] = '\0';
      if (symlinkat(target, root, name) < 0)
        return sr_error_sys(err, "sandbox root filesystem: link `/%s`", name);
    } else if (S_ISDIR(st.st_mode)) {
      if (mkdirat(root, name, 0755) < 0)
        return sr_error_sys(err, "sandbox root filesystem: mkdir `/%s`", name);
      if (add_sysdir(sys, host, err) < 0)
        return -1;
    }
  }
  return 0;
}

/* A directory of the host's /etc is bound only if it is what it should be: a root-owned
 * directory no one else can write (itself a directory, not a link), so nothing an unprivileged
 * host user put there shows up in sandboxes. */
static bool etc_dir_usable(const char *path)
{
  struct stat st;
  return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
         !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* The host's /etc directories a sandbox sees (read-only): the links of /usr's commands, and
 * the CA certificates (Debian's, then Fedora's and RHEL's). */
static const char *const etc_dirs[] = {"/etc/alternatives", "/etc/ssl/certs", "/etc/pki/tls/certs",
                                       "/etc/pki/ca-trust/extracted"};

/* Whether path is dir or below it. */
static bool under(const char *path, const char *dir)
{
  size_t l = strlen(dir);
  return strncmp(path, dir, l) == 0 && (path[l] == '/' || path[l] == '\0');
}

static const char *const mounted_dirs[] = {"/usr", "/proc", "/dev",     "/tmp",
                                           "/run", "/out",  "/var/tmp", SR_SANDBOX_HOME};

static bool below_a_mount(const struct sr_sandbox_opts *o, const struct sr_sandbox_sysdirs *sys,
                          const char *path)
{
  for (size_t i = 0; i < sizeof(mounted_dirs) / sizeof(mounted_dirs[0]); i++)
    if (under(path, mounted_dirs[i]))
      return true;
  for (size_t i = 0; i < sys->n; i++)
    if (under(path, sys->paths[i]))
      return true;
  for (size_t i = 0; i < o->n_ro; i++)
    if (under(path, o->ro[i].dest))
      return true;
  return o->ws_dest && under(path, o->ws_dest);
}

int sr_sandbox_rootfs_build(const struct sr_sandbox_opts *o, const char *target,
                            struct sr_sandbox_sysdirs *sys, sr_error_t *err)
{
  _cleanup_close_ int fsfd = sr_mountapi_fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return sr_error_sys(err, "sandbox root filesystem: fsopen tmpfs");
  char inodes[32];
  snprintf(inodes, sizeof(inodes), "%zu", 256 + 8 * o->n_ro + (o->ws_dest ? 8 : 0));
  if (sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "size", "1m", 0) < 0 ||
      sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
      sr_mountapi_fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
      sr_mountapi_fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_error_sys(err, "sandbox root filesystem: create the tmpfs");
  _cleanup_close_ int root =
      sr_mountapi_fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (root < 0)
    return sr_error_sys(err, "sandbox root filesystem: fsmount");

  static const char *const dirs[] = {"etc", "usr",  "tmp", "var", "var/tmp",
                                     "run", "proc", "dev", "out"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
    if (mkdirat(root, dirs[i], 0755) < 0)
      return sr_error_sys(err, "sandbox root filesystem: mkdir `/%s`", dirs[i]);
  if (add_sysdir(sys, "/usr", err) < 0 || mirror_top_level(root, sys, err) < 0)
    return -1;
  for (size_t i = 0; i < sizeof(etc_dirs) / sizeof(etc_dirs[0]); i++)
    if (etc_dir_usable(etc_dirs[i]) && (mkdir_p_at(root, etc_dirs[i] + 1, false, err) < 0 ||
                                        add_sysdir(sys, etc_dirs[i], err) < 0))
      return -1;
  if (mkdir_p_at(root, SR_SANDBOX_HOME + 1, false, err) < 0)
    return -1;
  if (populate_etc(root, o, err) < 0)
    return -1;
  for (size_t i = 0; i < o->n_ro; i++)
    if (mkdir_p_at(root, o->ro[i].dest + 1, !o->ro[i].is_dir, err) < 0)
      return sr_error_wrap(err, "--ro `%s`", o->ro[i].dest);
  if (o->ws_dest && mkdir_p_at(root, o->ws_dest + 1, false, err) < 0)
    return sr_error_wrap(err, "--workspace `%s`", o->ws_dest);
  /* The working directory exists unless it lies in what is mounted over the root (there, it
   * is the mount's: the chdir then says so). */
  if (o->workdir && strcmp(o->workdir, "/") != 0 && !below_a_mount(o, sys, o->workdir) &&
      mkdir_p_at(root, o->workdir + 1, false, err) < 0)
    return sr_error_wrap(err, "--workdir `%s`", o->workdir);
  if (sr_mountapi_move_mount(root, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return sr_error_sys(err, "sandbox root filesystem: attach it at `%s`", target);
  return 0;
}
