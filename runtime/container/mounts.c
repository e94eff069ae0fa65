#include "build.h"

#include "mounts.h"

#include "mount_cgroup.h"
#include "namespaces.h"

#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

static int apply_one(const struct sr_config *c, const struct sr_mount *m, int tree, bool is_dir,
                     const struct sr_mount_layers *layers, int root_fd,
                     const struct sr_cgroup *cg, sr_error_t *err)
{
  bool bind = m->opts.bind || m->opts.rbind;
  /* A remount (of a cgroup destination too) is the Linux layer's, like every other type. */
  if (!bind && !(m->opts.flags & MS_REMOUNT) &&
      (strcmp(m->type, "cgroup") == 0 || strcmp(m->type, "cgroup2") == 0))
    return sr_mount_cgroup(m, cg, c->linux_.namespaces[SR_NS_CGROUP].present, root_fd, err);
  return sr_mount_one(m, tree, is_dir, layers, root_fd, c->linux_.namespaces[SR_NS_USER].present,
                      c->linux_.mount_label, err);
}

int sr_mounts_apply(const struct sr_config *c, struct sr_bind_plan *plan, int root_fd,
                    const struct sr_cgroup *cg, sr_error_t *err)
{
  for (size_t i = 0; i < c->n_mounts; i++) {
    int tree = i < plan->n ? plan->tree_fd[i] : -1;
    bool is_dir = i < plan->n ? plan->is_dir[i] : true;
    struct sr_mount_layers layers = {i < plan->n && plan->path_fd ? plan->path_fd[i] : NULL,
                                     i < plan->n && plan->n_paths ? plan->n_paths[i] : 0,
                                     plan->bundle ? plan->bundle : "."};
    if (apply_one(c, &c->mounts[i], tree, is_dir, &layers, root_fd, cg, err) < 0)
      return sr_error_wrap(err, "%s", c->mounts[i].field);
    if (tree >= 0) {
      close(tree);
      plan->tree_fd[i] = -1;
    }
  }
  return 0;
}
