/* `app-server login [--with-api-key | --device-auth]` and `app-server logout`, as upstream's CLI
 * answers them. */
#ifndef LOGIN_CLI_H
#define LOGIN_CLI_H

#include <stdio.h>

/* Store the API key read from in (not a terminal) in home/auth.json; the exit status. */
int login_cli_api_key(const char *home, FILE *in, FILE *err);
/* `login` (device 0: the browser sign-in) or `login --device-auth` (login_cli_flow.c): runs
 * until signed in or failed; the exit status. */
int login_cli_chatgpt(int device, FILE *out, FILE *err);
/* Remove home/auth.json; the exit status. */
int login_cli_logout(const char *home, FILE *err);

#endif
