/*
 * Path helpers of apply_patch (apply_patch_path.c): lexical and symlink resolution, the
 * confinement check, opening a directory without following symlinks.
 */
#ifndef APPLY_PATCH_PATH_H
#define APPLY_PATCH_PATH_H

#include <stddef.h>

#include "apply_patch.h"

/* Rust's io::Error text for an errno: "<strerror> (os error N)" (heap). */
char *ap_io_error(int err);
/* path against base (ignored when path is absolute), ".", ".." and "//" folded (heap). */
char *ap_path_normal(const char *base, const char *path);
/* Whether path is dir or below it (both normal). */
int ap_path_within(const char *path, const char *dir);
/*
 * abs (normal) with every symlink resolved, the last component too when follow_last; parts
 * that do not exist are kept as written. 0 with *out (heap), or -1 with *err.
 */
int ap_path_real(const char *abs, int follow_last, char **out, int *err);
/* Called with the prefix of dir that ap_dir_open just created. */
typedef void ap_mkdir_cb(void *arg, const char *dir, size_t len);
/*
 * Open directory dir (absolute) walking from "/" with O_NOFOLLOW: a symlink anywhere fails
 * (ELOOP/ENOTDIR). With create, missing directories are made (each reported to made).
 * The fd, or -1 with *err.
 */
int ap_dir_open(const char *dir, int create, ap_mkdir_cb *made, void *arg, int *err);
/* 0 when the confinement allows op on real (symlink-free), else -EACCES and *cause. */
int ap_confine_check(const struct apply_patch_confine *c, const char *real, enum apply_patch_op op,
	char **cause);

#endif
