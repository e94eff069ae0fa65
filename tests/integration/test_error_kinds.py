"""A config.json the parser refuses is audited as a refusal of the field the parser named, as
the policy names fields (issue 12).  The field is the one the parser knew when it refused, never
one read back from the error's text: the config's author chooses keys and values, and a text
scraped for its first colon or quote took a value for part of the field, cut a key at a colon or
gave up on a long one -- an audit line that names a field the config does not have."""
import uuid

import pytest

from test_escape import decisions


def refused_config(s, bundle, verb):
    """Runs `verb` on the bundle: it must fail, nothing must exist, and the last audit line is
    the refusal of config.json; returns (that line, stderr)."""
    cid = s.id(uuid.uuid4().hex[:6])
    args = ["--bundle", bundle.write(), cid]
    r = s.cmd(verb, *args)
    assert r.returncode != 0, f"not refused: {r.stdout}"
    assert s.list_ids() == []
    refusals = [d for d in decisions(s) if d["kind"] == "refused"]
    assert refusals, f"no refusal audited: {r.stderr}"
    d = refusals[-1]
    assert d["asked"] == '"config.json"', d
    assert d["id"] == cid, d
    return d, r.stderr


@pytest.mark.parametrize("verb", ["create", "run"])
def test_a_refused_value_is_not_audited_as_part_of_the_field(hardened, bundle, verb):
    bundle.process["env"] = ["PATH=/bin", "NOT_A_PAIR"]
    d, stderr = refused_config(hardened, bundle, verb)
    assert "process.env[1]" in stderr and "NOT_A_PAIR" in stderr, stderr
    assert d["field"] == "process.env[1]", d
    assert "is not of the form NAME=VALUE" in d["reason"], d


def test_a_key_with_a_colon_and_spaces_is_audited_whole(hardened, bundle):
    bundle.config["annotations"] = {"org.example/a: b c": 5}
    d, stderr = refused_config(hardened, bundle, "run")
    assert "must be a string" in stderr, stderr
    assert d["field"] == "annotations.org.example/a: b c", d


def test_a_long_sysctl_key_is_audited_under_its_whole_name(hardened, bundle):
    key = "kernel." + "k" * 300
    bundle.linux["sysctl"] = {key: "1"}
    d, stderr = refused_config(hardened, bundle, "run")
    assert "is not namespaced" in stderr, stderr
    assert d["field"] == f"linux.sysctl.{key}", d


def test_a_config_that_is_not_json_is_audited_as_the_whole_document(hardened, bundle):
    path = bundle.write()
    with open(f"{path}/config.json", "a") as f:
        f.write("}")  # trailing garbage
    cid = hardened.id(uuid.uuid4().hex[:6])
    r = hardened.cmd("run", "--bundle", path, cid)
    assert r.returncode != 0 and "invalid JSON" in r.stderr, r.stderr
    d = [x for x in decisions(hardened) if x["kind"] == "refused"][-1]
    assert (d["field"], d["id"]) == ("config.json", cid), d
    assert hardened.list_ids() == []
