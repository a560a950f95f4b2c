/*
 * What the MCP integration tests share: our MCP server (tests/fixtures/mcp/mcp_server.py),
 * upstream 0.169's recordings (tests/fixtures/mcp/upstream/), a mock script's calls of the
 * server's tools, and helpers around the turn fixture (turn_util.h).
 */
#ifndef MCP_UTIL_H
#define MCP_UTIL_H

#include <stddef.h>

#include <jansson.h>

struct tt;

#define FIXTURES "tests/fixtures/mcp/upstream/"
#define SERVER	 "tests/fixtures/mcp/mcp_server.py"

/* A call of the model: a raw item, since the mock's shorthand has no namespace. */
#define CALL(id, name, args)                                                                       \
	"{`type`:`response.output_item.done`,`item`:{`type`:`function_call`,`call_id`:`" id        \
	"`,`name`:`" name "`,`namespace`:`mcp__test`,`arguments`:`" args "`}}"
#define MSG(n)                                                                                     \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`},{`ev`:`message`,`id`:`m" n                  \
	"`,`text`:`done`},{`ev`:`completed`,`id`:`resp-" n "`}]}"
#define RESP(n, calls)                                                                             \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`}," calls ",{`ev`:`completed`,`id`:`resp-" n  \
	"`}]}"
#define SCRIPT(calls) "{`responses`:[" RESP("0", calls) "," MSG("1") "],`repeat`:true}"

/* A fixture whose config.toml has [mcp_servers.test] with args (TOML array items) and extra;
 * env: more daemon environment (NULL-terminated, may be NULL). */
void mcp_start_env(struct tt *f, const char *script, const char *args, const char *extra,
	const char *const *env);
void mcp_start(struct tt *f, const char *script, const char *args, const char *extra);
/* The next mcpServer/startupStatus/updated's params (new reference). */
json_t *mcp_status(struct tt *f, int timeout_ms);
/* Wait for the server `test`'s `starting` then `ready`. */
void mcp_ready(struct tt *f);
/* A recording of FIXTURES (new reference). */
json_t *mcp_fixture(const char *name);
/* The tool named `name` of a request body (borrowed), or NULL. */
json_t *mcp_body_tool(const json_t *body, const char *name);
/* Fail, printing both, unless want and got are equal. */
void mcp_equal(const char *what, const json_t *want, const json_t *got);
/* An item without its times (new reference). */
json_t *mcp_norm_item(const json_t *it);
/* A function_call_output without id and with a fixed wall time (new reference). */
json_t *mcp_norm_output(const json_t *out);
/* The mcpToolCall items completed in a turn against a recording's (times aside). */
void mcp_compare_items(const json_t *msgs, const json_t *want);
/* What the model got back for each call, against a recording's outputs. */
void mcp_compare_outputs(const json_t *body, const json_t *want);
/* A scratch folder for the server's log (heap), the log's text (heap), its removal. */
char *mcp_log_dir(void);
char *mcp_log(const char *dir);
void mcp_log_done(char *dir);
/* The type of a message's params.item, or "". */
const char *mcp_msg_item_type(const json_t *m);
/* Where in msgs the answer to request id is, the first item/completed of an item of type
 * is (SIZE_MAX: nowhere). */
size_t mcp_answer_at(const json_t *msgs, long long id);
size_t mcp_completed_at(const json_t *msgs, const char *type);

/*
 * @modelcontextprotocol/server-everything (npm), installed into $BUILD/mcp-npm once (never
 * committed): its path (heap), or NULL when npm cannot have it (the caller skips, counted).
 */
char *mcp_everything_entry(void);
/*
 * A file for `node -r` giving node 18 (Debian 12's) the global `crypto` node 19+ has: the
 * server's HTTP transport makes its session ids with it ("crypto is not defined"). Heap.
 */
char *mcp_everything_preload(void);

#endif
