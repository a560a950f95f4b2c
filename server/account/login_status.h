/* `app-server login status`: upstream's report of the login kept in auth.json. */
#ifndef LOGIN_STATUS_H
#define LOGIN_STATUS_H

#include <stdio.h>

/* Print the status of the login in home/auth.json to err, as upstream; the exit status. */
int login_status_main(const char *home, FILE *err);

#endif
