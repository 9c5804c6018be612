/* A recording of hostile bytes, read from a memfd: the reader and
 * run_apply never crash, every line is applied, rejected, blank or the
 * header, and the rejections kept are in line order within the file. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "roastop/replay.h"
#include "roastop/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void read_all(struct replay *rd, struct run *r)
{
	struct event ev;
	event_init(&ev);
	uint64_t applied = 0;
	int rc;
	while ((rc = replay_next(rd, &ev)) == 1) {
		check(ev.type > EV_NONE && ev.type < EV__COUNT);
		run_apply(r, &ev);
		applied++;
	}
	check(rc == 0);
	check(applied + replay_rejects(rd)->total <= replay_lines(rd));
	const struct replay_reject *first;
	size_t n = replay_first_rejects(rd, &first);
	check(n <= REPLAY_REPORT_MAX && n <= replay_rejects(rd)->total);
	for (size_t i = 0; i < n; i++) {
		check(first[i].line >= 1 && first[i].line <= replay_lines(rd));
		check(i == 0 || first[i].line > first[i - 1].line);
	}
	event_free(&ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-replay", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64], err[256];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	FILE *quiet = fopen("/dev/null", "w");
	struct replay *rd = replay_open(path, err, sizeof(err));
	struct run *r = malloc(sizeof(*r));
	if (rd && r && run_init(r) == 0) {
		replay_set_report(rd, quiet);
		read_all(rd, r);
		run_destroy(r);
	}
	free(r);
	replay_close(rd);
	if (quiet)
		fclose(quiet);
	close(fd);
	return 0;
}
