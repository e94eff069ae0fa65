"""`seerun sandbox --network`: egress by host name through seerun's own proxy, as an agent
framework runs pip-like code.  The origin server listens on the host's loopback; its names are
pinned in the test's policy, which lists 127.0.0.1 in allowAddresses, as a site lists its
mirror.  Nothing leaves this machine: other names are refused before anything is resolved."""
import json
import os
import subprocess

import pytest

from conftest import SEERUN, http_origin

FETCH = """
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        print("ok", urllib.request.urlopen(url, timeout=10).read().decode().strip())
    except urllib.error.HTTPError as e:
        print("refused", e.code, e.read().decode().strip())
    except Exception as e:
        print("failed", type(e).__name__)
"""


def said(r):
    return f"origin {r.path}\n"


@pytest.fixture
def origin():
    with http_origin(said) as port:
        yield port


def policy_with(hardened, tmp_path, port, caller_may_allow=True, profile="default"):
    policy = json.loads(open(hardened.policy).read())
    net = policy["profiles"].setdefault(profile, {}).setdefault("network", {})
    net["egress"] = {"allow": [f"index.test:{port}", f"meta.test:{port}"],
                     "deny": [f"bad.test:{port}"],
                     "pins": {"index.test": "127.0.0.1", "files.test": "127.0.0.1",
                              "bad.test": "127.0.0.1", "meta.test": "169.254.169.254"},
                     "allowAddresses": ["127.0.0.1/32"], "callerMayAllow": caller_may_allow}
    path = tmp_path / "policy-egress.json"
    path.write_text(json.dumps(policy))
    os.chmod(path, 0o644)
    return str(path)


def sandbox(hardened, policy, tmp_path, *args, command=()):
    result = tmp_path / "result.json"
    argv = [SEERUN, "--root", hardened.root, "--policy", policy, "sandbox", "--name",
            hardened.id("egress"), f"--json={result}", *args, "--", *command]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=90)
    r.result = json.loads(result.read_text()) if result.exists() else None
    return r


def audit(policy):
    path = json.loads(open(policy).read())["auditLog"]
    with open(path) as f:
        return [json.loads(l) for l in f]


def test_allowed_names_are_fetched_and_the_rest_refused_into_the_result(hardened, tmp_path,
                                                                        origin):
    policy = policy_with(hardened, tmp_path, origin)
    urls = [f"http://index.test:{origin}/simple/", f"http://files.test:{origin}/pkg.whl",
            f"http://bad.test:{origin}/x", f"http://other.test:{origin}/x",
            f"http://meta.test:{origin}/latest"]
    r = sandbox(hardened, policy, tmp_path, "--network", "--allow-host", f"files.test:{origin}",
                "--allow-host", f"bad.test:{origin}", command=("python3", "-c", FETCH, *urls))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "ok origin /simple/", r.stdout
    assert lines[1] == "ok origin /pkg.whl", r.stdout          # --allow-host
    assert lines[2].startswith("refused 403 seerun: egress to bad.test"), r.stdout  # deny wins
    assert "(network.egress.deny)" in lines[2]
    assert lines[3] == (f"refused 403 seerun: egress to other.test:{origin} denied by profile "
                        '"default" (network.egress.allow, --allow-host)'), r.stdout
    assert lines[4].startswith("refused 403") and "169.254.169.254 is link-local" in lines[4]
    e = r.result["egress"]
    assert (e["requests"], e["allowed"], e["refused"]) == (5, 2, 3), e
    assert e["bytesDown"] > 0
    hosts = {(x["host"], x["event"], x["allowed"]) for x in e["events"]}
    assert ("index.test", "egress.close", True) in hosts
    assert ("other.test", "egress", False) in hosts
    lines = [l for l in audit(policy) if l.get("event") == "egress"]
    assert {l["host"] for l in lines} == {"index.test", "files.test", "bad.test", "other.test",
                                          "meta.test"}


def test_a_client_that_ignores_the_proxy_gets_nothing(hardened, tmp_path, origin):
    policy = policy_with(hardened, tmp_path, origin)
    probe = ("import socket\n"
             "for a in ('127.0.0.1', '192.0.2.1'):\n"
             "    s = socket.socket(); s.settimeout(5)\n"
             "    try: s.connect((a, %d)); print(a, 'connected')\n"
             "    except OSError as e: print(a, e.errno)\n" % origin)
    r = sandbox(hardened, policy, tmp_path, "--network", command=("python3", "-c", probe))
    assert r.returncode == 0, r.stderr
    # 127.0.0.1 inside is the sandbox's own loopback (nothing listens on the origin's port);
    # everything else is unreachable.
    assert r.stdout.splitlines() == ["127.0.0.1 111", "192.0.2.1 101"], r.stdout


def test_allow_host_is_refused_where_the_profile_does_not_let_the_caller_add_names(
        hardened, tmp_path, origin):
    policy = policy_with(hardened, tmp_path, origin, caller_may_allow=False)
    r = sandbox(hardened, policy, tmp_path, "--allow-host", "example.org", command=("true",))
    assert r.returncode == 125
    assert ('--allow-host: not allowed by profile "default" '
            "(profiles.default.network.egress.callerMayAllow is false)") in r.stderr


@pytest.mark.parametrize("addr,cls", [("10.1.2.3", "private"), ("169.254.169.254", "link-local"),
                                      ("[::1]", "loopback")])
def test_allow_host_never_names_a_refused_address_class(hardened, tmp_path, origin, addr, cls):
    policy = policy_with(hardened, tmp_path, origin)
    r = sandbox(hardened, policy, tmp_path, "--allow-host", addr, command=("true",))
    assert r.returncode == 125
    assert f"a {cls} address, which the proxy refuses whoever allows it" in r.stderr, r.stderr


def test_without_network_there_is_no_proxy(hardened, tmp_path, origin):
    policy = policy_with(hardened, tmp_path, origin)
    r = sandbox(hardened, policy, tmp_path,
                command=("sh", "-c", "echo proxy=${HTTP_PROXY:-none}"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "proxy=none"
    assert r.result["egress"] is None


def secure_test_ca(tmp_path):
    """A self-signed certificate for secure.test (its own CA), in tmp_path/ca: cert.pem, key.pem."""
    d = tmp_path / "ca"
    d.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=secure.test", "-addext", "subjectAltName=DNS:secure.test",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True)
    os.chmod(d, 0o755)
    os.chmod(d / "cert.pem", 0o644)
    return d


@pytest.fixture
def tls_origin(tmp_path):
    """An HTTPS server on the host's loopback for the name secure.test, with a test CA."""
    d = secure_test_ca(tmp_path)
    with http_origin(said, tls=(str(d / "cert.pem"), str(d / "key.pem"))) as port:
        yield port, d


def secure_test_policy(hardened, tmp_path, port):
    """policy_with's, plus secure.test:port pinned to the host's loopback; its path."""
    policy = json.loads(open(policy_with(hardened, tmp_path, port)).read())
    eg = policy["profiles"]["default"]["network"]["egress"]
    eg["allow"].append(f"secure.test:{port}")
    eg["pins"]["secure.test"] = "127.0.0.1"
    path = tmp_path / "policy-tls.json"
    path.write_text(json.dumps(policy))
    os.chmod(path, 0o644)
    return path


def test_https_goes_through_connect_with_the_name_it_asked_for(hardened, tmp_path, tls_origin):
    port, ca = tls_origin
    path = secure_test_policy(hardened, tmp_path, port)
    fetch = ("import ssl, urllib.request\n"
             f"ctx = ssl.create_default_context(cafile='/ca/cert.pem')\n"
             f"print(urllib.request.urlopen('https://secure.test:{port}/tls', context=ctx,"
             " timeout=10).read().decode().strip())\n")
    r = sandbox(hardened, str(path), tmp_path, "--network", "--ro", f"{ca}:/ca",
                command=("python3", "-c", fetch))
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.strip() == "origin /tls"
    # curl-like: the same through curl's own proxy support, when the host has curl.
    if os.path.exists("/usr/bin/curl"):
        r = sandbox(hardened, str(path), tmp_path, "--network", "--ro", f"{ca}:/ca",
                    command=("curl", "-sS", "--cacert", "/ca/cert.pem",
                             f"https://secure.test:{port}/curl"))
        assert r.returncode == 0, r.stderr + r.stdout
        assert r.stdout.strip() == "origin /curl"
    lines = [l for l in audit(str(path)) if l.get("event") == "egress" and l["allowed"]]
    assert lines and all(l["method"] == "CONNECT" for l in lines)


def test_repeated_refusals_are_counted_not_written_again(hardened, tmp_path, origin):
    policy = policy_with(hardened, tmp_path, origin)
    urls = [f"http://other.test:{origin}/x"] * 50
    r = sandbox(hardened, policy, tmp_path, "--network", command=("python3", "-c", FETCH, *urls))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("refused 403") == 50
    lines = [l for l in audit(policy) if l.get("event") == "egress"]
    assert len(lines) == 1, lines
    rep = [l for l in audit(policy) if l.get("event") == "egress.repeated"]
    assert len(rep) == 1 and rep[0]["repeated"] == 49 and rep[0]["host"] == "other.test"
    assert r.result["egress"]["refused"] == 50
    assert r.result["egress"]["repeated"][0]["repeated"] == 49


def test_refusals_of_ever_new_names_do_not_fill_the_audit_log(hardened, tmp_path, origin):
    # Each refusal of a name not refused before was a line of the audit log, on the host's
    # disk: code that asks for ever new names (no connection is made, so as fast as it can
    # ask) wrote as many as it liked.  Past the kinds the record keeps (128), they are
    # counted into one line; every one is still in the counts.
    policy = policy_with(hardened, tmp_path, origin)
    urls = [f"http://n{i}.flood.test:{origin}/x" for i in range(600)]
    r = sandbox(hardened, policy, tmp_path, "--network", command=("python3", "-c", FETCH, *urls))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("refused 403") == 600
    lines = audit(policy)
    refused = [l for l in lines if l.get("event") == "egress" and not l["allowed"]]
    assert len(refused) == 128, len(refused)
    assert [l["host"] for l in refused] == [f"n{i}.flood.test" for i in range(128)]
    rep = [l for l in lines if l.get("event") == "egress.repeated"]
    assert len(rep) == 1 and rep[0]["repeated"] == 472 and rep[0]["host"] == "", rep
    assert "128" in rep[0]["reason"], rep
    eg = r.result["egress"]
    assert eg["refused"] == 600 and eg["requests"] == 600, eg
    assert [x["repeated"] for x in eg["repeated"]] == [472], eg["repeated"]
    runs = json.loads(hardened.cmd("review", "--json", check=True).stdout)["runs"]
    run = [x for x in runs if x["id"] == hardened.id("egress")][0]
    assert run["egressRefused"] == 600 and run["egressRequests"] == 600, run
