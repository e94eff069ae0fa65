/* What code that handles an error tests: its kind and the field it concerns, set where the
 * error is made (the config parser, the policy) and kept as it travels up -- never read back
 * from the text, which a field name chosen by the config's author can make say anything.  And
 * the JSON writer, whose first failure is kept and reported where the text is taken, so a
 * generator in a bad state never passes for a whole document (an audit line, state.json).
 *
 * Runs under ASan/LSan/UBSan.
 */
#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "config.h"
#include "json.h"
#include "policy.h"
#include "policy_apply.h"
#include "unit.h"

/* JSON written as is in the source; clang-format would space it out as C, so the parts full
 * of JSON are laid out by hand. */
#define JSON(...) #__VA_ARGS__

// clang-format off
/* A config with linux, process and more members than the minimal one. */
static char *config_with(const char *linux_, const char *process, const char *extra)
{
  char *s = NULL;
  if (asprintf(&s,
               "{\"ociVersion\": \"1.2.1\", \"root\": {\"path\": \"rootfs\"}, "
               "\"process\": %s, \"linux\": %s%s%s}",
               process ? process : JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/"}),
               linux_ ? linux_ : JSON({"namespaces": [{"type": "mount"}]}), extra ? ", " : "",
               extra ? extra : "") < 0)
    abort();
  return s;
}

/* The config is refused with an SR_ERR_CONFIG error about field (NULL: the whole document)
 * whose text contains text. */
#define CONFIG_REFUSED(json, field_, text_)                                                        \
  do {                                                                                             \
    char *unit_j_ = (json);                                                                        \
    struct sr_config *unit_c_ = NULL;                                                              \
    sr_error_t unit_x_ = NULL;                                                                     \
    CHECK(sr_config_parse(unit_j_, strlen(unit_j_), "config.json", &unit_c_, &unit_x_) < 0);       \
    CHECK_ERR_CONTAINS(unit_x_, (text_));                                                          \
    CHECK_INT_EQ(sr_error_kind(unit_x_), SR_ERR_CONFIG);                                           \
    CHECK_STR_EQ(unit_x_ ? unit_x_->field : NULL, (field_));                                       \
    sr_error_free(&unit_x_);                                                                       \
    if (unit_c_)                                                                                   \
      sr_config_free(unit_c_);                                                                     \
    free(unit_j_);                                                                                 \
  } while (0)

static void a_config_error_names_its_field_as_the_policy_does(void)
{
  CONFIG_REFUSED(config_with(NULL, NULL, JSON("mounts": [{"destination": "/a", "type": "tmpfs"},
                                                         {"destination": "/b", "options": ["bind"]}])),
                 "mounts[1].source", "config.json: mounts[1].source: required for a bind mount");
  CONFIG_REFUSED(config_with(JSON({"namespaces": [{"type": "mount"}],
                                   "sysctl": {"kernel.core_pattern": "|/bin/sh"}}),
                             NULL, NULL),
                 "linux.sysctl.kernel.core_pattern",
                 "config.json: linux.sysctl: \"kernel.core_pattern\" is not namespaced");
  CONFIG_REFUSED(config_with(NULL, NULL, JSON("hooks": {"prestart": [{"path": "x"}]})),
                 "hooks.prestart[0].path", "hooks.prestart[0].path: must be an absolute path");
  CONFIG_REFUSED(config_with(JSON({"namespaces": [{"type": "mount"}], "maskedPaths": ["/a", "b"]}),
                             NULL, NULL),
                 "linux.maskedPaths[1]", "linux.maskedPaths[1]: must be an absolute path");
  CONFIG_REFUSED(config_with(NULL, NULL, JSON("mounts": [{"destination": "/a", "type": "tmpfs",
                                                          "options": ["ro", ""]}])),
                 "mounts[0].options[1]", "mounts[0].options[1]: empty mount option");
  CONFIG_REFUSED(config_with(NULL, JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                         "rlimits": [{"type": "RLIMIT_NOFILE", "soft": "x"}]}),
                             NULL),
                 "process.rlimits[0].soft", "process.rlimits[0].soft: must be an integer");
  CONFIG_REFUSED(config_with(NULL, NULL, JSON("mounts": [{"destination": "/a", "type": "tmpfs",
                                                          "type": "proc"}])),
                 "mounts[0].type", "invalid JSON: mounts[0]: duplicate key \"type\"");
  /* Not JSON at all: the document as a whole. */
  char *broken = strdup("{\"ociVersion\": ");
  CONFIG_REFUSED(broken, NULL, "config.json: invalid JSON");
}

/* The text scraped by the old audit took a value for a field, cut a key at its first colon or
 * gave up past a length: the field is what the parser knew, whatever the names say. */
static void a_field_is_never_read_back_from_the_text(void)
{
  CONFIG_REFUSED(config_with(NULL, JSON({"user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
                                         "env": ["NOT_A_PAIR"]}),
                             NULL),
                 "process.env[0]", "process.env[0]: \"NOT_A_PAIR\" is not of the form NAME=VALUE");
  CONFIG_REFUSED(config_with(NULL, NULL, JSON("annotations": {"a: b \"c\"": 5})),
                 "annotations.a: b \"c\"", "annotations.a: b \"c\": must be a string");
  CONFIG_REFUSED(strdup(JSON({"ociVersion": "x", "root": {"path": "r"}})), "ociVersion",
                 "ociVersion: \"x\" is not a SemVer version");
  char key[301];
  memset(key, 'k', sizeof(key) - 1);
  key[sizeof(key) - 1] = '\0';
  char *linux_ = NULL, *field = NULL;
  if (asprintf(&linux_, "{\"namespaces\": [{\"type\": \"mount\"}], \"sysctl\": {\"%s\": \"1\"}}",
               key) < 0 ||
      asprintf(&field, "linux.sysctl.%s", key) < 0)
    abort();
  CONFIG_REFUSED(config_with(linux_, NULL, NULL), field, "is not namespaced");
  free(linux_);
  free(field);
}
// clang-format on

static void kind_and_field_survive_the_context_added_on_the_way_up(void)
{
  sr_error_t e = NULL;
  CHECK_INT_EQ(sr_error_config_at(&e, "mounts[3]", "source", "must not be empty"), -1);
  sr_error_wrap(&e, "bundle `%s`", "/b");
  CHECK_INT_EQ(sr_error_kind(e), SR_ERR_CONFIG);
  CHECK_STR_EQ(e->field, "mounts[3].source");
  CHECK_ERR_CONTAINS(e, "bundle `/b`: mounts[3].source: must not be empty");
  /* A new error replaces the old one, kind and field included. */
  sr_error_make(&e, 0, "other");
  CHECK_INT_EQ(sr_error_kind(e), SR_ERR_OTHER);
  CHECK(e->field == NULL);
  sr_error_peer_gone(&e, "gone");
  CHECK_INT_EQ(sr_error_kind(e), SR_ERR_PEER_GONE);
  sr_error_free(&e);
  CHECK_INT_EQ(sr_error_kind(e), SR_ERR_OTHER);
}

static void a_policy_refusal_is_of_kind_policy_and_names_the_field(void)
{
  struct sr_policy *pol = NULL;
  sr_error_t err = NULL;
  CHECK_OK(sr_policy_parse_default(&pol, &err), err);
  const struct sr_policy_profile *p = pol ? sr_policy_profile(pol, "default") : NULL;
  CHECK(p != NULL);
  char *json = config_with(NULL, NULL, "\"annotations\": {\"io.seerun.bogus\": \"1\"}");
  struct sr_config *c = NULL;
  CHECK_OK(sr_config_parse(json, strlen(json), "config.json", &c, &err), err);
  if (p && c) {
    struct sr_decisions d = {0};
    CHECK_INT_EQ(sr_policy_apply(p, NULL, c, &d, &err), -1);
    CHECK_INT_EQ(sr_error_kind(err), SR_ERR_POLICY);
    CHECK_STR_EQ(err ? err->field : NULL, "annotations.io.seerun.bogus");
    CHECK_ERR_CONTAINS(err, "unknown seerun annotation");
    sr_error_free(&err);
  }
  sr_error_free(&err);
  if (c)
    sr_config_free(c);
  if (pol)
    sr_policy_free(pol);
  free(json);
}

/* ---- The JSON writer ----------------------------------------------------------------------- */

/* The generator's document is refused with an error containing text. */
#define GEN_REFUSED(g, text_)                                                                      \
  do {                                                                                             \
    const unsigned char *unit_b_ = NULL;                                                           \
    size_t unit_l_ = 0;                                                                            \
    sr_error_t unit_x_ = NULL;                                                                     \
    CHECK_INT_EQ(sr_json_gen_buf((g), &unit_b_, &unit_l_, &unit_x_), -1);                          \
    CHECK_ERR_CONTAINS(unit_x_, (text_));                                                          \
    sr_error_free(&unit_x_);                                                                       \
  } while (0)

static sr_json_gen_t new_gen(void)
{
  sr_json_gen_t g = NULL;
  sr_error_t err = NULL;
  CHECK_OK(sr_json_gen_new(&g, false, &err), err);
  sr_error_free(&err);
  if (g == NULL)
    abort();
  return g;
}

static void a_whole_document_is_handed_out(void)
{
  _cleanup_gen_ sr_json_gen_t g = new_gen();
  sr_json_map_open(g);
  sr_json_put_kv_string(g, "a", "b");
  sr_json_put_kv_i64(g, "n", -3);
  sr_json_put_kv_u64(g, "u", 18446744073709551615u);
  sr_json_put_key(g, "l");
  sr_json_array_open(g);
  sr_json_put_null(g);
  sr_json_put_bool(g, true);
  sr_json_put_raw(g, "{\"x\":1}", 7);
  sr_json_array_close(g);
  sr_json_map_close(g);
  const unsigned char *buf = NULL;
  size_t len = 0;
  sr_error_t err = NULL;
  CHECK_OK(sr_json_gen_buf(g, &buf, &len, &err), err);
  sr_error_free(&err);
  if (buf) {
    char *s = strndup((const char *)buf, len);
    CHECK_STR_EQ(s,
                 "{\"a\":\"b\",\"n\":-3,\"u\":18446744073709551615,\"l\":[null,true,{\"x\":1}]}");
    free(s);
  }
}

static void a_value_where_a_key_belongs_fails_the_document(void)
{
  _cleanup_gen_ sr_json_gen_t g = new_gen();
  sr_json_map_open(g);
  sr_json_put_i64(g, 1); /* yajl refuses it and writes nothing */
  /* What follows would make a valid-looking {"b": "c"}, without the value that was lost. */
  sr_json_put_kv_string(g, "b", "c");
  sr_json_map_close(g);
  GEN_REFUSED(g, "generate JSON: integer: a key must be a string");
}

static void a_close_without_its_open_fails_the_document(void)
{
  _cleanup_gen_ sr_json_gen_t g = new_gen();
  sr_json_map_open(g);
  sr_json_map_close(g);
  sr_json_map_close(g); /* yajl's depth would wrap around */
  GEN_REFUSED(g, "generate JSON: map close: nothing is open");

  _cleanup_gen_ sr_json_gen_t h = new_gen();
  sr_json_array_open(h);
  sr_json_map_close(h);
  GEN_REFUSED(h, "map close: it closes another kind of value");
}

static void a_value_after_the_end_fails_the_document(void)
{
  _cleanup_gen_ sr_json_gen_t g = new_gen();
  sr_json_map_open(g);
  sr_json_map_close(g);
  sr_json_put_string(g, "late");
  GEN_REFUSED(g, "string: the document is already complete");
}

static void an_unfinished_or_empty_document_is_not_handed_out(void)
{
  _cleanup_gen_ sr_json_gen_t g = new_gen();
  sr_json_map_open(g);
  sr_json_put_key(g, "a");
  sr_json_array_open(g);
  GEN_REFUSED(g, "the document is not complete (2 values are open)");

  _cleanup_gen_ sr_json_gen_t e = new_gen();
  GEN_REFUSED(e, "the document is empty");

  _cleanup_gen_ sr_json_gen_t d = new_gen();
  for (int i = 0; i < 200; i++)
    sr_json_array_open(d);
  GEN_REFUSED(d, "array open: nested too deep");
}

static void the_first_failure_is_the_one_reported(void)
{
  _cleanup_gen_ sr_json_gen_t g = new_gen();
  sr_json_map_open(g);
  sr_json_put_bool(g, false); /* the first failure */
  sr_json_array_close(g);     /* would fail too: not even tried */
  sr_json_map_close(g);
  GEN_REFUSED(g, "boolean: a key must be a string");
}

static void a_kind_made_for_another_process_keeps_its_status(void)
{
  sr_error_t e = NULL;
  CHECK(sr_error_kinded(&e, SR_ERR_NOT_FOUND, 0, "exec: \"x\": executable file not found") == -1);
  CHECK(sr_error_kind(e) == SR_ERR_NOT_FOUND);
  CHECK(e->status == 0);
  sr_error_wrap(&e, "create");
  CHECK(sr_error_kind(e) == SR_ERR_NOT_FOUND);
  sr_error_free(&e);
  CHECK(sr_error_kinded(&e, SR_ERR_NOT_EXECUTABLE, EACCES, "exec") == -1);
  CHECK(sr_error_kind(e) == SR_ERR_NOT_EXECUTABLE && e->status == EACCES);
  sr_error_free(&e);
}

int main(void)
{
  RUN(a_config_error_names_its_field_as_the_policy_does);
  RUN(a_field_is_never_read_back_from_the_text);
  RUN(kind_and_field_survive_the_context_added_on_the_way_up);
  RUN(a_policy_refusal_is_of_kind_policy_and_names_the_field);
  RUN(a_whole_document_is_handed_out);
  RUN(a_value_where_a_key_belongs_fails_the_document);
  RUN(a_close_without_its_open_fails_the_document);
  RUN(a_value_after_the_end_fails_the_document);
  RUN(an_unfinished_or_empty_document_is_not_handed_out);
  RUN(the_first_failure_is_the_one_reported);
  RUN(a_kind_made_for_another_process_keeps_its_status);
  return unit_report();
}
