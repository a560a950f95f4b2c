/* A command's environment (shell_env.h): the daemon's, entries replaced by name. */
#include <stddef.h>
#include <string.h>

#include "shell_env.h"
#include "protocol/xmalloc.h"

char **
shell_env_with(char *const *base, const char *const *extra, const char *sandbox_var)
{
	size_t n = 0, ne = 0, k = 0;
	char **e;

	while (base[n] != NULL)
		n++;
	while (extra != NULL && extra[ne] != NULL)
		ne++;
	e = xcalloc(n + ne + 2, sizeof *e);
	for (size_t i = 0; i < n; i++) {
		size_t kl = strcspn(base[i], "=");
		int replaced = sandbox_var != NULL && strncmp(base[i], sandbox_var, kl) == 0 &&
			sandbox_var[kl] == '=';

		for (size_t j = 0; j < ne && !replaced; j++)
			replaced = strncmp(base[i], extra[j], kl) == 0 && extra[j][kl] == '=';
		if (!replaced)
			e[k++] = base[i];
	}
	for (size_t j = 0; j < ne; j++)
		e[k++] = (char *)extra[j];
	if (sandbox_var != NULL)
		e[k++] = (char *)sandbox_var;
	e[k] = NULL;
	return e;
}

char *
shell_workdir(const char *cwd, const char *w)
{
	if (w == NULL || *w == '\0')
		return xstrdup(cwd);
	if (w[0] == '/')
		return xstrdup(w);
	return xasprintf("%s/%s", cwd, w);
}
