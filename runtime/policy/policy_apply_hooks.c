/* 13. Hooks: a hook runs on the host as root, outside every namespace of the container, so
 * only what the profile lists runs (hooks.allowedPaths: the file a hook resolves to, and
 * optionally its argv), never an interpreter or launcher by its path alone, and with an
 * environment that cannot make the program load or run other code.  Pure: what the file is
 * (trusted, which entries name it) comes in as facts. */
#include "build.h"

#include "policy_apply_internal.h"

#include <stdio.h>
#include <string.h>

static bool has_prefix(const char *s, const char *p)
{
  return strncmp(s, p, strlen(p)) == 0;
}

/* Programs that run whatever their arguments name: shells, language interpreters, env-style
 * launchers, multiplexers.  By the base name of the file a hook resolves to. */
bool sr_policy_apply_hooks_is_interpreter(const char *path)
{
  static const char *const exact[] = {
      "sh",     "bash",    "dash",    "ash",     "zsh",     "ksh",   "mksh",    "pdksh",
      "csh",    "tcsh",    "fish",    "rbash",   "busybox", "toybox", "env",    "nice",
      "nohup",  "timeout", "stdbuf",  "setsid",  "chroot",  "sudo",  "su",      "runuser",
      "doas",   "xargs",   "time",    "strace",  "ltrace",  "gdb",   "flock",   "ionice",
      "taskset", "unshare", "nsenter", "setpriv", "capsh",  "chrt",  "prlimit", "script",
      "expect", "awk",     "gawk",    "mawk",    "nawk",    "sed",   "find",    "node",
      "nodejs", "java",    "jshell",  "R",       "Rscript", "pwsh",  "guile",   "deno",
      "bun",    "julia",   "erl",     "escript", "elixir",  "sbcl",  "racket",  "qjs",
      "ld.so",  "watch",   "parallel", "make",   "tclsh",   "wish",  NULL};
  static const char *const prefixes[] = {"python", "pypy",    "perl",   "ruby", "jruby",
                                         "php",    "lua",     "tclsh",  "wish", "ld-linux",
                                         "ld-musl", "node",   "ocaml",  NULL};
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  for (const char *const *e = exact; *e; e++)
    if (strcmp(base, *e) == 0)
      return true;
  for (const char *const *p = prefixes; *p; p++)
    if (has_prefix(base, *p))
      return true;
  return false;
}

static bool arg_matches(const char *pattern, const char *arg)
{
  size_t n = strlen(pattern);
  if (n && pattern[n - 1] == '*')
    return strncmp(arg, pattern, n - 1) == 0;
  return strcmp(arg, pattern) == 0;
}

static bool args_match(const struct sr_policy_hook_allow *e, const struct sr_hook *h)
{
  if (!e->has_args)
    return true;
  if (e->n_args != h->n_args)
    return false;
  for (size_t i = 0; i < h->n_args; i++)
    if (!arg_matches(e->args[i], h->args[i]))
      return false;
  return true;
}

/* Environment variables that make a program (the dynamic loader, libc, a shell, an
 * interpreter) load or run code or configuration other than its own. */
static bool env_name_denied(const char *name, size_t n)
{
  static const char *const exact[] = {
      "GCONV_PATH",       "GETCONF_DIR",     "HOSTALIASES",   "LOCALDOMAIN",  "LOCPATH",
      "NLSPATH",          "RESOLV_HOST_CONF", "RES_OPTIONS",  "TZDIR",        "BASH_ENV",
      "ENV",              "IFS",             "SHELLOPTS",     "BASHOPTS",     "PS4",
      "CDPATH",           "GLOBIGNORE",      "PERLLIB",       "NODE_OPTIONS", "NODE_PATH",
      "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",  "JDK_JAVA_OPTIONS", "CLASSPATH", "OPENSSL_CONF",
      "OPENSSL_ENGINES",  "OPENSSL_MODULES", "SSLKEYLOGFILE", "TCLLIBPATH",   "TERMINFO",
      "TERMINFO_DIRS",    "ZDOTDIR",         "INPUTRC",
      "EDITOR",           "VISUAL",          "PAGER",         "BROWSER",      "SHELL",
      NULL};
  static const char *const prefixes[] = {"LD_",   "PYTHON", "PERL5", "PERL_", "RUBY",
                                         "GEM_",  "BASH_FUNC_", "NODE_", "LUA_", "MALLOC_",
                                         "GLIBC_", "DYLD_", "GIT_",  "GODEBUG", NULL};
  for (const char *const *e = exact; *e; e++)
    if (strlen(*e) == n && strncmp(name, *e, n) == 0)
      return true;
  for (const char *const *p = prefixes; *p; p++)
    if (n >= strlen(*p) && strncmp(name, *p, strlen(*p)) == 0)
      return true;
  return false;
}

static bool mentions(const char *value, const char *dir)
{
  return dir && dir[0] && strcmp(dir, "/") != 0 && strstr(value, dir) != NULL;
}

/* A PATH with an empty or relative component searches the hook's working directory (the
 * engine's, often the bundle). */
static bool relative_search_path(const char *value)
{
  for (const char *s = value;;) {
    const char *e = strchrnul(s, ':');
    if (e == s || s[0] != '/')
      return true;
    if (*e == '\0')
      return false;
    s = e + 1;
  }
}

/* The names every allowed hook may get: what a program needs to find its locale, its home and
 * its programs.  Anything else only as its allow entry's "env" lists it. */
static const char *const env_allowed[] = {"PATH", "HOME", "LANG",  "LANGUAGE", "LC_*", "TERM",
                                          "TZ",   "USER", "LOGNAME", "HOSTNAME", NULL};

static bool name_matches(const char *pattern, const char *name, size_t n)
{
  size_t p = strlen(pattern);
  if (p && pattern[p - 1] == '*')
    return n >= p - 1 && strncmp(name, pattern, p - 1) == 0;
  return p == n && strncmp(name, pattern, n) == 0;
}

static bool env_name_allowed(const char *name, size_t n, const struct sr_policy_hook_allow *e)
{
  for (const char *const *a = env_allowed; *a; a++)
    if (name_matches(*a, name, n))
      return true;
  for (size_t i = 0; e && i < e->n_env; i++)
    if (name_matches(e->env[i], name, n))
      return true;
  return false;
}

/* Why `var` ("NAME=value") does not reach the hook; NULL: it does.  e: the entry that allows
 * the hook (NULL: none). */
static const char *env_refused(const char *var, const struct sr_policy_facts *facts,
                               const struct sr_policy_hook_allow *e)
{
  const char *eq = strchr(var, '=');
  if (eq == NULL || eq == var)
    return "not NAME=value";
  size_t n = (size_t)(eq - var);
  for (size_t i = 0; i < n; i++) {
    char ch = var[i];
    if (!(ch == '_' || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
          (i > 0 && ch >= '0' && ch <= '9')))
      return "not a plain name";
  }
  /* Never, even where an entry lists it. */
  if (env_name_denied(var, n))
    return "makes a program load or run other code";
  if (!env_name_allowed(var, n, e))
    return "not an allowed name";
  const char *value = eq + 1;
  /* The image is the tenant's: no value may lead the hook into it, by any name. */
  if (strstr(value, "/proc/"))
    return "points into /proc";
  for (size_t d = 0; facts && d < SR_POLICY_TENANT_DIRS; d++)
    if (mentions(value, facts->tenant_dirs[d]))
      return "points into the bundle or the rootfs";
  if (n == 4 && strncmp(var, "PATH", 4) == 0 && relative_search_path(value))
    return "searches a relative directory";
  return NULL;
}

static int filter_env(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                      const char *kind, size_t i, struct sr_hook *h,
                      const struct sr_policy_hook_allow *e, size_t entry)
{
  if (h->n_env == 0)
    return 0;
  char **kept = sr_arena_array(x->a, h->n_env + 1, sizeof(char *));
  if (kept == NULL)
    return sr_policy_apply_oom(x);
  size_t n = 0;
  char *dropped = NULL;
  for (size_t j = 0; j < h->n_env; j++) {
    const char *why = env_refused(h->env[j], facts, e);
    if (why == NULL) {
      kept[n++] = h->env[j];
      continue;
    }
    const char *eq = strchr(h->env[j], '=');
    int len = eq ? (int)(eq - h->env[j]) : (int)strlen(h->env[j]);
    dropped = dropped ? P("%s; %.*s (%s)", dropped, len, h->env[j], why)
                      : P("%.*s (%s)", len, h->env[j], why);
    if (dropped == NULL)
      return sr_policy_apply_oom(x);
  }
  if (dropped == NULL)
    return 0;
  kept[n] = NULL;
  int r = sr_policy_apply_change(
      x, P("hooks.%s[%zu].env", kind, i), sr_policy_render_text_strv(x->a, h->env, h->n_env),
      sr_policy_render_text_strv(x->a, kept, n),
      e ? P("dropped %s: a hook runs as host root (it may get PATH, HOME, "
            "LANG, LANGUAGE, LC_*, TERM, TZ, USER, LOGNAME, HOSTNAME and the "
            "names in profiles.%s.hooks.allowedPaths[%zu].env)",
            dropped, x->name, entry)
        : P("dropped %s: a hook runs as host root", dropped));
  if (r > 0) {
    h->env = kept;
    h->n_env = n;
  }
  return r < 0 ? -1 : 0;
}

static bool entry_names(const struct sr_policy_profile *p, size_t j,
                        const struct sr_policy_hook_fact *f, const char *path)
{
  if (f && f->matches)
    return f->matches[j];
  const char *file = f && f->resolved ? f->resolved : path;
  return strcmp(p->hooks_allowed[j].path, file) == 0;
}

int sr_policy_apply_hooks_check_one(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                    enum sr_hook_kind k, size_t i, struct sr_hook *h)
{
  const char *name = x->name, *kind = sr_config_hook_name(k);
  const struct sr_policy_hook_fact *f = facts && facts->hooks[k] ? &facts->hooks[k][i] : NULL;
  char *field = P("hooks.%s[%zu].path", kind, i);
  char *asked = sr_policy_render_text_str(x->a, h->path);
  /* startContainer runs in the container, a file of its own root: nothing of the host's to
   * judge, and it runs before the container's seccomp filter and capability drop. */
  bool in_container = k == SR_HOOK_START_CONTAINER;
  if (!in_container && (f == NULL || !f->trusted_path)) {
    TRY(sr_policy_apply_refuse(
        x, field, asked,
        "hooks.%s[%zu].path: \"%s\" is not on a trusted path (a root-owned file in "
        "root-owned directories no other user can write, outside the bundle and "
        "the rootfs)%s%s",
        kind, i, h->path, f && f->untrusted ? ": " : "", f && f->untrusted ? f->untrusted : ""));
    return filter_env(x, facts, kind, i, h, NULL, 0);
  }
  const char *file = !in_container && f && f->resolved ? f->resolved : h->path;
  bool interpreter = sr_policy_apply_hooks_is_interpreter(file) ||
                     sr_policy_apply_hooks_is_interpreter(h->path) || (f && f->interpreter);
  bool named = false;
  for (size_t j = 0; j < x->p->n_hooks_allowed; j++) {
    const struct sr_policy_hook_allow *e = &x->p->hooks_allowed[j];
    if (!(in_container ? strcmp(e->path, h->path) == 0 : entry_names(x->p, j, f, h->path)))
      continue;
    named = true;
    /* An interpreter runs whatever its arguments say: its path alone allows nothing. */
    if ((interpreter && !e->has_args) || !args_match(e, h))
      continue;
    TRY(sr_policy_apply_allow(
        x, field, asked,
        P("allowed by profiles.%s.hooks.allowedPaths[%zu]%s", name, j,
          file != h->path && strcmp(file, h->path) ? P(" (it is %s)", file) : "")));
    return filter_env(x, facts, kind, i, h, e, j);
  }
  const char *file_note = file != h->path && strcmp(file, h->path) ? P(" (the file %s)", file) : "";
  if (named && interpreter)
    TRY(sr_policy_apply_refuse(
        x, field, asked,
        "hooks.%s[%zu].path: \"%s\"%s is an interpreter or launcher, which runs "
        "whatever its arguments say: an entry of profiles.%s.hooks.allowedPaths "
        "allows it only with \"args\" patterns that match this hook's args",
        kind, i, h->path, file_note, name));
  else if (named)
    TRY(sr_policy_apply_refuse(
        x, field, asked,
        "hooks.%s[%zu].path: \"%s\"%s: its args are not allowed by profile \"%s\" "
        "(the \"args\" of its entries in profiles.%s.hooks.allowedPaths)",
        kind, i, h->path, file_note, name, name));
  else
    TRY(sr_policy_apply_refuse(
        x, field, asked,
        "hooks.%s[%zu].path: \"%s\"%s is not allowed by profile \"%s\" (to allow "
        "it, list the file in profiles.%s.hooks.allowedPaths, as a path or as "
        "{\"path\": ..., \"args\": [...]} to constrain its arguments)%s",
        kind, i, h->path, file_note, name, name,
        in_container ? "; a startContainer hook is a file of the container, "
                       "named as the config names it"
                     : ""));
  return filter_env(x, facts, kind, i, h, NULL, 0);
}

int sr_policy_apply_hooks_check(struct sr_pa_ctx *x, const struct sr_policy_facts *facts,
                                struct sr_hooks *h)
{
  for (int k = 0; k < SR_HOOK_COUNT; k++)
    for (size_t i = 0; i < h->n[k]; i++)
      TRY(sr_policy_apply_hooks_check_one(x, facts, (enum sr_hook_kind)k, i, &h->list[k][i]));
  return 0;
}

int sr_policy_apply_hooks_check_hook(const struct sr_policy_profile *p, struct sr_arena *a,
                                     const struct sr_policy_facts *facts, enum sr_hook_kind k,
                                     size_t i, struct sr_hook *h, struct sr_decisions *out,
                                     sr_error_t *err)
{
  struct sr_pa_ctx ctx;
  sr_policy_apply_ctx_init(&ctx, p, a, out, err);
  return sr_policy_apply_hooks_check_one(&ctx, facts, k, i, h);
}
