"""Spawning and reaping: every process the harness starts, and every orphan it inherits.

The harness is a child subreaper (PR_SET_CHILD_SUBREAPER): a container's init, left behind
by `create` when the runtime exits, is reparented to it, so the harness reaps it and its CPU
time lands in the harness's RUSAGE_CHILDREN like everything else it spawned.  All reaping goes
through one place (Reaper.reap_ready, waitpid(-1)), woken by SIGCHLD through a wakeup pipe, so
a zombie never lingers while the harness waits for something else (runc, for one, waits for a
killed init to be gone before it deletes).
"""

import ctypes
import os
import resource
import select
import signal
import time

PR_SET_CHILD_SUBREAPER = 36

# Signals that Python ignores and a child must not inherit ignored.  (Handlers are reset by
# exec anyway; a SIGINT ignored by whoever started the harness stays ignored, as it should.)
_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def cpu_children():
    """User+system seconds of every process reaped so far (and their reaped descendants)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class Timeout(Exception):
    pass


class Job:
    """One spawned process."""

    def __init__(self, argv, pid, t0, out, err):
        self.argv = argv
        self.pid = pid
        self.t0 = t0
        self.t1 = None
        self.out_path = out
        self.err_path = err
        self.status = None
        self.rusage = None

    @property
    def done(self):
        return self.status is not None

    @property
    def wall(self):
        return self.t1 - self.t0

    @property
    def ok(self):
        return self.status == 0

    def exit_text(self):
        if self.status is None:
            return "still running"
        if os.WIFEXITED(self.status):
            return f"exit {os.WEXITSTATUS(self.status)}"
        if os.WIFSIGNALED(self.status):
            return f"killed by signal {os.WTERMSIG(self.status)}"
        return f"status {self.status}"

    def _read(self, path, limit):
        if not path:
            return ""
        try:
            with open(path, "rb") as f:
                return f.read(limit).decode(errors="replace")
        except OSError:
            return ""

    def stdout(self, limit=1 << 20):
        return self._read(self.out_path, limit)

    def stderr(self, limit=4000):
        return self._read(self.err_path, limit).strip()

    def describe(self):
        """For a failure report: the command (short), how it ended and its stderr."""
        cmd = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(self.argv))
        err = self.stderr()
        return f"`{cmd}`: {self.exit_text()}" + (f": {err}" if err else "")


class Reaper:
    def __init__(self, outdir, env):
        self.outdir = outdir
        self.env = env
        self.jobs = {}      # pid -> Job, spawned and not yet reaped
        self.exited = {}    # pid -> (status, rusage, time): orphans (not spawned here) reaped
        self._seq = 0
        os.makedirs(outdir, exist_ok=True)
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        self._devnull = "/dev/null"

    # -- spawning ---------------------------------------------------------------------------
    def spawn(self, argv, slot="main", capture_out=False, open_fds=()):
        """Starts argv (argv[0] an absolute path) with stdin /dev/null, stderr (and stdout if
        capture_out) to files named after slot, else stdout to /dev/null; open_fds: (fd, path)
        pairs, each file opened read-only onto that descriptor."""
        out = os.path.join(self.outdir, slot + ".out") if capture_out else None
        err = os.path.join(self.outdir, slot + ".err")
        wr = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        actions = [(os.POSIX_SPAWN_OPEN, 0, self._devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, out or self._devnull, wr if out else os.O_WRONLY,
                    0o644),
                   (os.POSIX_SPAWN_OPEN, 2, err, wr, 0o644)]
        actions += [(os.POSIX_SPAWN_OPEN, fd, path, os.O_RDONLY, 0) for fd, path in open_fds]
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, self.env, file_actions=actions,
                             setsigdef=_DEFAULT_SIGNALS, setsigmask=())
        job = Job(argv, pid, t0, out, err)
        self.jobs[pid] = job
        return job

    def run(self, argv, timeout=60, **kw):
        """Spawns argv and waits for it; on timeout kills it.  Returns the Job."""
        job = self.spawn(argv, **kw)
        try:
            self.wait_jobs([job], timeout)
        except Timeout:
            self.kill_job(job)
            raise
        return job

    def kill_job(self, job):
        if not job.done:
            try:
                os.kill(job.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.wait_jobs([job], 10)
            except Timeout:
                pass

    # -- reaping ----------------------------------------------------------------------------
    def reap_ready(self):
        """Reaps every child that has exited; returns how many."""
        n = 0
        while True:
            try:
                pid, status, ru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return n
            if pid == 0:
                return n
            now = time.perf_counter()
            n += 1
            job = self.jobs.pop(pid, None)
            if job is not None:
                job.t1, job.status, job.rusage = now, status, ru
            else:
                self.exited[pid] = (status, ru, now)

    def _sleep_until_sigchld(self, remaining):
        select.select([self._wake_r], [], [], max(0.0, remaining))
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass

    def _wait(self, is_done, timeout, what):
        deadline = time.perf_counter() + timeout
        while True:
            self.reap_ready()
            if is_done():
                return
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise Timeout(f"{what}: timed out after {timeout:g} s")
            self._sleep_until_sigchld(min(remaining, 0.5))

    def wait_jobs(self, jobs, timeout=60):
        self._wait(lambda: all(j.done for j in jobs), timeout,
                   "waiting for " + ", ".join(os.path.basename(j.argv[0]) for j in jobs[:3]))

    def wait_any(self, jobs, timeout=60):
        """Waits until at least one of jobs is done; returns the done ones."""
        self._wait(lambda: any(j.done for j in jobs), timeout, "waiting")
        return [j for j in jobs if j.done]

    def settle(self, before, timeout=60):
        """Waits until every child of the harness that is not in before (the orphans of what ran
        since: reparented to the subreaper) has ended, reaping it, so that its CPU time is in
        cpu_children() now."""
        self._wait(lambda: not [p for p in self.children() if p not in before], timeout,
                   "waiting for the processes a command left behind")

    def pid_gone(self, pid):
        if pid in self.exited:
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        # A zombie that is not ours to reap (its parent will) is as good as gone.
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except (OSError, IndexError):
            return True

    def wait_pid_exit(self, pid, timeout=60):
        """Waits for a process that is not a spawned Job (a container's init) to exit: reaped
        here if it is our child (reparented to the subreaper), else gone from /proc."""
        def gone():
            if pid in self.exited:
                return True
            if pid in self.jobs:
                return False
            if self._is_our_child(pid):
                return False
            return self.pid_gone(pid)
        deadline = time.perf_counter() + timeout
        while True:
            self.reap_ready()
            if gone():
                return self.exited.get(pid)
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise Timeout(f"pid {pid} still running after {timeout:g} s")
            # Our child: SIGCHLD wakes us; someone else's: poll.
            self._sleep_until_sigchld(min(remaining, 0.5 if self._is_our_child(pid) else 0.002))

    @staticmethod
    def _is_our_child(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid()
        except (OSError, IndexError, ValueError):
            return False

    def drop_stale(self, pid, since):
        """Forgets an exit of pid recorded before `since` (perf_counter): pid now names a
        newer process."""
        rec = self.exited.get(pid)
        if rec is not None and rec[2] < since:
            del self.exited[pid]

    def children(self):
        """Pids whose parent is the harness (live or zombie)."""
        me, out = os.getpid(), []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                            out.append(int(d))
                except (OSError, IndexError, ValueError):
                    pass
        return out
