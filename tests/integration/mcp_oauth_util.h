/*
 * What the MCP OAuth tests share (test_mcp_oauth.c, test_mcp_oauth_refresh.c): the mock
 * authorization and MCP server (tests/integration/mock_mcp_oauth.py), the login played as a
 * browser would, the token store, and the checks for secrets.
 */
#ifndef MCP_OAUTH_UTIL_H
#define MCP_OAUTH_UTIL_H

#include <sys/types.h>

#include <jansson.h>

#include "turn_util.h"

#define MOCK "tests/integration/mock_mcp_oauth.py"
#define CALL(id)                                                                                   \
	"{`type`:`response.output_item.done`,`item`:{`type`:`function_call`,`call_id`:`" id        \
	"`,`name`:`echo`,`namespace`:`mcp__oa`,`arguments`:`{\\`text\\`:\\`hi\\`}`}}"
#define RESP(n, calls)                                                                             \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`}," calls ",{`ev`:`completed`,`id`:`resp-" n  \
	"`}]}"
#define MSG(n)                                                                                     \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`},{`ev`:`message`,`id`:`m" n                  \
	"`,`text`:`done`},{`ev`:`completed`,`id`:`resp-" n "`}]}"
#define SCRIPT(calls) "{`responses`:[" RESP("0", calls) "," MSG("1") "],`repeat`:true}"

/* The mock: its process, port and log. */
struct om {
	pid_t pid;
	int port;
	char dir[64], log[96], pf[96];
};

extern pid_t om_live;

int om_teardown(void **state);
void om_start(struct om *m);
void om_stop(struct om *m);
/* The mock's log (new reference). */
json_t *om_log(const struct om *m);
/* How many token requests of a grant type the mock saw. */
int om_grants(const struct om *m, const char *grant);
/*
 * A GET of an http://127.0.0.1:PORT/... url (the test's browser): the status, the Location
 * header (heap, or NULL) and the body (heap).
 */
int om_browse(const char *url, char **location, char **body);
/* A daemon whose config has [mcp_servers.oa] (the mock), local (stdio) and tok (bearer). */
void oa_start(struct tt *f, const struct om *m, const char *script);
/* The next startupStatus of server `oa` that is not `starting` (new reference). */
json_t *oa_settled(struct tt *f);
/* A new thread (the one turns now run in), its `oa` server settled with this status. */
void oa_thread(struct tt *f, const char *status);
/* Start a login for `oa`: the authorization URL (heap); *login_id its id (heap). */
char *oa_login_start(struct tt *f, char **login_id);
/* The browser's part: /authorize, then its redirect to our callback; the callback's status. */
int oa_browse(const char *auth_url, char **callback);
/* mcpServer/oauthLogin/completed's params (new reference). */
json_t *oa_completed(struct tt *f);
/* The whole login, successful (expires_in set on the mock first when > 0). */
void oa_login(struct tt *f, const struct om *m, int expires_in);
void om_ctl(const struct om *m, const char *what);
/* CODEX_HOME/.credentials.json (new reference); asserts it is 0600. */
json_t *oa_store(const struct tt *f);
/* The stored entry of `oa` (borrowed from store). */
json_t *oa_entry(const json_t *store);
/* How many tools/call POSTs carried this token / were refused (401: a token not valid). */
int om_calls_with(const struct om *m, const char *token);
/* The text of the first mcpToolCall item's first content, or its error (borrowed). */
const char *oa_item_text(const json_t *msgs, size_t n, int *failed);
/* The authStatus mcpServerStatus/list reports for a server. */
char *oa_auth_status(struct tt *f, const char *name);
/* No secret the mock handed out or was sent (codes, verifiers, tokens) in our stderr or in
 * any rollout under CODEX_HOME; at least one rollout is looked at. */
void oa_no_secrets(struct tt *f, const struct om *m);

#endif
