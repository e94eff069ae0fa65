#!/usr/bin/python3
"""A stand-in for systemd's manager on a private D-Bus bus, for the --systemd-cgroup tests on
a machine without systemd: it answers StartTransientUnit and StopUnit with systemd's method
signatures, does to the cgroup trees what systemd does for a delegated scope (make the scope's
directory in cgroup2 and in the v1 hierarchies systemd manages, and move the listed pids into
it; on stop, kill what is left and remove those directories), and logs every call as one JSON
line.

    fake_systemd.py BUS_ADDRESS LOG_FILE      (prints "ready" once it owns the name)
"""
import json
import os
import signal
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

MANAGER = "org.freedesktop.systemd1.Manager"


class NoSuchUnit(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.systemd1.NoSuchUnit"


class InvalidArgs(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.InvalidArgs"


# The v1 hierarchies systemd manages for a scope with CPU, memory and tasks accounting (and
# Delegate=yes); cpuset, freezer, net_cls, perf_event, hugetlb... are left to the delegatee.
SYSTEMD_V1 = {"name=systemd", "cpu", "cpuacct", "blkio", "memory", "devices", "pids"}


def cgroup_mounts():
    """The cgroup mounts systemd would put a scope in: cgroup2, and the v1 ones it manages."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            fstype, opts = fields[sep + 1], fields[sep + 3].split(",")
            if fstype == "cgroup2" or (fstype == "cgroup" and SYSTEMD_V1 & set(opts)):
                out.append(fields[4])
    return out


def slice_path(name):
    """systemd nests slices by their dashes: a-b.slice is /a.slice/a-b.slice."""
    stem = name[:-len(".slice")]
    parts = stem.split("-")
    return "".join("/" + "-".join(parts[:i + 1]) + ".slice" for i in range(len(parts)))


def plain(v):
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.Array, list)):
        return [plain(x) for x in v]
    if isinstance(v, (dbus.String, dbus.ObjectPath)):
        return str(v)
    if isinstance(v, (int, dbus.UInt32, dbus.UInt64, dbus.Int32, dbus.Int64)):
        return int(v)
    return repr(v)


class Manager(dbus.service.Object):
    def __init__(self, bus, log):
        super().__init__(bus, "/org/freedesktop/systemd1")
        self.log = log
        self.units = {}  # unit name -> cgroup path
        self.jobs = 0

    def record(self, entry):
        with open(self.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def job(self):
        self.jobs += 1
        return dbus.ObjectPath(f"/org/freedesktop/systemd1/job/{self.jobs}")

    @dbus.service.method(MANAGER, in_signature="ssa(sv)a(sa(sv))", out_signature="o")
    def StartTransientUnit(self, name, mode, properties, aux):
        props = {str(k): plain(v) for k, v in properties}
        self.record({"method": "StartTransientUnit", "name": str(name), "mode": str(mode),
                     "properties": props, "aux": len(aux)})
        if not str(name).endswith(".scope") or "Slice" not in props or "PIDs" not in props:
            raise InvalidArgs(f"{name}: a scope needs Slice and PIDs")
        path = slice_path(props["Slice"]) + "/" + str(name)
        for mount in cgroup_mounts():
            d = mount + path
            os.makedirs(d, exist_ok=True)
            for pid in props["PIDs"]:
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
        self.units[str(name)] = path
        return self.job()

    @dbus.service.method(MANAGER, in_signature="ss", out_signature="o")
    def StopUnit(self, name, mode):
        self.record({"method": "StopUnit", "name": str(name), "mode": str(mode)})
        path = self.units.pop(str(name), None)
        if path is None:
            raise NoSuchUnit(f"Unit {name} not loaded.")
        for mount in cgroup_mounts():
            d = mount + path
            if not os.path.isdir(d):
                continue
            # KillMode=control-group: whatever is left in the scope is killed.
            for _ in range(200):
                with open(os.path.join(d, "cgroup.procs")) as f:
                    pids = [int(p) for p in f.read().split()]
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.01)
            os.rmdir(d)
        return self.job()


def main():
    address, log = sys.argv[1], sys.argv[2]
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    manager = Manager(bus, log)
    name = dbus.service.BusName("org.freedesktop.systemd1", bus)
    print("ready", flush=True)
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    loop.run()
    del name, manager


if __name__ == "__main__":
    main()
