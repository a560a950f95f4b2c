/*
 * The sandbox plan, made in the parent: the effective policy's paths made canonical and
 * turned into an ordered list of mount operations, and the writable roots for Landlock. The
 * protected paths (protect.c) are decided first; the child (init.c, mounts.c) follows the
 * plan with syscalls only.
 *
 * Planning rules (upstream's bwrap.rs, redone with mounts):
 *  - Paths are canonical (realpath); a missing path is canonical up to its deepest existing
 *    ancestor. Missing read or write roots are skipped; a missing denied path inside a
 *    writable area gets a placeholder so it cannot be created.
 *  - A read-only or denied path reached through a symlink that lives in a writable area is
 *    refused (the command could swap the link): "cannot enforce sandbox read-only path".
 *  - An operation is emitted only where the access changes from the enclosing path's, and
 *    operations are applied shallowest first, so the most specific entry wins, as in the
 *    resolution rule.
 *  - Protected paths (protect.c) stay read-only whatever lies inside them: writable entries
 *    at or below one are demoted to read before any operation is made.
 *  - /dev and /proc are synthesized: entries below them are ignored, except a writable
 *    /dev/shm, which is the host's.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_int.h"
#include "protocol/xmalloc.h"

/* The parent directory of a normal path ("/" for "/x"). */
char *
plan_dirname(const char *path)
{
	const char *s = strrchr(path, '/');

	return s == path ? xstrdup("/") : xstrndup(path, (size_t)(s - path));
}

/* path + "/" + name. */
char *
plan_join(const char *path, const char *name)
{
	return strcmp(path, "/") == 0 ? xasprintf("/%s", name) : xasprintf("%s/%s", path, name);
}

/*
 * Canonical form of a normal path: its realpath, or, when it is missing, the realpath of
 * its deepest existing ancestor followed by the rest. *exists says which.
 */
char *
plan_canon(const char *path, int *exists)
{
	char *r, *head, *full;
	size_t cut;

	*exists = 0;
	if ((r = realpath(path, NULL)) != NULL) {
		*exists = 1;
		return r;
	}
	if (errno != ENOENT && errno != ENOTDIR)
		return xstrdup(path);
	head = xstrdup(path);
	for (;;) {
		cut = (size_t)(strrchr(head, '/') - head);
		head[cut == 0 ? 1 : cut] = '\0';
		if ((r = realpath(head, NULL)) != NULL || cut == 0)
			break;
	}
	if (r == NULL)
		full = xstrdup(path);
	else
		full = xasprintf("%s/%s", r, path + (cut == 0 ? 1 : cut + 1));
	free(r);
	free(head);
	r = policy_normalize(full);
	free(full);
	return r != NULL ? r : xstrdup(path);
}

/*
 * The first symlink on a normal path whose directory is writable in the plan's policy (the
 * command could have planted or could swap it), or NULL. Symlinks in read-only places (an
 * administrator's /home -> /data/home) are trusted.
 */
char *
plan_writable_symlink(const struct plan_make *pl, const char *path)
{
	struct stat st;
	const char *s = path;
	char *prefix, *parent, *canon;
	int exists, w;

	for (;;) {
		s = strchr(s + 1, '/');
		prefix = s != NULL ? xstrndup(path, (size_t)(s - path)) : xstrdup(path);
		if (lstat(prefix, &st) == -1) {
			free(prefix);
			return NULL;
		}
		if (S_ISLNK(st.st_mode)) {
			parent = plan_dirname(prefix);
			canon = plan_canon(parent, &exists);
			w = policy_access(&pl->cp, canon) == POLICY_WRITE;
			free(parent);
			free(canon);
			if (w)
				return prefix;
		}
		free(prefix);
		if (s == NULL)
			return NULL;
	}
}

/* Whether a path is synthesized by the sandbox (under /proc, or /dev but a writable /dev/shm). */
int
plan_hidden(const struct sandbox *sb, const char *path)
{
	if (policy_path_within(path, "/proc"))
		return 1;
	if (!policy_path_within(path, "/dev"))
		return 0;
	return !(sb->devshm && policy_path_within(path, "/dev/shm"));
}

/* The operation at exactly this path, or NULL. */
struct sbx_op *
plan_find_op(struct sandbox *sb, const char *path)
{
	for (size_t i = 0; i < sb->nops; i++)
		if (strcmp(sb->ops[i].path, path) == 0)
			return &sb->ops[i];
	return NULL;
}

/* Append an operation; -1 past SBX_MAX_OPS. */
int
plan_add_op(struct sandbox *sb, int kind, const char *path, int dir, const char *link)
{
	struct sbx_op *op;
	struct stat st;

	if (sb->nops == SBX_MAX_OPS)
		return -1;
	sb->ops = xrealloc(sb->ops, (sb->nops + 1) * sizeof *sb->ops);
	op = &sb->ops[sb->nops++];
	memset(op, 0, sizeof *op);
	op->path = xstrdup(path);
	op->link = link != NULL ? xstrdup(link) : NULL;
	op->kind = kind;
	op->dir = dir;
	op->depth = policy_path_depth(path);
	op->container = SBX_IN_BASE;
	op->src = op->pdir = op->lock = -1;
	/* What the child must find again: the bound path itself, or a protected path's parent. */
	op->root = kind == SBX_OP_PROTECT ? plan_dirname(path) : xstrdup(path);
	if ((kind == SBX_OP_RW || kind == SBX_OP_PROTECT) && stat(op->root, &st) == 0) {
		op->check = 1;
		op->dev = st.st_dev;
		op->ino = st.st_ino;
	}
	return 0;
}

/* Order paths (and operations) by depth, then by name. */
static int
plan_path_cmp(const void *a, const void *b)
{
	const struct sbx_path *x = a, *y = b;
	int dx = policy_path_depth(x->path), dy = policy_path_depth(y->path);

	return dx != dy ? dx - dy : strcmp(x->path, y->path);
}

static int
plan_op_cmp(const void *a, const void *b)
{
	const struct sbx_op *x = a, *y = b;

	int c = x->depth != y->depth ? x->depth - y->depth : strcmp(x->path, y->path);

	/* One path, two ops (CODEX_HOME bound, then its view made from it): by kind. */
	return c != 0 ? c : x->kind - y->kind;
}

/* The canonical, deduplicated paths of the policy (no refusal yet). */
void
plan_paths(struct plan_make *pl, const struct policy *p)
{
	const struct policy_entry *e;
	struct stat st;
	char *c;
	size_t i, j;
	int exists;

	pl->cp.entries = xcalloc(p->nentries + 1, sizeof *pl->cp.entries);
	pl->paths = xcalloc(p->nentries + 1, sizeof *pl->paths);
	for (i = 0; i < p->nentries; i++) {
		e = &p->entries[i];
		c = plan_canon(e->path, &exists);
		pl->cp.entries[pl->cp.nentries++] =
			(struct policy_entry){.path = c, .access = e->access, .flags = e->flags};
		for (j = 0; j < pl->npaths && strcmp(pl->paths[j].path, c) != 0; j++)
			;
		if (j == pl->npaths) {
			pl->paths[j].path = xstrdup(c);
			pl->paths[j].exists = exists;
			pl->paths[j].dir = exists && stat(c, &st) == 0 && S_ISDIR(st.st_mode);
			pl->npaths++;
		}
		pl->paths[j].flags |= e->flags;
	}
	if (pl->npaths > 1)
		qsort(pl->paths, pl->npaths, sizeof *pl->paths, plan_path_cmp);
}

/* Read-only and denied entries reached through a swappable symlink; -1 with pl->cause. */
static int
plan_narrow_links(struct plan_make *pl, const struct policy *p)
{
	const struct policy_entry *e;
	char *link;

	for (size_t i = 0; i < p->nentries; i++) {
		e = &p->entries[i];
		if (e->access == POLICY_WRITE || strcmp(pl->cp.entries[i].path, e->path) == 0)
			continue;
		if ((link = plan_writable_symlink(pl, e->path)) == NULL)
			continue;
		pl->cause = xasprintf("sandbox setup failed: cannot enforce sandbox %s path %s "
				      "because it crosses writable symlink %s",
			e->access == POLICY_DENY ? "deny-read" : "read-only", e->path, link);
		free(link);
		return -1;
	}
	return 0;
}

/* A denied path that does not exist yet: hold its first missing component if creatable. */
static int
plan_missing_deny(struct sandbox *sb, struct plan_make *pl, const char *path)
{
	char *first = plan_first_missing(path), *parent;
	int r = 0;

	if (first == NULL)
		return 0;
	parent = plan_dirname(first);
	if (!plan_hidden(sb, first) && policy_access(&pl->cp, parent) == POLICY_WRITE)
		r = plan_add_op(sb, SBX_OP_PROTECT, first, 1, NULL);
	free(parent);
	free(first);
	return r;
}

/* The first component of a normal path that does not exist (heap), or NULL when it all does. */
char *
plan_first_missing(const char *path)
{
	struct stat st;
	const char *s = path;
	char *prefix;

	for (;;) {
		s = strchr(s + 1, '/');
		prefix = s != NULL ? xstrndup(path, (size_t)(s - path)) : xstrdup(path);
		if (lstat(prefix, &st) == -1)
			return prefix;
		free(prefix);
		if (s == NULL)
			return NULL;
	}
}

/* Symlinks among the entries (merged-usr /bin, /lib) recreated in a fresh root. */
static int
plan_links(struct sandbox *sb, struct plan_make *pl, const struct policy *p)
{
	char link[PATH_MAX], *parent, *canon, *target;
	struct stat st;
	ssize_t n;
	int exists, r = 0;

	for (size_t i = 0; i < p->nentries && r == 0; i++) {
		const char *path = p->entries[i].path;

		if (p->entries[i].access == POLICY_DENY || lstat(path, &st) == -1 ||
			!S_ISLNK(st.st_mode) || plan_hidden(sb, path))
			continue;
		if (plan_find_op(sb, path) != NULL ||
			(n = readlink(path, link, sizeof link - 1)) <= 0)
			continue;
		link[n] = '\0';
		parent = plan_dirname(path);
		canon = plan_canon(parent, &exists);
		target = plan_canon(path, &exists);
		if (strcmp(canon, parent) == 0 && policy_access(&pl->cp, parent) == POLICY_DENY &&
			policy_access(&pl->cp, target) != POLICY_DENY)
			r = plan_add_op(sb, SBX_OP_LINK, path, 0, link);
		free(parent);
		free(canon);
		free(target);
	}
	return r;
}

/* Forget an operation's strings. */
static void
plan_op_clear(struct sbx_op *op)
{
	free(op->path);
	free(op->link);
	free(op->root);
}

/* Which op holds each op's mountpoint; drop read-only binds inside protected paths. */
static void
plan_containers(struct sandbox *sb)
{
	struct sbx_op *op, *up;
	size_t i, j, n = 0;
	int k;

	if (sb->nops > 1)
		qsort(sb->ops, sb->nops, sizeof *sb->ops, plan_op_cmp);
	for (i = 0; i < sb->nops; i++) {
		op = &sb->ops[i];
		op->container = sb->full_read ? SBX_IN_BASE : SBX_IN_ROOT;
		for (k = (int)n - 1; k >= 0; k--) {
			up = &sb->ops[k];
			if (up->depth < op->depth && policy_path_within(op->path, up->path))
				break;
		}
		if (k >= 0 && sb->ops[k].kind == SBX_OP_PROTECT && op->kind == SBX_OP_RO) {
			plan_op_clear(op);
			continue; /* already read-only */
		}
		if (k >= 0 && sb->ops[k].kind == SBX_OP_MASK) {
			op->container = k;
			sb->ops[k].nkids++;
		} else if (k >= 0)
			op->container = SBX_IN_BASE;
		sb->ops[n++] = *op;
	}
	sb->nops = n;
	/* Links only exist where a container makes them. */
	for (i = 0, j = 0; i < sb->nops; i++) {
		if (sb->ops[i].kind == SBX_OP_LINK && sb->ops[i].container == SBX_IN_BASE) {
			plan_op_clear(&sb->ops[i]);
			continue;
		}
		sb->ops[j++] = sb->ops[i];
	}
	sb->nops = j;
}

/* Append a Landlock writable root. */
static void
plan_add_writable(struct sandbox *sb, const char *path)
{
	sb->writable = xrealloc(sb->writable, (sb->nwritable + 1) * sizeof *sb->writable);
	sb->writable[sb->nwritable++] = xstrdup(path);
}

/* One operation per path whose access differs from its parent's; 0 or -1 (too many). */
static int
plan_entries(struct sandbox *sb, struct plan_make *pl)
{
	enum policy_access a, pa;
	struct sbx_path *u;
	char *parent;
	int r = 0;

	for (size_t i = 0; i < pl->npaths && r == 0; i++) {
		u = &pl->paths[i];
		a = policy_access(&pl->cp, u->path);
		if (strcmp(u->path, "/") == 0 || plan_hidden(sb, u->path))
			continue;
		if (!u->exists) {
			if (a == POLICY_DENY)
				r = plan_missing_deny(sb, pl, u->path);
			continue;
		}
		if (a == POLICY_WRITE)
			plan_add_writable(sb, u->path);
		/*
		 * A protected path gets its own operation (protect.c); but CODEX_HOME as a root of
		 * a fresh view must be bound first, for its own view to be made from it.
		 */
		if (a != POLICY_DENY && protect_is_protected(pl, u->path) &&
			!(a == POLICY_READ && !sb->full_read && pl->home != NULL &&
				strcmp(u->path, pl->home) == 0))
			continue;
		parent = plan_dirname(u->path);
		pa = policy_access(&pl->cp, parent);
		free(parent);
		if (a != pa)
			r = plan_add_op(sb,
				a == POLICY_WRITE	   ? SBX_OP_RW
					: a == POLICY_READ ? SBX_OP_RO
							   : SBX_OP_MASK,
				u->path, u->dir, NULL);
	}
	return r;
}

/* Turn the policy into operations; 0 or -1 with pl->cause. */
int
plan_make(struct sandbox *sb, struct plan_make *pl, const struct policy *p)
{
	enum policy_access a;
	int r;

	plan_paths(pl, p);
	a = policy_access(&pl->cp, "/");
	sb->full_read = a != POLICY_DENY;
	sb->root_write = a == POLICY_WRITE;
	for (size_t i = 0; i < pl->npaths; i++)
		if (strcmp(pl->paths[i].path, "/dev/shm") == 0 && pl->paths[i].exists &&
			policy_access(&pl->cp, "/dev/shm") == POLICY_WRITE)
			sb->devshm = 1;
	if (plan_narrow_links(pl, p) != 0 || protect_root_links(pl, p) != 0 ||
		protect_decide(sb, pl) != 0)
		return -1;
	protect_demote(pl);
	r = plan_entries(sb, pl);
	if (r == 0)
		r = protect_ops(sb, pl);
	if (r == 0 && !sb->full_read)
		r = plan_links(sb, pl, p);
	if (r != 0) {
		if (pl->cause == NULL)
			pl->cause =
				xasprintf("sandbox setup failed: the policy has more than %d paths "
					  "to enforce",
					SBX_MAX_OPS);
		return -1;
	}
	protect_prune(sb, pl);
	plan_containers(sb);
	return 0;
}

/* Free the planning scratch. */
void
plan_free(struct plan_make *pl)
{
	size_t i;

	for (i = 0; i < pl->cp.nentries; i++)
		free(pl->cp.entries[i].path);
	free(pl->cp.entries);
	for (i = 0; i < pl->npaths; i++)
		free(pl->paths[i].path);
	free(pl->paths);
	for (i = 0; i < pl->nprot; i++)
		free(pl->prot[i]);
	free(pl->prot);
	free(pl->home);
	free(pl->cause);
}

/* Free the operations of a sandbox. */
void
plan_ops_free(struct sandbox *sb)
{
	for (size_t i = 0; i < sb->nops; i++)
		plan_op_clear(&sb->ops[i]);
	free(sb->ops);
	sb->ops = NULL;
	sb->nops = 0;
}

/*
 * Whether the sandbox of policy p would let a command write path (absolute; it may not exist
 * yet): the same rules as the plan, protected paths included. For writers that do not run
 * in the sandbox (apply_patch), so that they never write where a command could not.
 */
int
plan_writable(const struct policy *p, const char *path)
{
	struct sandbox sb = {0};
	struct plan_make pl;
	char *c;
	int exists, r = 0;

	if (p->kind == POLICY_NONE || p->kind == POLICY_EXTERNAL)
		return 1;
	memset(&pl, 0, sizeof pl);
	plan_paths(&pl, p);
	if (protect_decide(&sb, &pl) == 0) {
		protect_demote(&pl);
		c = plan_canon(path, &exists);
		r = policy_access(&pl.cp, c) == POLICY_WRITE && !protect_is_protected(&pl, c) &&
			!plan_hidden(&sb, c);
		free(c);
	}
	plan_free(&pl);
	return r;
}
