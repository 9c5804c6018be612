/* A recording of hostile bytes: the reader and run_apply never crash, and
 * every line is either applied or counted as rejected. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roastop/replay.h"
#include "roastop/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/roastop-fuzz-replay-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	char err[256];
	struct replay *rd = replay_open(path, err, sizeof(err));
	struct run *r = malloc(sizeof(*r));
	if (rd && r && run_init(r) == 0) {
		struct event ev;
		event_init(&ev);
		uint64_t applied = 0;
		while (replay_next(rd, &ev) == 1) {
			run_apply(r, &ev);
			applied++;
		}
		if (applied + replay_rejects(rd)->total > replay_lines(rd))
			abort();
		event_free(&ev);
		run_destroy(r);
	}
	free(r);
	replay_close(rd);
	unlink(path);
	return 0;
}
