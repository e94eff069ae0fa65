/* The config.json `seerun spec` writes: runc's default (a busybox-style `sh` in a new set of
 * namespaces, read-only root, the usual mounts, masked and read-only /proc paths). */
#ifndef SEERUN_SPEC_DEFAULT_H
#define SEERUN_SPEC_DEFAULT_H

extern const char sr_default_spec[];

#endif
