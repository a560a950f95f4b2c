/*
 * Sandbox internals shared by sandbox.c (the plan, made in the parent), mounts.c (the file
 * system view), landlock.c, seccomp.c, caps.c and init.c (the child's steps and its init).
 *
 * Ownership: the parent builds one struct sandbox with everything the child needs (paths,
 * id maps, the seccomp program, the list of mount operations) and frees it after the spawn.
 * The child works on its own copy of that memory, so the child-side fields below are
 * written only there, and only with async-signal-safe calls: no malloc, no stdio.
 */
#ifndef SANDBOX_INT_H
#define SANDBOX_INT_H

#include <linux/filter.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "policy.h"
#include "sandbox/spawn/spawn.h"

/* The child's steps, in order; their names make up the error message. */
enum sbx_step {
	SBX_STEP_USERNS,
	SBX_STEP_MOUNTS,
	SBX_STEP_DEV,
	SBX_STEP_PROC,
	SBX_STEP_PROTECT,
	SBX_STEP_CWD,
	SBX_STEP_INIT,
	SBX_STEP_CAPS,
	SBX_STEP_NNP,
	SBX_STEP_LANDLOCK,
	SBX_STEP_SECCOMP,
	SBX_STEP_COUNT,
};

#define SBX_ERR(step, err) SPAWN_HOOK_ERR(step, err)

/* What runs the command. */
enum sbx_mode {
	SBX_MODE_SECCOMP, /* plain child: no_new_privs + seccomp (full disk write, network off) */
	SBX_MODE_NS,	  /* init in new namespaces, the command below it, every layer */
};

/* One change to the file system view, applied in order of depth. */
enum sbx_op_kind {
	SBX_OP_RW,	/* bind the host path writable (nosuid, nodev) */
	SBX_OP_RO,	/* bind the host path read-only */
	SBX_OP_MASK,	/* deny: an empty mode-000 tmpfs (dir) or a nodev /dev/null (file) */
	SBX_OP_PROTECT, /* protected metadata: read-only bind, or a placeholder if missing */
	SBX_OP_LINK,	/* a symlink recreated in a fresh tmpfs (restricted-read views) */
};

#define SBX_MAX_OPS 256 /* operations in one plan, at most */

#define SBX_IN_BASE -1 /* the mountpoint exists in the host view */
#define SBX_IN_ROOT -2 /* the mountpoint is made in the fresh root tmpfs */

struct sbx_op {
	char *path; /* canonical, in the view */
	char *link; /* SBX_OP_LINK: the symlink's text */
	int kind;
	int dir;       /* the target is a directory */
	int depth;     /* components of path */
	int container; /* index of the mask op holding our mountpoint, or SBX_IN_* */
	int nkids;     /* SBX_OP_MASK: ops whose mountpoints it holds */
	/* Child side. */
	int src;  /* pre-cloned mount tree, -1 */
	int pdir; /* SBX_OP_PROTECT: the parent directory, kept for the cleanup */
	int lock; /* SBX_OP_PROTECT: shared flock on a protected directory */
	int made; /* SBX_OP_PROTECT: we created the placeholder */
	int hide; /* SBX_OP_PROTECT of CODEX_HOME: covered by home_view.c, not a plain bind */
	/* SBX_OP_PROTECT: the read-only tree we bound on it (guard.c checks it stays). */
	int mounted;
	dev_t mdev;
	ino_t mino;
	/*
	 * What the child must find again (item of docs/sandbox.md "Failing closed"): the
	 * bound path itself (SBX_OP_RW) or a protected path's parent directory, and its
	 * identity when the plan was made. A change fails the request naming root.
	 */
	char *root;
	int check;
	dev_t dev;
	ino_t ino;
};

/*
 * A failure that names operation i (a writable root that changed during setup) is reported
 * as step SBX_STEP_OP + i, with ESTALE when the path now is another file.
 */
#define SBX_STEP_OP 64

struct sandbox {
	int mode;	/* SBX_MODE_* */
	int net;	/* network enabled */
	int full_read;	/* the view is the host root, frozen read-only */
	int root_write; /* ... and left writable (root:write with carve-outs) */
	int devshm;	/* /dev/shm is a writable root: the host's is bound */
	unsigned long clone_flags;
	int netns_fd; /* the shared empty network namespace, or -1 (CLONE_NEWNET then) */
	const struct sock_fprog *filter;
	int ll_abi;	   /* Landlock ABI in use (>= 1 for SBX_MODE_NS) */
	int cap_last;	   /* highest capability number of this kernel */
	int fault;	   /* step made to fail (APP_SERVER_SANDBOX_FAULT), or -1 */
	unsigned pause_ms; /* APP_SERVER_SANDBOX_PAUSE_MS: setup waits before its last look */
	unsigned nproc;	   /* RLIMIT_NPROC of the command when no cgroup caps it, or 0 */
	char uid_map[32], gid_map[32];
	char *cwd;	 /* canonical command cwd: chdir there again after the mounts */
	char **writable; /* Landlock: full rights beneath these */
	size_t nwritable;
	struct sbx_op *ops;
	size_t nops;
	/* Child side. */
	int ruleset; /* Landlock ruleset built by the init, -1 */
	int guard;   /* inotify on the protected paths' parents (guard.c; made by the daemon), -1 */
	int errfd;   /* the command's stderr, kept by the init to say why it killed it, -1 */
	pid_t cmd;   /* the command, in the init's namespace */
};

/* One canonical path of the policy. */
struct sbx_path {
	char *path;
	int exists, dir;
	unsigned flags; /* POLICY_E_* of every entry that has this path */
};

/* The parent's scratch while planning. */
struct plan_make {
	struct policy cp; /* the policy with canonical paths (writable ones demoted inside prot) */
	struct sbx_path *paths;
	size_t npaths;
	char **prot; /* protected paths, canonical (protect.c) */
	char *home;  /* CODEX_HOME, canonical, when protected */
	size_t nprot;
	char *cause;
};

/* plan.c */
int plan_make(struct sandbox *sb, struct plan_make *pl, const struct policy *p);
void plan_paths(struct plan_make *pl, const struct policy *p);
void plan_free(struct plan_make *pl);
void plan_ops_free(struct sandbox *sb);
char *plan_dirname(const char *path);
char *plan_join(const char *path, const char *name);
char *plan_canon(const char *path, int *exists);
char *plan_first_missing(const char *path);
char *plan_writable_symlink(const struct plan_make *pl, const char *path);
int plan_hidden(const struct sandbox *sb, const char *path);
struct sbx_op *plan_find_op(struct sandbox *sb, const char *path);
int plan_add_op(struct sandbox *sb, int kind, const char *path, int dir, const char *link);
int plan_writable(const struct policy *p, const char *path);
/* protect.c */
void protect_set_home(const char *path);
int protect_root_links(struct plan_make *pl, const struct policy *p);
int protect_decide(struct sandbox *sb, struct plan_make *pl);
int protect_is_protected(const struct plan_make *pl, const char *path);
void protect_demote(struct plan_make *pl);
int protect_ops(struct sandbox *sb, struct plan_make *pl);
void protect_prune(struct sandbox *sb, const struct plan_make *pl);
/* landlock.c */
int landlock_abi(void);
const char *landlock_why(void);
int landlock_build(struct sandbox *sb);
int landlock_restrict(struct sandbox *sb);
/* seccomp.c */
int filter_program(int net, const struct sock_fprog **out, char **cause);
int filter_load(const struct sock_fprog *prog);
/* caps.c */
int caps_last(void);
int caps_drop(int cap_last);
/* mounts.c */
int mounts_view(struct sandbox *sb);
int mounts_setattr(int dfd, const char *path, int recursive, unsigned set, unsigned clr);
int mounts_tmpfs(const char *mode, unsigned attrs);
int mounts_move(int from, int to, const char *to_path);
/* home_view.c */
int home_view_hidden(const char *name);
int home_view_mount(int sfd, struct stat *st);
/* guard.c */
int guard_verify(struct sandbox *sb);
int guard_open(struct sandbox *sb, char **cause);
int guard_arm(struct sandbox *sb);
int guard_breached(struct sandbox *sb, int fd, int all);
void mounts_protect_cleanup(struct sandbox *sb);
/* init.c */
int init_child_hook(void *arg);
extern const char *const init_step_names[];
char *init_cause(void *arg, int step, int err);

#endif
