/*
 * config/value/write and config/batchWrite as upstream answers them: the edit itself is
 * server/config/config_edit.c's; here the params become its arguments and its failures
 * become upstream's errors: -32600 with data {config_write_error_code} for the request's
 * faults, -32603 for the file's (it could not be read, parsed or written).
 */
#include <stdlib.h>

#include "config_write.h"
#include "config/config.h"
#include "rpc/rpc.h"
#include "api/session.h"

/* Answer with the write's result or its error. */
static void
config_write_answer(struct rpc_req *req, const json_t *edits, json_t *params)
{
	const char *code = NULL;
	char *cause = NULL;
	json_t *r = config_write(edits, json_string_value(json_object_get(params, "filePath")),
		json_string_value(json_object_get(params, "expectedVersion")), &code, &cause);

	if (r != NULL)
		rpc_reply(req, r);
	else if (code != NULL)
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause,
			json_pack("{s:s}", "config_write_error_code", code));
	else
		rpc_reply_error(req, RPC_INTERNAL_ERROR, cause, NULL);
	free(cause);
}

/* config/value/write: one edit. */
static void
config_write_value(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *edits = json_pack("[{s:O, s:O, s:O}]", "keyPath",
		json_object_get(params, "keyPath"), "value", json_object_get(params, "value"),
		"mergeStrategy", json_object_get(params, "mergeStrategy"));

	(void)s;
	config_write_answer(req, edits, params);
	json_decref(edits);
}

/* config/batchWrite: every edit, written together or not at all. */
static void
config_write_batch(struct session *s, struct rpc_req *req, json_t *params)
{
	(void)s;
	config_write_answer(req, json_object_get(params, "edits"), params);
}

const struct rpc_method api_config_write_methods[] = {
	{"config/value/write", config_write_value, 0},
	{"config/batchWrite", config_write_batch, 0},
	{NULL, NULL, 0},
};
