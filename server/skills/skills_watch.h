/*
 * skills/changed's watches (skills_watch.c): one set per connection, on the skill roots of
 * the cwds of its threads. A change drops the cached skills and calls changed(arg): at once,
 * then at most once per SKILLS_CHANGED_THROTTLE seconds (upstream 0.169's 10 s).
 */
#ifndef SKILLS_WATCH_H
#define SKILLS_WATCH_H

#include <ev.h>

#define SKILLS_CHANGED_THROTTLE 10.0

struct skills_watch;

struct skills_watch *skills_watch_new(struct ev_loop *loop, void (*changed)(void *arg), void *arg);
/* Nothing is reported afterwards. Accepts NULL. */
void skills_watch_free(struct skills_watch *w);
/* Watch the roots of cwd too (absolute); 0 or -errno (inotify refused). */
int skills_watch_cwd(struct skills_watch *w, const char *cwd);

#endif
