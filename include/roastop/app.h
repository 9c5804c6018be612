/* The application: one poll() loop over a signalfd, timerfds and the
 * sources' descriptors (brubeck's habit: no signal handler doing real
 * work, no sleeps). Events flow source -> recorder -> run_apply. */
#ifndef ROASTOP_APP_H
#define ROASTOP_APP_H

#include "roastop/config.h"

int app_main(const struct app_config *cfg);

#endif
