/* The config.json `seerun spec` writes: runc's default (a busybox-style `sh` in a new set of
 * namespaces, read-only root, the usual mounts, masked and read-only /proc paths). */
#ifndef SEERUN_SPEC_DEFAULT_H
#define SEERUN_SPEC_DEFAULT_H

extern const char sr_spec_default[];

/* `spec --rootless`: runc's rootless template (the default, turned as runc's
 * specconv.ToRootless turns it) for the caller's uid and gid; malloc'd, NULL on failure. */
char *sr_spec_default_rootless(unsigned uid, unsigned gid);

#endif
