"""The eBPF map of a supervisor's followed processes, read from the host (bpf system call; root)."""
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
NR_BPF = 321


def _bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr).ljust(128, b"\0"), 128)
    r = libc.syscall(NR_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r, buf


def followed(sup_pid, fd=13):
    """The supervisor's map of followed processes: {host tgid: live tasks}."""
    with open(f"/proc/{sup_pid}/fdinfo/{fd}") as f:
        map_id = int([l for l in f if l.startswith("map_id:")][0].split()[1])
    mfd, _ = _bpf(14, struct.pack("=III", map_id, 0, 0))  # BPF_MAP_GET_FD_BY_ID
    try:
        out = {}
        key = None
        kbuf, nbuf = (ctypes.create_string_buffer(4) for _ in range(2))
        vbuf = ctypes.create_string_buffer(16)  # struct sr_act_followed: tasks, pad, exec_ns
        while True:
            attr = struct.pack("=IIQQ", mfd, 0, ctypes.addressof(kbuf) if key is not None else 0,
                               ctypes.addressof(nbuf))
            try:
                _bpf(4, attr)  # BPF_MAP_GET_NEXT_KEY
            except OSError as e:
                if e.errno == 2:
                    return out
                raise
            key = struct.unpack("=I", nbuf.raw)[0]
            kbuf.raw = nbuf.raw
            try:
                _bpf(1, struct.pack("=IIQQQ", mfd, 0, ctypes.addressof(kbuf),
                                    ctypes.addressof(vbuf), 0))  # BPF_MAP_LOOKUP_ELEM
                out[key] = struct.unpack("=IIQ", vbuf.raw)[0]
            except OSError as e:
                if e.errno != 2:
                    raise
    finally:
        os.close(mfd)
