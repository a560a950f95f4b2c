/* What hooks_config.c (discovery) and hooks_run.c (running) share. */
#ifndef HOOKS_INT_H
#define HOOKS_INT_H

#include "hooks.h"

/* One command handler that may run. */
struct hook_handler {
	enum hook_event event;
	char *matcher; /* NULL or "" or "*": every subject */
	char *command;
	long long timeout; /* seconds, >= 1 */
	int async;
	char *status_message; /* or NULL */
	char *source_path;
	const char *source; /* HookSource */
	long long display_order;
};

struct hook_set {
	int refs;
	struct hook_handler *h; /* runnable handlers, in display order */
	size_t n, cap;
	json_t *entries;  /* HookMetadata[] */
	json_t *warnings; /* string[] */
	int bypass;	  /* bypass_hook_trust: enabled hooks run untrusted */
};

/* Whether a handler's matcher selects subject (NULL: the event has none). */
int hooks_matches(const struct hook_handler *h, const char *subject);

#endif
