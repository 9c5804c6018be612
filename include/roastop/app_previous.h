/* Each open run's last comparable run (previous.h), looked for in a
 * thread of its own once the run has started, so that its start never
 * waits on the disk; and the output root's runs before this session (view
 * 8's), read once the same way when first wanted. Not in a replay: it
 * reproduces what its session saw, and the output root was not part of it. */
#ifndef ROASTOP_APP_PREVIOUS_H
#define ROASTOP_APP_PREVIOUS_H

#include "roastop/history.h"
#include "roastop/session.h"

#define APP_PREVIOUS_MAX 8 /* runs looked for at once */

struct app_look;
struct app_past;
struct app_previous {
	const char *root; /* the output root */
	struct app_look *looks; /* APP_PREVIOUS_MAX, allocated at the first tick */
	size_t next;
	struct app_past *past;
};

/* Starts the look of each of the newest open runs that started: cheap at
 * each wake. */
void app_previous_tick(struct app_previous *p, const struct session *ses);
/* NULL while looked for (wait: until found) or when none. */
const struct past_run *app_previous_of(const struct app_previous *p, const struct run *r,
				       bool wait);
/* The runs before, without those of ses; NULL until read. */
const struct history *app_previous_past(struct app_previous *p, const struct session *ses,
					bool want);
void app_previous_free(struct app_previous *p);

#endif
