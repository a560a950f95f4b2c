/* Externally managed ChatGPT tokens from the protocol's side (external_api.c). */
#ifndef EXTERNAL_API_H
#define EXTERNAL_API_H

#include <jansson.h>

struct rpc;
struct rpc_req;
struct session;

/* account/login/start {type:"chatgptAuthTokens"}: answers req and sends login/completed on
 * notify (the caller sends account/updated); 0, or -1 when refused (req answered). */
int external_api_login(struct rpc_req *req, json_t *params, struct rpc *notify);
/* The connection that answers account/chatgptAuthTokens/refresh; its end forgets the tokens. */
void external_api_attach(struct session *s);
void external_api_detach(struct session *s);

#endif
