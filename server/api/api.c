/* The method tables of every protocol area, assembled for the JSON-RPC layer. */
#include <stddef.h>

#include "api.h"
#include "api/mcp/mcp_api.h"
#include "api/settings/config_write.h"
#include "profiles.h"
#include "startup.h"

const struct rpc_method *const api_methods[] = {
	api_initialize_methods,
	api_command_exec_methods,
	api_config_methods,
	api_config_requirements_methods,
	api_turn_methods,
	api_thread_methods,
	api_thread_read_methods,
	api_thread_ops_methods,
	api_fs_methods,
	api_fuzzy_search_methods,
	api_profiles_methods,
	api_skills_methods,
	api_config_write_methods,
	api_startup_methods,
	api_providers_methods,
	api_goals_methods,
	api_history_methods,
	api_sections_methods,
	api_attachments_methods,
	api_shellcmd_methods,
	api_account_methods,
	api_mcp_methods,
	api_mcp_oauth_methods,
	NULL,
};
