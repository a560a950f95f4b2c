/*
 * The sandbox plan, made in the parent: the effective policy's paths made canonical and
 * turned into an ordered list of mount operations, the writable roots for Landlock, the
 * protected metadata of each writable root, the id maps and the cached seccomp program.
 * The child (init.c, mounts.c) follows the plan with syscalls only.
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
 *  - In every writable root, .git, .codex and .agents stay read-only (existing ones are
 *    bound read-only over themselves, missing ones get a placeholder), and the target of a
 *    `gitdir:` file too; an explicit entry at or below one of them decides instead. A
 *    protected name that is a symlink is refused, as upstream does.
 *  - /dev and /proc are synthesized: entries below them are ignored, except a writable
 *    /dev/shm, which is the host's.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox_int.h"
#include "xmalloc.h"

/* Names kept read-only inside every writable root. */
static const char *const sbx_protected[] = {".git", ".codex", ".agents", NULL};

/* The fault names of APP_SERVER_SANDBOX_FAULT, by step. */
static const char *const sbx_fault_names[] = {
	[SBX_STEP_USERNS] = "userns",
	[SBX_STEP_MOUNTS] = "mounts",
	[SBX_STEP_DEV] = "dev",
	[SBX_STEP_PROC] = "proc",
	[SBX_STEP_PROTECT] = "protect",
	[SBX_STEP_CWD] = "cwd",
	[SBX_STEP_INIT] = "init",
	[SBX_STEP_CAPS] = "caps",
	[SBX_STEP_NNP] = "nnp",
	[SBX_STEP_LANDLOCK] = "landlock",
	[SBX_STEP_SECCOMP] = "seccomp",
};

/* One canonical path of the policy. */
struct sbx_path {
	char *path;
	int exists, dir;
	unsigned flags; /* POLICY_E_* of every entry that has this path */
};

/* The parent's scratch while planning. */
struct sbx_plan {
	struct policy cp; /* the policy with canonical paths */
	struct sbx_path *paths;
	size_t npaths;
	char *cause;
};

/*
 * One empty network namespace for every sandbox without network, made once (a namespace
 * costs about 0.3 ms to make and more to destroy). It belongs to our user namespace, so a
 * sandbox (in a user namespace of its own) can use it but not configure it; it has only a
 * loopback that is down. Sandboxes cannot reach each other through it: seccomp denies
 * connect and bind, and Landlock scopes abstract unix sockets. -2: not tried; -1: none
 * (not root: each sandbox then gets its own).
 */
static int sbx_netns = -2;

/* The shared empty network namespace (on the calling thread, made once), or -1. */
static int
sbx_shared_netns(void)
{
	int home, fd;

	if (sbx_netns != -2)
		return sbx_netns;
	sbx_netns = -1;
	if ((home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if (unshare(CLONE_NEWNET) == 0) {
		fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (setns(home, CLONE_NEWNET) == -1)
			abort(); /* this thread must not stay in the empty namespace */
		sbx_netns = fd;
	}
	close(home);
	return sbx_netns;
}

/* The step APP_SERVER_SANDBOX_FAULT names, or -1. It can only make a sandbox fail. */
static int
sbx_fault(void)
{
	const char *f = getenv("APP_SERVER_SANDBOX_FAULT");
	int i;

	for (i = 0; f != NULL && i < SBX_STEP_COUNT; i++)
		if (strcmp(f, sbx_fault_names[i]) == 0)
			return i;
	return -1;
}

/* The parent directory of a normal path ("/" for "/x"). */
static char *
sbx_dirname(const char *path)
{
	const char *s = strrchr(path, '/');

	return s == path ? xstrdup("/") : xstrndup(path, (size_t)(s - path));
}

/* path + "/" + name. */
static char *
sbx_join(const char *path, const char *name)
{
	return strcmp(path, "/") == 0 ? xasprintf("/%s", name) : xasprintf("%s/%s", path, name);
}

/*
 * Canonical form of a normal path: its realpath, or, when it is missing, the realpath of
 * its deepest existing ancestor followed by the rest. *exists says which.
 */
static char *
sbx_canon(const char *path, int *exists)
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

/* The first component of path (normal) that is a symlink, or NULL. */
static char *
sbx_first_symlink(const char *path)
{
	struct stat st;
	const char *s = path;
	char *prefix;

	for (;;) {
		s = strchr(s + 1, '/');
		prefix = s != NULL ? xstrndup(path, (size_t)(s - path)) : xstrdup(path);
		if (lstat(prefix, &st) == -1) {
			free(prefix);
			return NULL;
		}
		if (S_ISLNK(st.st_mode))
			return prefix;
		free(prefix);
		if (s == NULL)
			return NULL;
	}
}

/* Whether a path is synthesized by the sandbox (under /proc, or /dev but a writable /dev/shm). */
static int
sbx_hidden(const struct sandbox *sb, const char *path)
{
	if (policy_path_within(path, "/proc"))
		return 1;
	if (!policy_path_within(path, "/dev"))
		return 0;
	return !(sb->devshm && policy_path_within(path, "/dev/shm"));
}

/* Append an operation; -1 past SBX_MAX_OPS. */
static int
sbx_add_op(struct sandbox *sb, int kind, const char *path, int dir, const char *link)
{
	struct sbx_op *op;

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
	return 0;
}

/* Whether some path of the policy is p or below it. */
static int
sbx_has_entry_within(const struct sbx_plan *pl, const char *p)
{
	for (size_t i = 0; i < pl->npaths; i++)
		if (policy_path_within(pl->paths[i].path, p))
			return 1;
	return 0;
}

/* Order paths (and operations) by depth, then by name. */
static int
sbx_path_cmp(const void *a, const void *b)
{
	const struct sbx_path *x = a, *y = b;
	int dx = policy_path_depth(x->path), dy = policy_path_depth(y->path);

	return dx != dy ? dx - dy : strcmp(x->path, y->path);
}

static int
sbx_op_cmp(const void *a, const void *b)
{
	const struct sbx_op *x = a, *y = b;

	return x->depth != y->depth ? x->depth - y->depth : strcmp(x->path, y->path);
}

/* The canonical, deduplicated paths of the policy; -1 with pl->cause on a refused symlink. */
static int
sbx_plan_paths(struct sbx_plan *pl, const struct policy *p)
{
	const struct policy_entry *e;
	struct stat st;
	char *c, *link;
	size_t i, j;
	int exists;

	pl->cp.entries = xcalloc(p->nentries + 1, sizeof *pl->cp.entries);
	pl->paths = xcalloc(p->nentries + 1, sizeof *pl->paths);
	for (i = 0; i < p->nentries; i++) {
		e = &p->entries[i];
		c = sbx_canon(e->path, &exists);
		if (exists && strcmp(c, e->path) != 0 && e->access != POLICY_WRITE &&
			(link = sbx_first_symlink(e->path)) != NULL) {
			if (policy_access(p, link) == POLICY_WRITE)
				pl->cause = xasprintf(
					"sandbox setup failed: cannot enforce sandbox "
					"%s path %s because it crosses writable symlink %s",
					e->access == POLICY_DENY ? "deny-read" : "read-only",
					e->path, link);
			free(link);
			if (pl->cause != NULL) {
				free(c);
				return -1;
			}
		}
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
		qsort(pl->paths, pl->npaths, sizeof *pl->paths, sbx_path_cmp);
	return 0;
}

/* Read the target of a `gitdir: X` file at gitfile (in dir), canonical; NULL if none. */
static char *
sbx_gitdir(const char *gitfile, const char *dir)
{
	char buf[PATH_MAX + 16], *s, *end, *target, *c;
	ssize_t n;
	int fd, exists;

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
	if (s == NULL)
		return NULL;
	c = sbx_canon(s, &exists);
	free(s);
	if (!exists) {
		free(c);
		return NULL;
	}
	return c;
}

/* The protected metadata of writable root w (canonical, an existing directory). */
static int
sbx_plan_protect(struct sandbox *sb, struct sbx_plan *pl, const char *w)
{
	struct stat st;
	char *s = NULL, *gd;
	int r = 0, exists;

	for (const char *const *name = sbx_protected; *name != NULL && r == 0; name++) {
		free(s);
		s = sbx_join(w, *name);
		if (sbx_has_entry_within(pl, s) || policy_access(&pl->cp, s) != POLICY_WRITE)
			continue;
		exists = lstat(s, &st) == 0;
		if (exists && S_ISLNK(st.st_mode)) {
			pl->cause =
				xasprintf("sandbox setup failed: cannot enforce sandbox read-only "
					  "path %s because it crosses writable symlink %s",
					s, s);
			r = -1;
			break;
		}
		r = sbx_add_op(sb, SBX_OP_PROTECT, s, !exists || S_ISDIR(st.st_mode), NULL);
		if (r != 0 || !exists || !S_ISREG(st.st_mode) || strcmp(*name, ".git") != 0)
			continue;
		/* A worktree or submodule: its git directory is the real metadata. */
		if ((gd = sbx_gitdir(s, w)) != NULL && !sbx_hidden(sb, gd) &&
			policy_access(&pl->cp, gd) == POLICY_WRITE && stat(gd, &st) == 0)
			r = sbx_add_op(sb, SBX_OP_RO, gd, S_ISDIR(st.st_mode), NULL);
		free(gd);
	}
	free(s);
	return r;
}

/* A denied path that does not exist yet: hold its first missing component if creatable. */
static int
sbx_plan_missing_deny(struct sandbox *sb, struct sbx_plan *pl, const char *path)
{
	struct stat st;
	const char *s = path;
	char *prefix, *parent;
	int r = 0;

	for (;;) {
		s = strchr(s + 1, '/');
		prefix = s != NULL ? xstrndup(path, (size_t)(s - path)) : xstrdup(path);
		if (lstat(prefix, &st) == -1)
			break;
		free(prefix);
		if (s == NULL)
			return 0;
	}
	parent = sbx_dirname(prefix);
	if (!sbx_hidden(sb, prefix) && policy_access(&pl->cp, parent) == POLICY_WRITE)
		r = sbx_add_op(sb, SBX_OP_PROTECT, prefix, 1, NULL);
	free(parent);
	free(prefix);
	return r;
}

/* Symlinks among the entries (merged-usr /bin, /lib) recreated in a fresh root. */
static int
sbx_plan_links(struct sandbox *sb, struct sbx_plan *pl, const struct policy *p)
{
	char link[PATH_MAX], *parent, *canon, *target;
	struct stat st;
	ssize_t n;
	size_t i, k;
	int exists, r = 0;

	for (i = 0; i < p->nentries && r == 0; i++) {
		const char *path = p->entries[i].path;

		if (p->entries[i].access == POLICY_DENY || lstat(path, &st) == -1 ||
			!S_ISLNK(st.st_mode) || sbx_hidden(sb, path))
			continue;
		for (k = 0; k < sb->nops && strcmp(sb->ops[k].path, path) != 0; k++)
			;
		if (k < sb->nops || (n = readlink(path, link, sizeof link - 1)) <= 0)
			continue;
		link[n] = '\0';
		parent = sbx_dirname(path);
		canon = sbx_canon(parent, &exists);
		target = sbx_canon(path, &exists);
		if (strcmp(canon, parent) == 0 && policy_access(&pl->cp, parent) == POLICY_DENY &&
			policy_access(&pl->cp, target) != POLICY_DENY)
			r = sbx_add_op(sb, SBX_OP_LINK, path, 0, link);
		free(parent);
		free(canon);
		free(target);
	}
	return r;
}

/* Which op holds each op's mountpoint; drop read-only binds inside protected paths. */
static void
sbx_plan_containers(struct sandbox *sb)
{
	struct sbx_op *op, *up;
	size_t i, j, n = 0;
	int k;

	if (sb->nops > 1)
		qsort(sb->ops, sb->nops, sizeof *sb->ops, sbx_op_cmp);
	for (i = 0; i < sb->nops; i++) {
		op = &sb->ops[i];
		op->container = sb->full_read ? SBX_IN_BASE : SBX_IN_ROOT;
		for (k = (int)n - 1; k >= 0; k--) {
			up = &sb->ops[k];
			if (up->depth < op->depth && policy_path_within(op->path, up->path))
				break;
		}
		if (k >= 0 && sb->ops[k].kind == SBX_OP_PROTECT && op->kind == SBX_OP_RO) {
			free(op->path);
			free(op->link);
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
			free(sb->ops[i].path);
			free(sb->ops[i].link);
			continue;
		}
		sb->ops[j++] = sb->ops[i];
	}
	sb->nops = j;
}

/* Append a Landlock writable root. */
static void
sbx_add_writable(struct sandbox *sb, const char *path)
{
	sb->writable = xrealloc(sb->writable, (sb->nwritable + 1) * sizeof *sb->writable);
	sb->writable[sb->nwritable++] = xstrdup(path);
}

/* Turn the policy into operations; 0 or -1 with pl->cause. */
static int
sbx_plan(struct sandbox *sb, struct sbx_plan *pl, const struct policy *p)
{
	enum policy_access a, pa;
	struct sbx_path *u;
	char *parent;
	size_t i;
	int r = 0;

	if (sbx_plan_paths(pl, p) != 0)
		return -1;
	a = policy_access(&pl->cp, "/");
	sb->full_read = a != POLICY_DENY;
	sb->root_write = a == POLICY_WRITE;
	for (i = 0; i < pl->npaths && r == 0; i++) {
		u = &pl->paths[i];
		a = policy_access(&pl->cp, u->path);
		if (strcmp(u->path, "/dev/shm") == 0 && u->exists && a == POLICY_WRITE)
			sb->devshm = 1;
		if (strcmp(u->path, "/") == 0 || sbx_hidden(sb, u->path))
			continue;
		if (!u->exists) {
			if (a == POLICY_DENY)
				r = sbx_plan_missing_deny(sb, pl, u->path);
			continue;
		}
		parent = sbx_dirname(u->path);
		pa = policy_access(&pl->cp, parent);
		free(parent);
		if (a == POLICY_WRITE)
			sbx_add_writable(sb, u->path);
		if (a != pa)
			r = sbx_add_op(sb,
				a == POLICY_WRITE	   ? SBX_OP_RW
					: a == POLICY_READ ? SBX_OP_RO
							   : SBX_OP_MASK,
				u->path, u->dir, NULL);
	}
	for (i = 0; i < pl->npaths && r == 0; i++) {
		u = &pl->paths[i];
		if (u->exists && u->dir && (u->flags & POLICY_E_PROTECT) &&
			!sbx_hidden(sb, u->path) && policy_access(&pl->cp, u->path) == POLICY_WRITE)
			r = sbx_plan_protect(sb, pl, u->path);
	}
	if (r == 0 && !sb->full_read)
		r = sbx_plan_links(sb, pl, p);
	if (r != 0) {
		if (pl->cause == NULL)
			pl->cause =
				xasprintf("sandbox setup failed: the policy has more than %d paths "
					  "to enforce",
					SBX_MAX_OPS);
		return -1;
	}
	sbx_plan_containers(sb);
	return 0;
}

/* Free the planning scratch. */
static void
sbx_plan_free(struct sbx_plan *pl)
{
	size_t i;

	for (i = 0; i < pl->cp.nentries; i++)
		free(pl->cp.entries[i].path);
	free(pl->cp.entries);
	for (i = 0; i < pl->npaths; i++)
		free(pl->paths[i].path);
	free(pl->paths);
	free(pl->cause);
}

/* Prepare a sandbox for p; 0 (with *out NULL when none is needed), or -1 and *cause. */
int
sandbox_prepare(const struct policy *p, const char *cwd, unsigned spawn_flags, struct sandbox **out,
	char **cause)
{
	struct sbx_plan pl;
	struct sandbox *sb = NULL;
	char here[PATH_MAX], *norm = NULL, *canon = NULL;
	int exists;

	*out = NULL;
	if (p->kind == POLICY_NONE || p->kind == POLICY_EXTERNAL)
		return 0;
	memset(&pl, 0, sizeof pl);
	sb = xcalloc(1, sizeof *sb);
	sb->fault = sbx_fault();
	sb->net = p->net;
	sb->ruleset = -1;
	sb->netns_fd = -1;
	if (sbx_seccomp_program(p->net, &sb->filter, cause) != 0)
		goto fail;
	if (p->kind == POLICY_NETWORK) {
		sb->mode = SBX_MODE_SECCOMP;
		*out = sb;
		return 0;
	}
	sb->mode = SBX_MODE_NS;
	if ((sb->ll_abi = sbx_landlock_abi()) < 1) {
		*cause = xstrdup("sandbox setup failed: landlock: this kernel has no Landlock "
				 "(CONFIG_SECURITY_LANDLOCK, lsm=landlock)");
		goto fail;
	}
	if (cwd == NULL)
		cwd = getcwd(here, sizeof here);
	if (cwd == NULL || (norm = policy_normalize(cwd)) == NULL) {
		*cause =
			xstrdup("sandbox setup failed: cwd: the working directory is not absolute");
		goto fail;
	}
	canon = sbx_canon(norm, &exists);
	sb->cwd = exists ? canon : xstrdup(norm);
	if (!exists)
		free(canon);
	free(norm);
	sb->netns_fd = p->net ? -1 : sbx_shared_netns();
	sb->clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
		(p->net || sb->netns_fd >= 0 ? 0 : CLONE_NEWNET);
	sb->cap_last = sbx_cap_last();
	snprintf(sb->uid_map, sizeof sb->uid_map, "%u %u 1\n", (unsigned)geteuid(),
		(unsigned)geteuid());
	snprintf(sb->gid_map, sizeof sb->gid_map, "%u %u 1\n", (unsigned)getegid(),
		(unsigned)getegid());
	(void)spawn_flags;
	if (sbx_plan(sb, &pl, p) != 0) {
		*cause = pl.cause;
		pl.cause = NULL;
		goto fail;
	}
	sbx_plan_free(&pl);
	*out = sb;
	return 0;
fail:
	sbx_plan_free(&pl);
	sandbox_free(sb);
	return -1;
}

/* Point spawn at the sandbox. */
void
sandbox_spawn_opts(struct sandbox *sb, struct spawn_opts *so)
{
	so->child_hook = sbx_child_hook;
	so->child_hook_arg = sb;
	so->hook_steps = sbx_step_names;
	if (sb->mode == SBX_MODE_NS) {
		so->clone_flags = sb->clone_flags;
		so->flags |= SPAWN_SUPERVISED;
	}
	if (sb->netns_fd >= 0) {
		so->flags |= SPAWN_NETNS;
		so->netns_fd = sb->netns_fd;
	}
}

void
sandbox_free(struct sandbox *sb)
{
	size_t i;

	if (sb == NULL)
		return;
	for (i = 0; i < sb->nops; i++) {
		free(sb->ops[i].path);
		free(sb->ops[i].link);
	}
	free(sb->ops);
	for (i = 0; i < sb->nwritable; i++)
		free(sb->writable[i]);
	free(sb->writable);
	free(sb->cwd);
	free(sb);
}

/* Check a wire policy and give the command's extra environment entry. */
int
sandbox_policy_check(const json_t *policy, const char **env_extra, char **cause)
{
	struct policy_ctx ctx = {.cwd = "/", .tmpdir = getenv("TMPDIR")};
	struct policy *p;

	*env_extra = NULL;
	if (policy_parse(policy, &ctx, &p, cause) != 0)
		return -1;
	*env_extra = policy_env(p);
	policy_free(p);
	return 0;
}

/* Resolve the policy for so's command and attach the sandbox to so. */
int
sandbox_spawn_prepare(const json_t *policy, struct spawn_opts *so, char **cause)
{
	struct policy_ctx ctx = {.tmpdir = getenv("TMPDIR")};
	struct sandbox *sb = NULL;
	struct policy *p = NULL;
	char here[PATH_MAX], *cwd = NULL;
	int r = -1;

	if (so->cwd != NULL)
		cwd = policy_normalize(so->cwd);
	else if (getcwd(here, sizeof here) != NULL)
		cwd = policy_normalize(here);
	if (cwd == NULL) {
		*cause =
			xstrdup("sandbox setup failed: cwd: the working directory is not absolute");
		return -1;
	}
	ctx.cwd = cwd;
	if (policy_parse(policy, &ctx, &p, cause) != 0 ||
		sandbox_prepare(p, cwd, so->flags, &sb, cause) != 0)
		goto out;
	if (sb != NULL)
		sandbox_spawn_opts(sb, so);
	r = 0;
out:
	policy_free(p);
	free(cwd);
	return r;
}

/* Free the sandbox attached to so. */
void
sandbox_spawn_done(struct spawn_opts *so)
{
	if (so->child_hook != sbx_child_hook)
		return;
	sandbox_free(so->child_hook_arg);
	so->child_hook = NULL;
	so->child_hook_arg = NULL;
	so->hook_steps = NULL;
	so->clone_flags = 0;
	so->flags &= ~(unsigned)(SPAWN_SUPERVISED | SPAWN_NETNS);
}
