/* The browser sign-in from the protocol's side (login_api.c). */
#ifndef LOGIN_API_H
#define LOGIN_API_H

struct rpc;
struct rpc_req;
struct session;

/* account/login/start {type:"chatgpt"}: answered once the callback server listens;
 * signed_in(rpc) sends account/updated when the sign-in succeeds. */
void login_api_chatgpt_start(
	struct session *s, struct rpc_req *req, void (*signed_in)(struct rpc *));
/* account/login/start {type:"chatgptDeviceCode"}: answered once the issuer gave a user code. */
void login_api_device_start(
	struct session *s, struct rpc_req *req, void (*signed_in)(struct rpc *));
/* Whether id is the pending sign-in (the caller answers {status:"canceled"}, then calls
 * login_api_drop_pending, which ends it and sends login/completed). */
int login_api_cancel(const char *id);
/* End a pending sign-in (a cancel, or another login replacing it): "Login was not
 * completed". */
void login_api_drop_pending(void);
/* The connection ends: its sign-in stops, the port is freed. */
void login_api_detach(struct session *s);

#endif
