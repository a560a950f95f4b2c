/*
 * What the rpc fuzz target (fuzz_rpc.c) needs from its environment (fuzz_rpc_env.c): a fresh
 * scratch tree per process (CODEX_HOME with a config.toml whose model is unreachable, and a
 * workspace), the process confined so that fuzzed fs/ requests can write nowhere else, and
 * spawn_start replaced by a fake that runs no command.
 */
#ifndef FUZZ_RPC_H
#define FUZZ_RPC_H

#include <stddef.h>

/* Set up the scratch tree, the environment, the confinement and the fake spawn (once). */
void fuzz_env_init(void);
/* Before each input: the workspace and CODEX_HOME back to their initial content. */
void fuzz_env_reset(void);
/* After each input: reap what the fake spawn forked and was not reaped by the loop. */
void fuzz_env_reap(void);
/* The workspace and CODEX_HOME paths ("@WS@" and "@HOME@" in inputs stand for them). */
const char *fuzz_env_ws(void);
const char *fuzz_env_home(void);
/* True when the confinement is in force; without it, mutating fs/ requests are dropped. */
int fuzz_env_confined(void);

#endif
