/*
 * NUL characters in request strings. "\u0000" is valid JSON, but our handlers hand strings to
 * C (argv, paths, the environment), where a NUL would cut them short. Rule: such a request is
 * still parsed and answered, -32602 with the JSON pointer of the first string (or key) that
 * holds one; jansson refuses NUL in object keys, so a line with one there is read again with
 * those keys' "\u0000" turned into U+FFFF, which the pointer shows as NUL again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "rpc_int.h"

#define RPC_POINTER_MAX 65536 /* a JSON pointer named in an error, at most */

/*
 * A line whose object keys hold "\u0000" (jansson refuses NUL in keys): the same line with
 * each such escape turned into "\uffff", so the request can still be read and answered.
 * Values keep their NUL (JSON_ALLOW_NUL); keys are then known to have held one by U+FFFF.
 */
char *
rpc_nul_mark(const char *line, size_t len)
{
	char *copy = xstrndup(line, len);
	size_t i, slashes = 0;

	for (i = 0; i < len; i++) {
		if (copy[i] == '\\') {
			slashes++;
			continue;
		}
		if (slashes % 2 == 1 && copy[i] == 'u' && i + 4 < len &&
			memcmp(copy + i + 1, "0000", 4) == 0)
			memcpy(copy + i + 1, "ffff", 4);
		slashes = 0;
	}
	return copy;
}

/* Append a JSON pointer token to a path (~ and / escaped; U+FFFF from rpc_nul_mark is NUL). */
static void
rpc_nul_pointer(struct buf *path, const char *key, size_t klen)
{
	buf_addc(path, '/');
	for (size_t i = 0; i < klen; i++) {
		if (key[i] == '~' || key[i] == '/')
			buf_add(path, key[i] == '~' ? "~0" : "~1", 2);
		else if (i + 2 < klen && memcmp(key + i, "\xef\xbf\xbf", 3) == 0) {
			buf_addc(path, '\0');
			i += 2;
		} else
			buf_addc(path, key[i]);
	}
}

/*
 * Whether v holds a string (or key) with a NUL character; path then ends with the JSON
 * pointer of the first one. Our handlers hand strings to C (argv, paths, the environment),
 * where a NUL would cut them short: such a request is refused, -32602 with this path.
 */
static int
rpc_nul_find(const json_t *v, struct buf *path, int marked)
{
	size_t at = path->len, i;
	const char *k;
	char idx[24];
	json_t *e;

	if (json_is_string(v))
		return strlen(json_string_value(v)) != json_string_length(v);
	if (json_is_array(v)) {
		json_array_foreach((json_t *)v, i, e)
		{
			snprintf(idx, sizeof idx, "%zu", i);
			rpc_nul_pointer(path, idx, strlen(idx));
			if (rpc_nul_find(e, path, marked))
				return 1;
			buf_truncate(path, at);
		}
		return 0;
	}
	json_object_foreach((json_t *)v, k, e)
	{
		rpc_nul_pointer(path, k, strlen(k));
		if ((marked && strstr(k, "\xef\xbf\xbf") != NULL) || rpc_nul_find(e, path, marked))
			return 1;
		buf_truncate(path, at);
	}
	return 0;
}

/* Refuse a request holding a NUL character in a string: -32602 naming where. 1 if refused. */
int
rpc_nul_refuse(struct rpc *r, json_t *id, const json_t *params)
{
	static const char text[] = "a string must not contain a NUL character";
	struct buf path, msg;
	json_t *data;

	if (!r->nul_escape)
		return 0; /* no "\u0000" in the line: no string can hold a NUL */
	buf_init(&path, RPC_POINTER_MAX);
	buf_adds(&path, "/params");
	if (!rpc_nul_find(params, &path, r->nul_marked)) {
		buf_free(&path);
		return 0;
	}
	buf_init(&msg, RPC_POINTER_MAX + 64);
	buf_adds(&msg, "Invalid params: ");
	buf_add(&msg, path.ptr, path.len);
	buf_printf(&msg, ": %s", text);
	data = json_pack(
		"{s:s%, s:s, s:s}", "path", path.ptr, path.len, "keyword", "nul", "message", text);
	rpc_send_error_n(r, id, RPC_INVALID_PARAMS, msg.ptr, msg.len, data);
	buf_free(&msg);
	buf_free(&path);
	return 1;
}
