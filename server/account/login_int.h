/*
 * The browser sign-in's helpers shared by the flow (login_flow.c) and the CLI. Its loopback
 * server is io/loopback.h: upstream binds 1455 (after a `GET /cancel` to its holder, 10
 * attempts 200 ms apart), then 1457, the issuer's other allowed redirect.
 */
#ifndef LOGIN_INT_H
#define LOGIN_INT_H

#include <stddef.h>

#define LOGIN_DEFAULT_PORT  1455
#define LOGIN_FALLBACK_PORT 1457

/* The issuer's refusal of a code exchange as upstream shows it: error_description,
 * error.message, the error code, or the body itself; heap. */
char *login_token_refusal(const char *body, size_t len);

/* The pages the browser sees (login_page.c), in upstream 0.169's words; heap. */
char *login_page_success(void);
/* message: what failed; code: the error code shown (NULL: unknown_error); description:
 * the details (NULL: the message). */
char *login_page_error(const char *message, const char *code, const char *description);
/* The sentence for an OAuth error the issuer sent back to the callback. */
char *login_callback_error(const char *code, const char *description);

#endif
