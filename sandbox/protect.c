/*
 * Protected paths: what stays read-only in every sandbox, whatever the policy lets a
 * command write around or inside it (docs/sandbox.md, "Protected paths"):
 *  - `.git`, `.codex` and `.agents` at the top of every writable root;
 *  - the git directory a `.git` file points to (`gitdir: X`, worktrees and submodules);
 *  - CODEX_HOME (config.toml, sessions, the thread index: what the daemon reads later).
 *
 * Rules, all decided in the parent before anything runs:
 *  1. A writable entry at or below a protected path is demoted to read-only (a writable root
 *     inside `.git` does not make `.git` writable). A denied entry still hides it.
 *  2. An existing protected path is bound read-only over itself; a missing one that the
 *     command could create gets a placeholder on its first missing component (mounts.c).
 *  3. Every ancestor of a protected path whose own parent is writable is pinned: bound over
 *     itself, so the command can neither rename nor replace it (a mountpoint is EBUSY) and
 *     cannot build a look-alike path elsewhere that the host would then trust.
 *  4. A protected name that is a symlink, and a gitdir or CODEX_HOME reached through a
 *     symlink in a writable place, are refused: the command could re-point the link.
 *  5. A writable root whose path crosses a symlink in a writable place and resolves outside
 *     every other writable root of the request is refused: a link planted by an earlier
 *     command must not widen a later one (for command/exec the request's own roots are what
 *     the client configured).
 *  6. CODEX_HOME, wherever the view shows it (read-only or writable places alike), is covered
 *     by a view of its own without the login file and the daemon's index (home_view.c): a
 *     command sees no credentials and cannot open the state files.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox_int.h"
#include "protocol/xmalloc.h"

/* Names kept read-only inside every writable root. */
static const char *const protect_names[] = {".git", ".codex", ".agents", NULL};

/* CODEX_HOME, lexically normal, or NULL (sandbox_set_home). */
static char *protect_home_path;

/* Protect CODEX_HOME (absolute; NULL: nothing) in every sandbox planned from now on. */
void
protect_set_home(const char *path)
{
	free(protect_home_path);
	protect_home_path = path != NULL ? policy_normalize(path) : NULL;
}

/* Whether path is a protected path or lies inside one. */
int
protect_is_protected(const struct plan_make *pl, const char *path)
{
	for (size_t i = 0; i < pl->nprot; i++)
		if (policy_path_within(path, pl->prot[i]))
			return 1;
	return 0;
}

/* Remember a protected path (canonical; stolen). */
static void
protect_add(struct plan_make *pl, char *path)
{
	for (size_t i = 0; i < pl->nprot; i++) {
		if (strcmp(pl->prot[i], path) == 0) {
			free(path);
			return;
		}
	}
	pl->prot = xrealloc(pl->prot, (pl->nprot + 1) * sizeof *pl->prot);
	pl->prot[pl->nprot++] = path;
}

/* The refusal of a read-only path that a swappable symlink leads to. */
static void
protect_refuse_link(struct plan_make *pl, const char *path, const char *link)
{
	pl->cause = xasprintf("sandbox setup failed: cannot enforce sandbox read-only path %s "
			      "because it crosses writable symlink %s",
		path, link);
}

/* Rule 5: writable roots that a planted symlink would lead outside; -1 with pl->cause. */
int
protect_root_links(struct plan_make *pl, const struct policy *p)
{
	const char *c;
	char *link;
	size_t i, j;
	int inside;

	for (i = 0; i < p->nentries; i++) {
		c = pl->cp.entries[i].path;
		if (p->entries[i].access != POLICY_WRITE || strcmp(c, p->entries[i].path) == 0)
			continue;
		if ((link = plan_writable_symlink(pl, p->entries[i].path)) == NULL)
			continue;
		/* Allowed when it stays within a root that resolves to itself. */
		for (j = 0, inside = 0; j < p->nentries && !inside; j++)
			inside = j != i && p->entries[j].access == POLICY_WRITE &&
				strcmp(pl->cp.entries[j].path, p->entries[j].path) == 0 &&
				policy_path_within(c, pl->cp.entries[j].path);
		if (!inside) {
			pl->cause = xasprintf(
				"sandbox setup failed: writable root %s resolves through symlink %s "
				"to %s, outside every configured writable root",
				p->entries[i].path, link, c);
			free(link);
			return -1;
		}
		free(link);
	}
	return 0;
}

/*
 * The git directory named by a `gitdir: X` file at gitfile (in dir), lexically normal, or
 * NULL when the file says nothing usable.
 */
static char *
protect_gitdir(const char *gitfile, const char *dir)
{
	char buf[PATH_MAX + 16], *s, *end, *target;
	ssize_t n;
	int fd;

	if ((fd = open(gitfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return NULL;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 8)
		return NULL;
	buf[n] = '\0';
	if (strncmp(buf, "gitdir:", 7) != 0)
		return NULL;
	for (s = buf + 7; *s == ' ' || *s == '\t'; s++)
		;
	for (end = s; *end != '\0' && *end != '\n' && *end != '\r'; end++)
		;
	*end = '\0';
	if (*s == '\0')
		return NULL;
	target = *s == '/' ? xstrdup(s) : xasprintf("%s/%s", dir, s);
	s = policy_normalize(target);
	free(target);
	return s;
}

/* Protect a path named by a file or the environment (rule 4); -1 with pl->cause. */
static int
protect_named(struct plan_make *pl, const char *path)
{
	char *link;
	int exists;

	if ((link = plan_writable_symlink(pl, path)) != NULL) {
		protect_refuse_link(pl, path, link);
		free(link);
		return -1;
	}
	protect_add(pl, plan_canon(path, &exists));
	return 0;
}

/* The protected names of writable root w (canonical, an existing directory). */
static int
protect_root(struct plan_make *pl, const char *w)
{
	struct stat st;
	char *s, *gd;
	int r = 0;

	for (const char *const *name = protect_names; *name != NULL && r == 0; name++) {
		s = plan_join(w, *name);
		if (lstat(s, &st) == 0 && S_ISLNK(st.st_mode)) {
			protect_refuse_link(pl, s, s);
			free(s);
			return -1;
		}
		/* A worktree or submodule: its git directory is the real metadata. */
		if (strcmp(*name, ".git") == 0 && lstat(s, &st) == 0 && S_ISREG(st.st_mode) &&
			(gd = protect_gitdir(s, w)) != NULL) {
			r = protect_named(pl, gd);
			free(gd);
		}
		protect_add(pl, s);
	}
	return r;
}

/* Decide the protected paths (rules 1 and 4); -1 with pl->cause. */
int
protect_decide(struct sandbox *sb, struct plan_make *pl)
{
	const struct sbx_path *u;
	int exists;

	for (size_t i = 0; i < pl->npaths; i++) {
		u = &pl->paths[i];
		if (!u->exists || !u->dir || !(u->flags & POLICY_E_PROTECT) ||
			plan_hidden(sb, u->path) || protect_is_protected(pl, u->path) ||
			policy_access(&pl->cp, u->path) != POLICY_WRITE)
			continue;
		if (protect_root(pl, u->path) != 0)
			return -1;
	}
	if (protect_home_path != NULL) {
		if (protect_named(pl, protect_home_path) != 0)
			return -1;
		pl->home = plan_canon(protect_home_path, &exists);
	}
	return 0;
}

/* Rule 1: writable entries at or below a protected path become read-only. */
void
protect_demote(struct plan_make *pl)
{
	struct policy_entry *e;

	for (size_t i = 0; i < pl->cp.nentries; i++) {
		e = &pl->cp.entries[i];
		if (e->access == POLICY_WRITE && protect_is_protected(pl, e->path))
			e->access = POLICY_READ;
	}
}

/* Rule 3: pin every ancestor of path (below "/") that sits in a writable directory. */
static int
protect_pins(struct sandbox *sb, struct plan_make *pl, const char *path)
{
	const char *s = path;
	char *a, *parent;
	int r = 0, w;

	while (r == 0 && (s = strchr(s + 1, '/')) != NULL) {
		a = xstrndup(path, (size_t)(s - path));
		parent = plan_dirname(a);
		w = policy_access(&pl->cp, parent) == POLICY_WRITE;
		if (w && !plan_hidden(sb, a) && !protect_is_protected(pl, a) &&
			plan_find_op(sb, a) == NULL)
			r = plan_add_op(sb, SBX_OP_RW, a, 1, NULL);
		free(parent);
		free(a);
	}
	return r;
}

/* Rules 2 and 3: an operation for each protected path the command could touch. */
int
protect_ops(struct sandbox *sb, struct plan_make *pl)
{
	const char *p;
	char *first, *parent, *at;
	struct stat st;
	int r = 0, exists, wparent, pdeny, home;
	struct sbx_op *op;

	for (size_t i = 0; i < pl->nprot && r == 0; i++) {
		p = pl->prot[i];
		if (plan_hidden(sb, p) || policy_access(&pl->cp, p) == POLICY_DENY)
			continue;
		first = plan_first_missing(p);
		exists = first == NULL;
		at = exists ? xstrdup(p) : first;
		parent = plan_dirname(at);
		wparent = policy_access(&pl->cp, parent) == POLICY_WRITE;
		pdeny = policy_access(&pl->cp, parent) == POLICY_DENY;
		free(parent);
		/* CODEX_HOME is covered wherever it is visible: its secrets are (rule 6). */
		home = exists && pl->home != NULL && strcmp(p, pl->home) == 0 &&
			stat(p, &st) == 0 && S_ISDIR(st.st_mode);
		if (wparent || home || (exists && policy_access(&pl->cp, p) == POLICY_WRITE)) {
			/* CODEX_HOME may already be bound as a root of a fresh view (plan.c). */
			if ((op = plan_find_op(sb, at)) == NULL ||
				(home && op->kind == SBX_OP_RO)) {
				r = plan_add_op(sb, SBX_OP_PROTECT, at,
					!exists || (stat(at, &st) == 0 && S_ISDIR(st.st_mode)),
					NULL);
				op = r == 0 ? &sb->ops[sb->nops - 1] : NULL;
				if (op != NULL)
					op->hide = home;
				/* Its parent in a fresh view is ours, not the host directory. */
				if (op != NULL && home && !sb->full_read && pdeny)
					op->check = 0;
			}
			if (r == 0)
				r = protect_pins(sb, pl, at);
		}
		free(at);
	}
	return r;
}

/*
 * Rule 6: operations on a secret or state file of CODEX_HOME (a profile denying auth.json) are
 * dropped: the view of CODEX_HOME has no such name to mount on, and it is hidden already.
 */
void
protect_prune(struct sandbox *sb, const struct plan_make *pl)
{
	struct sbx_op *op;
	char name[NAME_MAX + 1];
	const char *rel;
	size_t i, j, n;

	if (pl->home == NULL)
		return;
	for (i = 0, j = 0; i < sb->nops; i++) {
		op = &sb->ops[i];
		if (strcmp(op->path, pl->home) != 0 && policy_path_within(op->path, pl->home)) {
			rel = op->path + strlen(pl->home) + (strcmp(pl->home, "/") != 0);
			n = strcspn(rel, "/");
			if (n <= NAME_MAX) {
				memcpy(name, rel, n);
				name[n] = '\0';
				if (home_view_hidden(name)) {
					free(op->path);
					free(op->link);
					free(op->root);
					continue;
				}
			}
		}
		sb->ops[j++] = *op;
	}
	sb->nops = j;
}
