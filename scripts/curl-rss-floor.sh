#!/bin/sh
# What loading Debian's libcurl costs a process before any code of ours runs: RSS after
# dlopen("libcurl.so.4") and after curl_global_init, in a program that does nothing else
# (docs/benchmarks.md, "2026-11-26"). Usage: scripts/curl-rss-floor.sh [now|lazy]
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/floor.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long
rss_kib(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f != NULL)
		fclose(f);
	return kb;
}

int
main(int argc, char **argv)
{
	int mode = argc > 1 && strcmp(argv[1], "lazy") == 0 ? RTLD_LAZY : RTLD_NOW;
	long before = rss_kib(), loaded, inited;
	void *lib = dlopen("libcurl.so.4", mode | RTLD_LOCAL);
	int (*global_init)(long);

	if (lib == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	loaded = rss_kib();
	*(void **)&global_init = dlsym(lib, "curl_global_init");
	global_init(3); /* CURL_GLOBAL_DEFAULT */
	inited = rss_kib();
	printf("RSS: start %.1f MiB, after dlopen %.1f MiB, after curl_global_init %.1f MiB\n",
		before / 1024.0, loaded / 1024.0, inited / 1024.0);
	return 0;
}
C
cc -O2 -o "$dir/floor" "$dir/floor.c"
"$dir/floor" "${1:-now}"
