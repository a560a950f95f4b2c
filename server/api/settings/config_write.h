/* config/value/write and config/batchWrite: edits of the user's config.toml. */
#ifndef API_CONFIG_WRITE_H
#define API_CONFIG_WRITE_H

#include "rpc/rpc.h"

extern const struct rpc_method api_config_write_methods[];

#endif
