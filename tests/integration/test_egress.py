"""Egress by host name through seerun's own proxy, for engine containers: the annotation
io.seerun.network=proxy, a test policy whose names are pinned to a server on the host's
loopback (allowed there explicitly with allowAddresses, as a site would list its mirror), and
what the container, the audit log and the host see.

No traffic leaves this machine: the origin server listens on 127.0.0.1; other names are refused
before anything is resolved, and the refused address classes are reached through pins."""
import json
import os
import socket
import threading

import pytest

from conftest import make_seerun, check_no_leaks, Bundle, http_origin, wait_for


@pytest.fixture
def origin():
    """What the origin saw of each request: its path, Host header and client address."""
    with http_origin(lambda r: f"origin saw {r.path} host={r.headers.get('Host')} "
                               f"from={r.client_address[0]}\n") as port:
        yield port


def egress_policy(s, port, **profile_network):
    with open(s.policy) as f:
        policy = json.load(f)
    net = policy["profiles"]["default"].setdefault("network", {})
    net.update({"proxy": True, "egress": {
        "allow": [f"allowed.test:{port}", f"*.wild.test:{port}", f"loop.test:{port}",
                  f"meta.test:{port}", f"localhost:{port}"],
        "deny": [f"secret.wild.test:{port}"],
        "pins": {"allowed.test": "127.0.0.1", "a.wild.test": "127.0.0.1",
                 "secret.wild.test": "127.0.0.1", "loop.test": "127.0.0.2",
                 "meta.test": "169.254.169.254"},
        "allowAddresses": ["127.0.0.1/32"],
    }})
    net.update(profile_network)
    with open(s.policy, "w") as f:
        json.dump(policy, f)


@pytest.fixture
def proxied(tmp_path, busybox_rootfs):
    s = make_seerun(tmp_path, "default")
    path = tmp_path / "bundle"
    path.mkdir()
    b = Bundle(path, busybox_rootfs, s)
    b.config.setdefault("annotations", {})["io.seerun.network"] = "proxy"
    yield s, b
    s.cleanup()
    check_no_leaks(s, tmp_path)


def egress_lines(s, event="egress"):
    return [l for l in s.audit() if l.get("event") == event]


def test_an_allowed_name_is_fetched_and_everything_else_is_refused_and_audited(proxied, origin):
    s, b = proxied
    egress_policy(s, origin)
    b.shell(f"""
        echo "proxy=$http_proxy no=$NO_PROXY"
        wget -q -O - http://allowed.test:{origin}/ok
        wget -q -O - http://a.wild.test:{origin}/wild
        wget -q -O - http://localhost:{origin}/resolved
        for h in other.test secret.wild.test loop.test meta.test; do
          wget -q -O - http://$h:{origin}/x 2>&1 | tail -1; done
        wget -q -O - http://127.0.0.1:{origin}/direct 2>&1 | tail -1
        printf 'GET http://allowed.test:{origin}/ HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n' |
          nc 127.0.0.1 3128 | tail -1
        env -u http_proxy wget -q -O - http://192.0.2.1/ 2>&1 | tail -1
    """)
    r = s.cmd("run", "--bundle", b.write(), s.id())
    out = r.stdout
    assert "proxy=http://127.0.0.1:3128 no=localhost,127.0.0.1" in out, out + r.stderr
    assert f"origin saw /ok host=allowed.test:{origin} from=127.0.0.1" in out, out + r.stderr
    assert f"origin saw /wild host=a.wild.test:{origin}" in out, out
    # Resolved by the confined proxy itself (/etc/hosts), then judged: 127.0.0.1 is listed.
    assert f"origin saw /resolved host=localhost:{origin}" in out, out
    # An IP literal needs an allow entry naming that address, whatever allowAddresses says.
    assert out.count("403 Forbidden") == 5, out
    assert "origin saw /x" not in out and "origin saw /direct" not in out, out
    assert "the Host header must name the request URL's host" in out, out
    assert "Network is unreachable" in out, out
    d = {(l["host"], l["allowed"]): l for l in egress_lines(s)}
    assert d[("allowed.test", True)]["address"] == "127.0.0.1"
    assert d[("other.test", False)]["reason"] == "network.egress.allow"
    assert d[("secret.wild.test", False)]["reason"] == "network.egress.deny"
    assert d[("loop.test", False)]["reason"] == "127.0.0.2 is loopback"
    assert d[("meta.test", False)]["reason"] == "169.254.169.254 is link-local"
    assert d[("127.0.0.1", False)]["reason"] == "network.egress.allow"
    closes = egress_lines(s, "egress.close")
    ok = [c for c in closes if c["host"] == "allowed.test"]
    assert ok and ok[0]["bytesDown"] > 0 and ok[0]["request"] == d[("allowed.test", True)]["request"]
    assert isinstance(ok[0]["durationMs"], int)


def test_the_refusal_says_what_to_change(proxied, origin):
    s, b = proxied
    egress_policy(s, origin)
    b.shell(f"printf 'GET http://nope.test:{origin}/ HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 3128")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "HTTP/1.1 403 Forbidden" in r.stdout, r.stdout + r.stderr
    assert (f'seerun: egress to nope.test:{origin} denied by profile "default" '
            "(network.egress.allow)") in r.stdout


def test_an_annotation_narrows_the_profile_and_cannot_widen_it(proxied, origin):
    s, b = proxied
    egress_policy(s, origin)
    b.config["annotations"]["io.seerun.egress.allow"] = f"a.wild.test:{origin},evil.test:{origin}"
    b.shell(f"""
        wget -q -O - http://a.wild.test:{origin}/narrowed
        wget -q -O - http://allowed.test:{origin}/x 2>&1 | tail -1
        wget -q -O - http://evil.test:{origin}/x 2>&1 | tail -1
    """)
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert f"origin saw /narrowed" in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("403 Forbidden") == 2, r.stdout
    reasons = {l["host"]: l["reason"] for l in egress_lines(s) if not l["allowed"]}
    assert reasons == {"allowed.test": "io.seerun.egress.allow",
                       "evil.test": "network.egress.allow"}


def test_a_connect_whose_tls_server_name_differs_is_cut(proxied, origin):
    s, b = proxied
    egress_policy(s, origin)
    # A ClientHello naming evil.test through a tunnel to allowed.test (hand-built, in hex).
    sni = b"evil.test"
    ext = (b"\x00\x00" + (len(sni) + 5).to_bytes(2, "big") + (len(sni) + 3).to_bytes(2, "big")
           + b"\x00" + len(sni).to_bytes(2, "big") + sni)
    body = (b"\x03\x03" + b"\x07" * 32 + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
            + len(ext).to_bytes(2, "big") + ext)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    rec = b"\x16\x03\x01" + len(hs).to_bytes(2, "big") + hs
    esc = "".join(f"\\x{c:02x}" for c in rec)
    b.shell(f"""{{ printf 'CONNECT allowed.test:{origin} HTTP/1.1\\r\\n\\r\\n'; sleep 0.2;
                  printf '{esc}'; sleep 1; }} | nc 127.0.0.1 3128 | head -1""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "200 Connection established" in r.stdout, r.stdout + r.stderr
    refused = [l for l in egress_lines(s) if not l["allowed"]]
    assert refused and refused[0]["host"] == "allowed.test", s.audit()
    assert refused[0]["reason"] == "the TLS server name differs from the CONNECT host: evil.test"
    assert not [l for l in egress_lines(s) if l["allowed"]]


def test_exec_gets_the_proxy_and_the_supervisor_is_unprivileged_and_gone_after_delete(
        proxied, origin):
    s, b = proxied
    egress_policy(s, origin)
    b.args("sleep", "60")
    cid = s.id()
    s.cmd("run", "--detach", "--bundle", b.write(), cid, check=True)
    with open(os.path.join(s.root, cid, "state.json")) as f:
        sup = json.load(f)["supervisor"]["pid"]
    assert os.path.exists(f"/proc/{sup}")
    # Nothing of the caller's: its stdio is /dev/null, no other descriptor of ours (but the
    # container's own state directory, where it flushes the activity record, and the
    # container's writable places, which it walks when the container stops: their paths are
    # the container's, e.g. its /tmp).
    fds = {os.readlink(f"/proc/{sup}/fd/{n}") for n in os.listdir(f"/proc/{sup}/fd")}
    fds.discard(os.path.realpath(os.path.join(s.root, cid)))
    with open(os.path.join(s.root, cid, "activity.json")) as f:
        places = {p["path"] for p in json.load(f)["files"]["places"]}
    assert "/tmp" in places
    fds -= places
    assert all(not f.startswith("/tmp") and "pytest" not in f for f in fds), fds
    def facts():
        # Its one child, the proxy (a helper it forks before, to listen in the container's
        # network namespace, may still be ending).
        children = open(f"/proc/{sup}/task/{sup}/children").read().split()
        try:
            status = {l.split(":")[0]: l.split()[1:] for l in
                      open(f"/proc/{children[0]}/status").read().splitlines() if ":" in l}
        except (IndexError, OSError):
            return None
        return (len(children), status["Uid"], status["CapEff"], status["NoNewPrivs"],
                status["Seccomp"])
    # The proxy confines itself once forked, before it accepts a connection: `run` may
    # return before that, so this waits for it (and fails if it never happens).
    want = (1, ["65534"] * 4, ["0000000000000000"], ["1"], ["2"])
    wait_for(lambda: facts() == want, what="the proxy unprivileged, with NNP and its filter")
    assert facts() == want
    r = s.cmd("exec", cid, "sh", "-c", f"echo $HTTPS_PROXY; wget -q -O - http://allowed.test:{origin}/exec")
    assert "http://127.0.0.1:3128" in r.stdout and "origin saw /exec" in r.stdout, r.stdout + r.stderr
    s.cmd("delete", "--force", cid, check=True)
    wait_for(lambda: not os.path.exists(f"/proc/{sup}") or
             open(f"/proc/{sup}/stat").read().split()[2] == "Z", what="the supervisor to end")


def test_the_supervisor_ends_with_the_container_even_when_seerun_is_gone(proxied, origin):
    s, b = proxied
    egress_policy(s, origin)
    b.args("sh", "-c", "sleep 60")
    cid = s.id()
    s.cmd("run", "--detach", "--bundle", b.write(), cid, check=True)
    st = json.load(open(os.path.join(s.root, cid, "state.json")))
    sup, init = st["supervisor"]["pid"], st["pid"]
    os.kill(init, 9)  # no seerun involved: the init dies
    wait_for(lambda: not os.path.exists(f"/proc/{sup}") or
             open(f"/proc/{sup}/stat").read().split()[2] == "Z", what="the supervisor to end")


def test_a_profile_without_proxy_refuses_the_annotation(proxied, origin):
    s, b = proxied
    egress_policy(s, origin, proxy=False)
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert r.returncode != 0
    assert ('annotation io.seerun.network=proxy: not allowed by profile "default" '
            "(profiles.default.network.proxy is false)") in r.stderr


def test_network_mode_proxy_gives_the_proxy_without_asking(proxied, origin):
    s, b = proxied
    egress_policy(s, origin, mode="proxy")
    del b.config["annotations"]["io.seerun.network"]
    b.shell(f"wget -q -O - http://allowed.test:{origin}/mode")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "origin saw /mode" in r.stdout, r.stdout + r.stderr


def test_the_outbound_side_leaves_from_the_bind_address(proxied, origin):
    s, b = proxied
    egress_policy(s, origin)
    with open(s.policy) as f:
        policy = json.load(f)
    policy["profiles"]["default"]["network"]["egress"]["bindAddress"] = "127.0.0.2"
    with open(s.policy, "w") as f:
        json.dump(policy, f)
    b.shell(f"wget -q -O - http://allowed.test:{origin}/bound")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert f"origin saw /bound host=allowed.test:{origin} from=127.0.0.2" in r.stdout, \
        r.stdout + r.stderr


def client_hello(name):
    ext = (b"\x00\x00" + (len(name) + 5).to_bytes(2, "big") + (len(name) + 3).to_bytes(2, "big")
           + b"\x00" + len(name).to_bytes(2, "big") + name)
    body = (b"\x03\x03" + b"\x07" * 32 + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
            + len(ext).to_bytes(2, "big") + ext)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + len(hs).to_bytes(2, "big") + hs


def test_a_client_hello_after_a_pause_is_judged_all_the_same(proxied, origin):
    """The first bytes decide whenever they come: a ClientHello naming another host, sent after
    a silence, is refused (a red-team finding: an early version stopped looking after 3 s)."""
    s, b = proxied
    egress_policy(s, origin)
    esc = "".join(f"\\x{c:02x}" for c in client_hello(b"evil.test"))
    b.shell(f"""{{ printf 'CONNECT allowed.test:{origin} HTTP/1.1\\r\\n\\r\\n'; sleep 3.5;
                  printf '{esc}'; sleep 1; }} | nc 127.0.0.1 3128 | head -1""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "200 Connection established" in r.stdout, r.stdout + r.stderr
    refused = [l for l in egress_lines(s) if not l["allowed"]]
    assert refused and refused[0]["reason"].startswith("the TLS server name differs"), s.audit()
    assert not [l for l in egress_lines(s) if l["allowed"]]


def test_plain_http_cannot_ride_a_connect_tunnel(proxied, origin):
    """A Host header of another name inside a tunnel to an allowed one: refused (plain http
    goes as a forward request, whose Host is checked)."""
    s, b = proxied
    egress_policy(s, origin)
    b.shell(f"""{{ printf 'CONNECT allowed.test:{origin} HTTP/1.1\\r\\n\\r\\n'; sleep 0.3;
                  printf 'G'; sleep 0.3;
                  printf 'ET /fronted HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n'; sleep 1; }} |
               nc 127.0.0.1 3128""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "origin saw /fronted" not in r.stdout, r.stdout
    refused = [l for l in egress_lines(s) if not l["allowed"]]
    assert refused and refused[0]["reason"].startswith("plain HTTP through a CONNECT tunnel")


def test_a_server_that_speaks_first_works_through_a_tunnel(proxied):
    """SSH, SMTP: the server's banner is relayed while the client's first bytes are awaited."""
    import socket as so
    srv = so.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def serve():
        c, _ = srv.accept()
        c.sendall(b"SSH-2.0-test\r\n")
        c.settimeout(10)
        got = c.recv(100)
        c.sendall(b"you said " + got)
        c.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    s, b = proxied
    egress_policy(s, port)
    b.shell(f"""{{ printf 'CONNECT allowed.test:{port} HTTP/1.1\\r\\n\\r\\n'; sleep 0.5;
                  printf 'SSH-2.0-client\\r\\n'; sleep 1; }} | nc 127.0.0.1 3128""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    t.join(5)
    srv.close()
    assert "SSH-2.0-test" in r.stdout and "you said SSH-2.0-client" in r.stdout, r.stdout
