/*
 * configRequirements/read: what an administrator's requirements.toml (or MDM, or the cloud
 * bundle) imposes on the configuration. We read no requirements source, so the answer is
 * upstream 0.169's for a machine without one: no requirements, and Fast and Ultra Fast speed
 * modes gated independently (`supportsIndependentSpeedModes`, which upstream always sends).
 */
#include <stddef.h>

#include "api/api.h"
#include "rpc/rpc.h"

/* The method takes no params; the answer never changes, so nothing is read. */
static void
config_requirements_read(struct session *s, struct rpc_req *req, json_t *params)
{
	(void)s;
	(void)params;
	rpc_reply(req, json_pack("{s:b, s:n}", "supportsIndependentSpeedModes", 1, "requirements"));
}

const struct rpc_method api_config_requirements_methods[] = {
	{"configRequirements/read", config_requirements_read, 0},
	{NULL, NULL, 0},
};
