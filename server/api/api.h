/*
 * Where the protocol meets the engine: one file per protocol area, each exporting its method
 * table (api_*_methods); api.c assembles them for the JSON-RPC layer.
 */
#ifndef API_H
#define API_H

#include <stddef.h>

#include "rpc/rpc.h"

struct session;
struct command_exec;
struct fs_session;
struct search_runner;

/* Every table, NULL-terminated: what rpc_new dispatches to. */
extern const struct rpc_method *const api_methods[];

/* initialize.c */
extern const struct rpc_method api_initialize_methods[];
/* command_exec.c */
extern const struct rpc_method api_command_exec_methods[];
struct command_exec *command_exec_new(struct session *s);
void command_exec_free(struct command_exec *t);
void command_exec_kill_all(struct command_exec *t);
void command_exec_resume(struct command_exec *t);
size_t command_exec_count(const struct command_exec *t);
/* fs.c: the fs/ methods (watch and unwatch too) and the connection's workspace state */
extern const struct rpc_method api_fs_methods[];
struct fs_session *fs_session_new(struct session *s);
/* Join the workers (their last completions answer their requests), then free. */
void fs_session_free(struct fs_session *f);
/* Disconnect or shutdown: watches dropped, searches cancelled (still answered). */
void fs_session_kill(struct fs_session *f);
size_t fs_session_watches(const struct fs_session *f);
/* One-shot searches still to answer. */
size_t fs_session_busy(const struct fs_session *f);
struct search_runner *fs_session_search(struct fs_session *f);
/* fuzzy_search.c: fuzzyFileSearch and its sessions */
extern const struct rpc_method api_fuzzy_search_methods[];
/* config.c */
extern const struct rpc_method api_config_methods[];
extern const struct rpc_method api_account_methods[];
/* config_requirements.c: configRequirements/read */
extern const struct rpc_method api_config_requirements_methods[];
extern const struct rpc_method api_turn_methods[];
/* shellcmd/shellcmd.c: thread/shellCommand */
extern const struct rpc_method api_shellcmd_methods[];
extern const struct rpc_method api_thread_methods[];
extern const struct rpc_method api_thread_read_methods[];
extern const struct rpc_method api_thread_ops_methods[];
/* history/history_api.c: thread/revert and thread/inject_items */
extern const struct rpc_method api_history_methods[];
/* sections/sections_api.c: the threadSection methods and thread/section/move */
extern const struct rpc_method api_sections_methods[];
/* attachments/attachments_api.c: the thread/attachment methods */
extern const struct rpc_method api_attachments_methods[];
/* skills.c: the skills/ methods; the watches of skills/changed start with a thread's cwd */
extern const struct rpc_method api_skills_methods[];
struct skills_session;
void skills_session_free(struct skills_session *k);
struct store_thread;
void skills_api_thread_opened(struct session *s, struct store_thread *t);
/* Load the configuration and send a configWarning for each problem (once, after initialize). */
void config_api_warnings(struct rpc *r);
struct config;
struct model_provider;
/* model/list's catalogue of a provider: an array of Model objects (new reference). */
json_t *config_api_catalog(const struct config *c, const struct model_provider *p);
/* models/debug_models.c: `debug models`, the catalogue in upstream's models.json shape, on stdout.
 */
int debug_models_main(int argc, char **argv);

#endif
