/*
 * libFuzzer target for the gitignore matcher (server/fs/walk/gitignore.c). Input: the ignore
 * file's text, a NUL, then paths to match, one a line. Each path is matched by the whole list (as a
 * file and as a directory), and against each of the first rules' globs with gi_glob alone.
 * The verdict must be one of enum gi_match.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/walk/gitignore.h"

#define FUZZ_GLOBS 8 /* rules tried one by one against each path */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nul = memchr(text, '\0', size), *p, *e;
	size_t tlen = nul != NULL ? (size_t)(nul - text) : size;
	struct gi_list l = {NULL, 0};
	char *paths, *path, *save = NULL;
	enum gi_match v;

	gi_list_parse(&l, text, tlen);
	if (nul == NULL) {
		gi_list_match(&l, "a/b.c", 0);
		gi_list_free(&l);
		return 0;
	}
	p = nul + 1;
	e = text + size;
	if ((paths = malloc((size_t)(e - p) + 1)) == NULL)
		abort();
	memcpy(paths, p, (size_t)(e - p));
	paths[e - p] = '\0';
	for (path = strtok_r(paths, "\n", &save); path != NULL;
		path = strtok_r(NULL, "\n", &save)) {
		for (int dir = 0; dir < 2; dir++) {
			v = gi_list_match(&l, path, dir);
			if (v != GI_NONE && v != GI_IGNORE && v != GI_WHITELIST)
				abort();
		}
		for (size_t i = 0; i < l.n && i < FUZZ_GLOBS; i++)
			gi_glob(l.rules[i].glob, path);
	}
	free(paths);
	gi_list_free(&l);
	return 0;
}
