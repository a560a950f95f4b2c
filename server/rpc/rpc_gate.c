/*
 * The experimentalApi gate, as upstream's: a connection that did not ask for experimentalApi
 * in initialize gets -32600 "<method> requires experimentalApi capability" for an experimental
 * method, or "<method>.<member> requires experimentalApi capability" for an experimental
 * params member that is set. The list is the protocol's (protocol/defs/defs_experimental.c).
 * Upstream checks after decoding the params, so a malformed request gets its params error
 * first; an experimental method we do not implement is gated the same way (with the
 * capability it is then -32601, as any method we lack).
 */
#include <stdlib.h>

#include "protocol/defs/defs.h"
#include "protocol/xmalloc.h"
#include "rpc_int.h"

/* Refuse a request of an experimental method or member without the capability; 1 if answered. */
int
rpc_gate_refuse(struct rpc *r, json_t *id, const char *method, const json_t *params)
{
	const char *gate;
	char *why;

	if (r->experimental || (gate = defs_experimental_gate(method, params)) == NULL)
		return 0;
	why = *gate == '\0' ? xasprintf("%s requires experimentalApi capability", method)
			    : xasprintf("%s.%s requires experimentalApi capability", method, gate);
	rpc_send_error(r, id, RPC_INVALID_REQUEST, why, NULL);
	free(why);
	return 1;
}

/*
 * A method no table has: an experimental one of upstream's is refused as upstream refuses it
 * (before initialize, or without the capability); 1 if answered, else it is not found.
 */
int
rpc_gate_unknown(struct rpc *r, json_t *id, const char *method)
{
	if (!defs_experimental_method(method) || r->experimental)
		return 0;
	if (!r->initialized) {
		rpc_send_error(r, id, RPC_INVALID_REQUEST, "Not initialized", NULL);
		return 1;
	}
	return rpc_gate_refuse(r, id, method, NULL);
}
