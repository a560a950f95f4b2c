/*
 * A command's environment as the agent builds it: the daemon's own with entries replaced by
 * name, pure work on arrays of NAME=value strings (the strings are borrowed, never copied).
 */
#ifndef SHELL_ENV_H
#define SHELL_ENV_H

/*
 * base (NULL-ended) with each entry of extra (NAME=value, NULL-ended, may be NULL) and then
 * sandbox_var (may be NULL) replacing the same-named entries of base, appended after what is
 * kept. A new NULL-ended array (free it alone), pointing into base, extra and sandbox_var.
 */
/* The workdir a call asks for (NULL or "": cwd), resolved against cwd (heap). */
char *shell_workdir(const char *cwd, const char *w);
char **shell_env_with(char *const *base, const char *const *extra, const char *sandbox_var);

#endif
