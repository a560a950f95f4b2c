/*
 * The texts of a shell snapshot (shell_snapshot.h): the script the login shell runs, the
 * file made from what it prints, and the wrapper a later call runs instead of `bash -lc`.
 *
 * The capture prints three sections, each ended by a NUL byte (no shell value can hold one,
 * so the profile's own output cannot fake an end): options and functions, aliases, exported
 * variables. It counts with shell builtins only: a fork for awk or wc in the login shell is
 * time the thread's first call may wait for.
 */
#include <string.h>

#include "shell_snapshot.h"
#include "protocol/xmalloc.h"

#define SNAP_MARKER "# Snapshot file"

const char shell_snapshot_capture_script[] =
	"if [ -z \"${BASH_ENV-}\" ] && [ -n \"${HOME-}\" ] && [ -r \"$HOME/.bashrc\" ]; then\n"
	"  . \"$HOME/.bashrc\"\n"
	"fi\n"
	"echo '" SNAP_MARKER "'\n"
	"echo '# Unset all aliases to avoid conflicts with functions'\n"
	"echo 'unalias -a 2>/dev/null || true'\n"
	"shopt -p || true\n"
	"echo '# Functions'\n"
	"declare -f\n"
	"echo ''\n"
	"__snap_n=0\n"
	"__snap_on=\n"
	"while read -r __snap_k __snap_v; do\n"
	"  if [ \"$__snap_v\" = on ]; then\n"
	"    __snap_on=\"$__snap_on $__snap_k\"\n"
	"    __snap_n=$((__snap_n + 1))\n"
	"  fi\n"
	"done < <(set -o)\n"
	"echo \"# setopts $__snap_n\"\n"
	"for __snap_k in $__snap_on; do printf 'set -o %s\\n' \"$__snap_k\"; done\n"
	"echo ''\n"
	"printf '\\0'\n"
	"__snap_n=0\n"
	"while IFS= read -r __snap_k; do __snap_n=$((__snap_n + 1)); done < <(\\alias -p)\n"
	"echo \"# aliases $__snap_n\"\n"
	"\\alias -p\n"
	"echo ''\n"
	"printf '\\0'\n"
	"while IFS= read -r __snap_k; do\n"
	"  case \"$__snap_k\" in\n"
	"    ''|[0-9]*|*[!A-Za-z0-9_]*|PWD|OLDPWD) continue ;;\n"
	"  esac\n"
	"  declare -xp \"$__snap_k\" 2>/dev/null || true\n"
	"done < <(compgen -e)\n"
	"printf '\\0'\n";

int
shell_snapshot_text(const char *out, size_t n, struct buf *file)
{
	const char *p = memmem(out, n, SNAP_MARKER, sizeof SNAP_MARKER - 1), *end = out + n;
	const char *sec[3];
	size_t len[3];

	if (p == NULL)
		return -1; /* the profile's own output before the marker is dropped, as upstream */
	for (int i = 0; i < 3; i++) {
		const char *z = memchr(p, '\0', (size_t)(end - p));

		if (z == NULL)
			return -1; /* cut short: the shell died or the output hit its ceiling */
		sec[i] = p;
		len[i] = (size_t)(z - p);
		p = z + 1;
	}
	if (buf_add(file, sec[0], len[0]) != 0 || buf_add(file, sec[1], len[1]) != 0 ||
		buf_adds(file, "# exports (native declarations)\n") != 0 ||
		buf_add(file, sec[2], len[2]) != 0)
		return -1;
	return 0;
}

/* s inside single quotes ('\'' for each quote). */
static int
snap_quoted(struct buf *b, const char *s)
{
	int r = buf_addc(b, '\'');

	for (const char *q; r == 0 && (q = strchr(s, '\'')) != NULL; s = q + 1)
		if ((r = buf_add(b, s, (size_t)(q - s))) == 0)
			r = buf_adds(b, "'\"'\"'");
	if (r == 0)
		r = buf_adds(b, s);
	return r == 0 ? buf_addc(b, '\'') : r;
}

/* A name the wrapper may write into its text unquoted. */
static int
snap_name_ok(const char *s)
{
	if (s == NULL || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
		return 0;
	return s[strspn(s, "_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")] ==
		'\0';
}

char *
shell_snapshot_wrapper(
	const char *path, const char *const *argv, size_t argc, const char *const *keep)
{
	struct buf b;
	int r = 0;

	buf_init(&b, 32u << 20);
	/* What the call's environment sets on purpose is saved before the file is sourced... */
	for (size_t i = 0; r == 0 && keep != NULL && keep[i] != NULL; i++)
		if (snap_name_ok(keep[i]))
			r = buf_printf(&b,
				"__CODEX_SNAPSHOT_OVERRIDE_SET_%zu=\"${%s+x}\"\n"
				"__CODEX_SNAPSHOT_OVERRIDE_%zu=\"${%s-}\"\n",
				i, keep[i], i, keep[i]);
	/* ...a file that fails half-way still gives what it set before the failure... */
	if (r == 0 && (r = buf_adds(&b, "\nif . ")) == 0 && (r = snap_quoted(&b, path)) == 0)
		r = buf_adds(&b, " >/dev/null 2>&1; then :; fi\n\n");
	/* ...and the saved values win over the file's. */
	for (size_t i = 0; r == 0 && keep != NULL && keep[i] != NULL; i++)
		if (snap_name_ok(keep[i]))
			r = buf_printf(&b,
				"if [ -n \"${__CODEX_SNAPSHOT_OVERRIDE_SET_%zu}\" ]; then export "
				"%s=\"${__CODEX_SNAPSHOT_OVERRIDE_%zu}\"; else unset %s; fi\n"
				"unset __CODEX_SNAPSHOT_OVERRIDE_SET_%zu __CODEX_SNAPSHOT_OVERRIDE_%zu\n",
				i, keep[i], i, keep[i], i, i);
	/* exec: the call's own shell starts from the environment, as a fresh -c shell. */
	if (r == 0 && (r = buf_adds(&b, "\nexec ")) == 0 && (r = snap_quoted(&b, argv[0])) == 0 &&
		(r = buf_adds(&b, " -c ")) == 0)
		r = snap_quoted(&b, argv[2]);
	for (size_t i = 3; r == 0 && i < argc; i++)
		if ((r = buf_addc(&b, ' ')) == 0)
			r = snap_quoted(&b, argv[i]);
	if (r != 0) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b, NULL);
}

char *
shell_snapshot_check_script(const char *path)
{
	struct buf b;

	buf_init(&b, 1u << 20);
	if (buf_adds(&b, "set -e; . ") != 0 || snap_quoted(&b, path) != 0 ||
		buf_adds(
			&b, " >/dev/null; if [ -x /usr/bin/env ]; then exec /usr/bin/env -0; fi") !=
			0) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b, NULL);
}

char **
shell_snapshot_env(const char *out, size_t n, const char *shell)
{
	size_t count = 0, size, k = 0;
	const char *p, *end = out + n;
	char **env, *text;

	if (n == 0 || out[n - 1] != '\0')
		return NULL; /* no dump (no env), or cut short */
	for (p = out; p < end; p += strlen(p) + 1) {
		if (p[0] == '=' || strchr(p, '=') == NULL || strncmp(p, "SHELLOPTS=", 10) == 0)
			return NULL;
		count++;
	}
	/* one block: the pointers, then the texts (`_` replaced by its own entry) */
	size = (count + 2) * sizeof *env + n + strlen(shell) + 3;
	env = xmalloc(size);
	text = (char *)(env + count + 2);
	for (p = out; p < end; p += strlen(p) + 1) {
		if (strncmp(p, "_=", 2) == 0)
			continue;
		env[k++] = text;
		memcpy(text, p, strlen(p) + 1);
		text += strlen(p) + 1;
	}
	/* bash's exec sets `_` to the path it runs (the check ran env, a call runs shell) */
	env[k++] = text;
	memcpy(text, "_=", 2);
	memcpy(text + 2, shell, strlen(shell) + 1);
	env[k] = NULL;
	return env;
}
