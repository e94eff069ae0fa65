/* --help of every command, in runc's words where the commands overlap. */
#include "build.h"

#include "help.h"

#include <stdio.h>
#include <string.h>

struct help {
  const char *cmd, *usage, *text, *options;
};

static const struct help helps[] = {
    {"create", "[command options] <container-id>",
     "The create command creates an instance of a container for a bundle. The bundle is a\n"
     "directory with a specification file named \"config.json\" and a root filesystem.\n"
     "The container waits, created, for `seerun start`.",
     "   --bundle value, -b value  path to the root of the bundle directory, defaults to the\n"
     "                             current directory\n"
     "   --console-socket value    path to an AF_UNIX socket which will receive a file\n"
     "                             descriptor referencing the master end of the console's\n"
     "                             pseudoterminal\n"
     "   --pid-file value          specify the file to write the process id to\n"
     "   --no-pivot                do not use pivot root to jail process inside rootfs\n"
     "   --no-new-keyring          do not create a new session keyring for the container\n"
     "   --preserve-fds value      pass N additional file descriptors to the container (stdio +\n"
     "                             $LISTEN_FDS + N in total) (default: 0)\n"},
    {"run", "[command options] <container-id>",
     "The run command creates an instance of a container for a bundle and starts it. In the\n"
     "foreground it exits with the container process's status (128+N for a signal) and removes\n"
     "the container.",
     "   --bundle value, -b value  path to the root of the bundle directory\n"
     "   --console-socket value    path to an AF_UNIX socket for the pseudoterminal master\n"
     "   --detach, -d              detach from the container's process\n"
     "   --keep                    do not delete the container after it exits\n"
     "   --pid-file value          specify the file to write the process id to\n"
     "   --no-subreaper            accepted for compatibility\n"
     "   --no-pivot                do not use pivot root to jail process inside rootfs\n"
     "   --no-new-keyring          do not create a new session keyring for the container\n"
     "   --preserve-fds value      pass N additional file descriptors to the container\n"},
    {"start", "<container-id>",
     "The start command executes the user defined process in a created container, and returns\n"
     "once it has started (or failed to).",
     ""},
    {"state", "<container-id>", "The state command outputs current state information (JSON) for "
                                "the instance of a container.",
     ""},
    {"kill", "[command options] <container-id> [signal]",
     "The kill command sends the specified signal (default: SIGTERM) to the container's init\n"
     "process. Signals are names (KILL, SIGKILL) or numbers (9).",
     "   --all, -a  send the specified signal to all processes inside the container\n"},
    {"delete", "[command options] <container-id>",
     "The delete command deletes any resources held by the container, which must be stopped.",
     "   --force, -f  forcibly deletes the container if it is still running (uses SIGKILL); an\n"
     "                id that does not exist is not an error\n"},
    {"list", "[command options]", "The list command lists containers started by seerun with the "
                                  "given root.",
     "   --format value, -f value  select one of: table or json (default: \"table\")\n"
     "   --quiet, -q               display only container IDs\n"},
    {"exec", "[command options] <container-id> <command> [command options]  ||  --process "
             "<process.json> <container-id>",
     "The exec command executes a new process inside an existing container, in all its\n"
     "namespaces and its cgroup, under its seccomp filter, within the capabilities decided at\n"
     "its create. In the foreground it exits with the process's status; seerun's own errors exit\n"
     "with 255.",
     "   --console-socket value           path to an AF_UNIX socket for the pseudoterminal master\n"
     "   --cwd value                      current working directory in the container\n"
     "   --env value, -e value            set environment variables\n"
     "   --tty, -t                        allocate a pseudo-TTY\n"
     "   --user value, -u value           UID (format: <uid>[:<gid>])\n"
     "   --additional-gids value, -g value  additional gids\n"
     "   --process value, -p value        path to the process.json\n"
     "   --detach, -d                     detach from the container's process\n"
     "   --pid-file value                 specify the file to write the process id to\n"
     "   --process-label value            set the asm process label for the process\n"
     "   --apparmor value                 set the apparmor profile for the process\n"
     "   --no-new-privs                   set the no new privileges value for the process\n"
     "   --cap value, -c value            add a capability to the bounding set for the process\n"
     "   --preserve-fds value             pass N additional file descriptors to the container\n"
     "   --ignore-paused                  allow exec in a paused container\n"
     "   --cgroup value                   accepted for compatibility\n"},
    {"ps", "[command options] <container-id> [ps options]",
     "The ps command displays the processes running inside a container (ps -ef by default).",
     "   --format value, -f value  select one of: table or json (default: \"table\")\n"},
    {"events", "[command options] <container-id>",
     "The events command displays information about the container: resource statistics\n"
     "(one JSON object per line) every interval, and OOM notifications.",
     "   --interval value  set the stats collection interval (default: 5s)\n"
     "   --stats           display the container's stats then exit\n"},
    {"update", "[command options] <container-id>",
     "The update command changes the resource constraints of a running container, within the\n"
     "ceilings of the policy profile it was created under.",
     "   --resources value, -r value  path to the file containing the resources to update or\n"
     "                                '-' to read from the standard input (linux.resources JSON)\n"
     "   --blkio-weight value         specifies per cgroup weight, range is from 10 to 1000\n"
     "   --cpu-period value           CPU CFS period to be used for hardcapping (in usecs)\n"
     "   --cpu-quota value            CPU CFS hardcap limit (in usecs)\n"
     "   --cpu-share value            CPU shares (relative weight vs. other containers)\n"
     "   --cpu-rt-period value        CPU realtime period to be used for hardcapping (in usecs)\n"
     "   --cpu-rt-runtime value       CPU realtime hardcap limit (in usecs)\n"
     "   --cpuset-cpus value          CPU(s) to use\n"
     "   --cpuset-mems value          memory node(s) to use\n"
     "   --memory value               memory limit (in bytes, or with k, m, g, t)\n"
     "   --memory-reservation value   memory reservation or soft_limit (in bytes)\n"
     "   --memory-swap value          total memory usage (memory + swap); -1 to unlimit\n"
     "   --pids-limit value           maximum number of pids allowed in the container\n"
     "   --cpu-idle value             set cgroup SCHED_IDLE or not (0 or 1)\n"},
    {"pause", "<container-id>",
     "The pause command suspends all processes in the instance of the container (freezer).", ""},
    {"resume", "<container-id>",
     "The resume command resumes all processes that have been previously paused.", ""},
    {"spec", "[command options]",
     "The spec command creates the new specification file named \"config.json\" for the\n"
     "bundle: runc's default (an interactive sh in new namespaces, read-only root).",
     "   --bundle value, -b value  path to the root of the bundle directory\n"},
    {"features", "", "Show the enabled features: the OCI features document of this build.", ""},
    {"policy", "show | check --bundle DIR",
     "show prints the policy profile this engine entry is bound to (--profile, the binary name\n"
     "or --root), with every setting; check prints the decisions the policy would take for a\n"
     "bundle, without running anything (exit status 1 when it would refuse it).",
     "   --bundle value, -b value  the bundle to check (default: the current directory)\n"},
    {"gc", "[command options]",
     "Releases the user namespace ranges of deleted containers whose grace period has passed,\n"
     "so that other containers can use them.",
     "   --all  release every range whose container was deleted, grace period or not\n"},
    {"review", "[command options] [container-id...]",
     "The review command reads the audit log and prints, per run, a short summary (profile,\n"
     "duration, exit status, denied system calls, files changed, limits hit, hosts contacted)\n"
     "and flags what deserves a look: privileged-syscall, denied-egress, processes-left, crash,\n"
     "limit-hit, writes-outside-outputs, incomplete-record (docs/audit.md). A run that did\n"
     "none of it is flagged nothing.",
     "   --since value  only runs with events at or after TIME: RFC 3339, or relative (-1h,\n"
     "                  -30m, -2d, -45s)\n"
     "   --json         the same as one JSON document\n"},
    {"checkpoint", "[command options] <container-id>",
     "The checkpoint command saves the state of the container's processes with CRIU into the\n"
     "image directory, and (unless --leave-running) deletes the container.  --pre-dump,\n"
     "--auto-dedup, --lazy-pages and --empty-ns are refused: this kernel has no soft-dirty\n"
     "tracking, and every namespace is the container's own.  A container reaching the network\n"
     "through seerun's egress proxy cannot be checkpointed.",
     "   --image-path value           path for saving criu image files (default: checkpoint)\n"
     "   --work-path value            path for saving work files and logs (default: image path)\n"
     "   --leave-running              leave the process running after checkpointing\n"
     "   --tcp-established            allow open tcp connections\n"
     "   --ext-unix-sk                allow external unix sockets\n"
     "   --shell-job                  allow shell jobs\n"
     "   --file-locks                 handle file locks, for safety\n"
     "   --pre-dump                   (refused here) dump container's memory information only\n"
     "   --manage-cgroups-mode value  cgroups mode: soft (default), full, strict, ignore\n"
     "   --empty-ns value             (refused) create a namespace, but don't restore it\n"
     "   --auto-dedup                 (refused) enable auto deduplication of memory images\n"},
    {"restore", "[command options] <container-id>",
     "The restore command creates a container from the bundle's config under the policy, like\n"
     "create, and brings its processes back from a checkpoint; they resume only after seerun\n"
     "has checked them (user namespace maps, namespaces, mounts, a read-only root, ids,\n"
     "capabilities, no_new_privs, seccomp, cgroup).  Without --detach it waits for the\n"
     "container's process and exits with its status.",
     "   --image-path value           path to criu image files for restoring (default: checkpoint)\n"
     "   --work-path value            path for saving work files and logs (default: image path)\n"
     "   --bundle value, -b value     path to the root of the bundle directory\n"
     "   --detach, -d                 detach from the container's process\n"
     "   --pid-file value             specify the file to write the process id to\n"
     "   --console-socket value       (a container with a terminal is not restored)\n"
     "   --no-subreaper               accepted; seerun waits for its own child\n"
     "   --no-pivot                   accepted\n"
     "   --tcp-established            allow open tcp connections\n"
     "   --ext-unix-sk                allow external unix sockets\n"
     "   --shell-job                  allow shell jobs\n"
     "   --file-locks                 handle file locks, for safety\n"
     "   --manage-cgroups-mode value  soft (default) or ignore; full and strict are refused\n"
     "   --lazy-pages                 (refused) use userfaultfd to lazily restore memory pages\n"},
};

bool sr_help_print(const char *cmd)
{
  for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
    if (strcmp(helps[i].cmd, cmd) == 0) {
      printf("NAME:\n   seerun %s\n\nUSAGE:\n   seerun %s %s\n\nDESCRIPTION:\n%s\n", cmd, cmd,
             helps[i].usage, helps[i].text);
      if (helps[i].options[0])
        printf("\nOPTIONS:\n%s", helps[i].options);
      return true;
    }
  return false;
}
