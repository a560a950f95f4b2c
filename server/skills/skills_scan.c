/*
 * Discovery (skills.h): the roots of a cwd and the breadth-first walk of each, with upstream
 * 0.169's limits (6 levels, 2,000 folders a root) and order. Runs on any thread: it touches no
 * global state, so skills/list runs it on the fs worker pool.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/xmalloc.h"
#include "skills_int.h"

#define SCAN_DEPTH_MAX 6
#define SCAN_DIRS_MAX  2000
#define SKILL_FILE_MAX (1u << 20) /* bytes of a SKILL.md read to parse it */

struct root {
	char *path; /* as built */
	enum skill_scope scope;
};

struct roots {
	struct root *v;
	size_t n;
};

static void
roots_add(struct roots *r, char *path /* stolen */, enum skill_scope scope)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].path, path) == 0) {
			free(path);
			return;
		}
	r->v = xrealloc(r->v, (r->n + 1) * sizeof *r->v);
	r->v[r->n].path = path;
	r->v[r->n++].scope = scope;
}

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* "dir/name" with "/" kept single. */
static char *
path_join(const char *dir, const char *name)
{
	return xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
}

/* The real path of path, or a copy of it when it cannot be resolved. */
static char *
real_or_same(const char *path)
{
	char *r = realpath(path, NULL);

	return r != NULL ? r : xstrdup(path);
}

/* The repository root above cwd: the nearest ancestor holding .git, else cwd itself. */
static size_t
repo_root_len(const char *cwd)
{
	size_t len = strlen(cwd);
	char *dir = xstrdup(cwd), *git;

	for (;;) {
		git = path_join(dir, ".git");
		if (exists(git)) {
			free(git);
			len = strlen(dir);
			break;
		}
		free(git);
		char *slash = strrchr(dir, '/');
		if (slash == NULL || strcmp(dir, "/") == 0)
			break;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(dir);
	return len;
}

/* The roots of cwd, in upstream's order (skills.h); all: those that do not exist too. */
static void
scan_roots(const struct skills_env *env, const char *cwd, struct roots *r, int all)
{
	char *dotcodex = path_join(cwd, ".codex"), *real_dc, *real_home, *dir, *p;
	size_t rl = repo_root_len(cwd), len = strlen(cwd);

	/* The cwd's own .codex folder is a project config layer: its skills are repo skills. */
	real_dc = realpath(dotcodex, NULL);
	real_home = realpath(env->codex_home, NULL);
	if ((all && real_dc == NULL) ||
		(real_dc != NULL && is_dir(real_dc) &&
			(real_home == NULL || strcmp(real_dc, real_home) != 0)))
		roots_add(r, path_join(dotcodex, "skills"), SKILL_REPO);
	free(real_dc);
	free(real_home);
	free(dotcodex);
	roots_add(r, path_join(env->codex_home, "skills"), SKILL_USER);
	if (env->home != NULL && env->home[0] == '/')
		roots_add(r, path_join(env->home, ".agents/skills"), SKILL_USER);
	roots_add(r, path_join(env->codex_home, "skills/.system"), SKILL_SYSTEM);
	roots_add(r, xstrdup("/etc/codex/skills"), SKILL_ADMIN);
	for (size_t i = 0; i < env->nextra; i++)
		roots_add(r, xstrdup(env->extra[i]), SKILL_USER);
	/* From the repository's root down to the cwd, each folder's .agents/skills. */
	for (size_t i = rl;;) {
		dir = xstrndup(cwd, i > 0 ? i : 1);
		p = path_join(dir, ".agents/skills");
		free(dir);
		if (all || is_dir(p))
			roots_add(r, p, SKILL_REPO);
		else
			free(p);
		if (i >= len)
			break;
		for (i++; i < len && cwd[i] != '/'; i++)
			;
	}
}

struct walk {
	char **queue;
	unsigned *depth;
	size_t head, n, cap;
	char **visited;
	size_t nvisited;
	int truncated;
};

static int
walk_seen(struct walk *w, const char *path)
{
	for (size_t i = 0; i < w->nvisited; i++)
		if (strcmp(w->visited[i], path) == 0)
			return 1;
	return 0;
}

/* Queue a folder (its real path) at depth, within the limits; path is stolen. */
static void
walk_enqueue(struct walk *w, char *path, unsigned depth)
{
	if (depth > SCAN_DEPTH_MAX) {
		free(path);
		return;
	}
	if (w->nvisited >= SCAN_DIRS_MAX) {
		w->truncated = 1;
		free(path);
		return;
	}
	if (walk_seen(w, path)) {
		free(path);
		return;
	}
	w->visited = xrealloc(w->visited, (w->nvisited + 1) * sizeof *w->visited);
	w->visited[w->nvisited++] = xstrdup(path);
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		w->queue = xrealloc(w->queue, w->cap * sizeof *w->queue);
		w->depth = xrealloc(w->depth, w->cap * sizeof *w->depth);
	}
	w->queue[w->n] = path;
	w->depth[w->n++] = depth;
}

/* The first SKILL_FILE_MAX bytes of a file (heap), or NULL with errno. */
static char *
read_text(const char *path)
{
	char *text = xmalloc(SKILL_FILE_MAX + 1);
	size_t got = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd == -1) {
		free(text);
		return NULL;
	}
	while (got < SKILL_FILE_MAX && (n = read(fd, text + got, SKILL_FILE_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	text[got] = '\0';
	return text;
}

static void
outcome_error(struct skills_outcome *o, const char *path, const char *message)
{
	json_array_append_new(o->errors, json_pack("{s:s, s:s}", "path", path, "message", message));
}

/* Parse one SKILL.md into the outcome (a skill, or an error unless the root is the system's). */
static void
scan_file(struct skills_outcome *o, const char *path, enum skill_scope scope, size_t root)
{
	struct skill sk = {0};
	char *text, *cause = NULL, *msg;

	if ((text = read_text(path)) == NULL) {
		msg = xasprintf("failed to read file: %s", strerror(errno));
		if (scope != SKILL_SYSTEM)
			outcome_error(o, path, msg);
		free(msg);
		return;
	}
	sk.path = real_or_same(path);
	if (skill_parse(text, path, &sk, &cause) != 0) {
		if (scope != SKILL_SYSTEM)
			outcome_error(o, path, cause);
		free(cause);
		free(sk.name);
		free(sk.description);
		free(sk.short_description);
		free(sk.path);
		free(text);
		return;
	}
	free(text);
	skill_parse_metadata(&sk);
	sk.scope = scope;
	sk.root = root;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->v[i].path, sk.path) == 0) { /* reached before, from another root */
			free(sk.name);
			free(sk.description);
			free(sk.short_description);
			free(sk.path);
			json_decref(sk.interface);
			json_decref(sk.dependencies);
			return;
		}
	o->v = xrealloc(o->v, (o->n + 1) * sizeof *o->v);
	o->v[o->n++] = sk;
}

/* Walk one root breadth first. */
static void
scan_root(struct skills_outcome *o, const char *root, enum skill_scope scope, size_t idx)
{
	struct walk w = {0};
	int follow = scope != SKILL_SYSTEM;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (!is_dir(root))
		return;
	walk_enqueue(&w, real_or_same(root), 0);
	for (; w.head < w.n; w.head++) {
		char *dir = w.queue[w.head];
		unsigned depth = w.depth[w.head];

		if ((d = opendir(dir)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			char *path;

			if (de->d_name[0] == '.')
				continue;
			path = path_join(dir, de->d_name);
			if (lstat(path, &st) != 0) {
				free(path);
				continue;
			}
			if (S_ISLNK(st.st_mode)) {
				/* Links to folders are followed (not in the system root); to files
				 * not. */
				if (follow && is_dir(path))
					walk_enqueue(&w, real_or_same(path), depth + 1);
			} else if (S_ISDIR(st.st_mode)) {
				walk_enqueue(&w, real_or_same(path), depth + 1);
			} else if (S_ISREG(st.st_mode) && strcmp(de->d_name, "SKILL.md") == 0) {
				scan_file(o, path, scope, idx);
			}
			free(path);
		}
		closedir(d);
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.queue[i]);
	for (size_t i = 0; i < w.nvisited; i++)
		free(w.visited[i]);
	free(w.queue);
	free(w.depth);
	free(w.visited);
}

static int
skill_cmp(const void *a, const void *b)
{
	const struct skill *x = a, *y = b;
	int c;

	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return strcmp(x->path, y->path);
}

static int
error_cmp(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;

	return strcmp(json_string_value(json_object_get(x, "path")),
		json_string_value(json_object_get(y, "path")));
}

struct skills_outcome *
skills_scan(const struct skills_env *env, const char *cwd)
{
	struct skills_outcome *o = xcalloc(1, sizeof *o);
	struct roots r = {0};
	size_t *map, nerr;
	json_t **errs, *v;
	int *used;

	o->errors = json_array();
	scan_roots(env, cwd, &r, 0);
	for (size_t i = 0; i < r.n; i++)
		scan_root(o, r.v[i].path, r.v[i].scope, i);
	/* Keep the roots that gave a skill, their real paths, renumbered. */
	used = xcalloc(r.n + 1, sizeof *used);
	map = xcalloc(r.n + 1, sizeof *map);
	for (size_t i = 0; i < o->n; i++)
		used[o->v[i].root] = 1;
	for (size_t i = 0; i < r.n; i++)
		if (used[i]) {
			o->roots = xrealloc(o->roots, (o->nroots + 1) * sizeof *o->roots);
			map[i] = o->nroots;
			o->roots[o->nroots++] = real_or_same(r.v[i].path);
		}
	for (size_t i = 0; i < o->n; i++)
		o->v[i].root = map[o->v[i].root];
	if (o->n > 1) /* qsort(NULL, 0, ...) is undefined (UBSan) */
		qsort(o->v, o->n, sizeof *o->v, skill_cmp);
	nerr = json_array_size(o->errors);
	errs = xcalloc(nerr + 1, sizeof *errs);
	for (size_t i = 0; i < nerr; i++)
		errs[i] = json_incref(json_array_get(o->errors, i));
	qsort(errs, nerr, sizeof *errs, error_cmp);
	json_array_clear(o->errors);
	for (size_t i = 0; i < nerr; i++)
		json_array_append_new(o->errors, errs[i]);
	(void)v;
	free(errs);
	free(used);
	free(map);
	for (size_t i = 0; i < r.n; i++)
		free(r.v[i].path);
	free(r.v);
	return o;
}

char **
skills_roots(const struct skills_env *env, const char *cwd, size_t *n)
{
	struct roots r = {0};
	char **v;
	size_t k = 0;

	scan_roots(env, cwd, &r, 1);
	v = xcalloc(r.n + 1, sizeof *v);
	for (size_t i = 0; i < r.n; i++)
		if (r.v[i].scope == SKILL_SYSTEM) /* written by Codex itself: not watched */
			free(r.v[i].path);
		else
			v[k++] = r.v[i].path;
	free(r.v);
	*n = k;
	return v;
}

void
skills_outcome_free(struct skills_outcome *o)
{
	if (o == NULL)
		return;
	for (size_t i = 0; i < o->n; i++) {
		free(o->v[i].name);
		free(o->v[i].description);
		free(o->v[i].short_description);
		free(o->v[i].path);
		json_decref(o->v[i].interface);
		json_decref(o->v[i].dependencies);
	}
	for (size_t i = 0; i < o->nroots; i++)
		free(o->roots[i]);
	free(o->roots);
	free(o->v);
	json_decref(o->errors);
	skills_entry_text_free(o->text);
	free(o);
}
