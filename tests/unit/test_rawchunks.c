/* Chunk records: every one kept up to the cap, in arrival order; past it
 * a uniform sample with a fixed seed; the pool's refusal caps the set;
 * fields not given stay not given. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

#include "roastop/rawchunks.h"

static struct ev_chunk chunk_of(double dur, double events)
{
	struct ev_chunk c;
	memset(&c, 0, sizeof(c));
	c.duration = optnum_of(dur);
	c.num_events = optnum_of(events);
	c.file = "root://eos/store/nano_7.root";
	c.dataset = "ttbar";
	return c;
}

static void keeps_all_up_to_the_cap_in_order(void **state)
{
	(void)state;
	struct rawchunks s;
	rawchunks_init(&s);
	for (int i = 0; i < 1000; i++) {
		struct ev_chunk c = chunk_of(i, 10 * i);
		rawchunks_add(&s, &c);
	}
	assert_int_equal(s.n, 1000);
	assert_false(rawchunks_sampled(&s));
	const struct rawchunk **o = malloc(s.n * sizeof(*o));
	rawchunks_ordered(&s, o);
	for (size_t i = 0; i < s.n; i++) {
		assert_true(o[i]->v[RC_DURATION] == (double)i);
		assert_true(o[i]->v[RC_NUM_EVENTS] == 10.0 * i);
		assert_true(isnan(o[i]->v[RC_T_START])); /* not given */
		assert_string_equal(o[i]->dataset, "ttbar");
	}
	free(o);
	rawchunks_free(&s);
}

static double sampled_mean(uint64_t n, size_t *kept)
{
	struct rawchunks s;
	rawchunks_init(&s);
	for (uint64_t i = 0; i < n; i++) {
		struct ev_chunk c = chunk_of((double)i / (double)n, 1);
		rawchunks_add(&s, &c);
	}
	assert_int_equal(s.total, n);
	assert_true(rawchunks_sampled(&s));
	const struct rawchunk **o = malloc(s.n * sizeof(*o));
	rawchunks_ordered(&s, o);
	double sum = 0;
	for (size_t i = 0; i < s.n; i++) {
		sum += o[i]->v[RC_DURATION];
		if (i)
			assert_true(o[i]->seq > o[i - 1]->seq); /* arrival order */
	}
	*kept = s.n;
	free(o);
	rawchunks_free(&s);
	return sum / (double)*kept;
}

/* Durations rising 0..1 over the run: a sample biased to the start (the
 * first N) or the end would be far from 0.5; a uniform one of 4,096 is
 * within a few standard errors (0.29 / 64). And the same input keeps the
 * same sample. */
static void past_the_cap_a_uniform_repeatable_sample(void **state)
{
	(void)state;
	size_t kept = 0, kept2 = 0;
	double mean = sampled_mean(200000, &kept);
	assert_int_equal(kept, RAWCHUNKS_MAX);
	assert_true(fabs(mean - 0.5) < 0.015);
	assert_true(sampled_mean(200000, &kept2) == mean);
}

static void the_pool_caps_the_set(void **state)
{
	(void)state;
	struct strmap_pool pool = { .used = 0, .cap = 300 * sizeof(struct rawchunk) };
	struct rawchunks s;
	rawchunks_init(&s);
	rawchunks_set_pool(&s, &pool);
	for (int i = 0; i < 5000; i++) {
		struct ev_chunk c = chunk_of(1, 1);
		rawchunks_add(&s, &c);
	}
	assert_int_equal(s.n, 256); /* the first block; doubling would pass the pool */
	assert_int_equal(pool.used, 256 * sizeof(struct rawchunk));
	assert_true(rawchunks_sampled(&s));
	rawchunks_free(&s);
	assert_int_equal(pool.used, 0);
}

static void long_file_keeps_its_end(void **state)
{
	(void)state;
	char path[400];
	memset(path, 'd', sizeof(path));
	strcpy(path + 380, "/nano_42.root");
	struct ev_chunk c = chunk_of(1, 1);
	c.file = path;
	struct rawchunks s;
	rawchunks_init(&s);
	rawchunks_add(&s, &c);
	size_t n = strlen(s.items[0].file);
	assert_int_equal(n, RAWCHUNKS_FILE_LEN - 1);
	assert_string_equal(s.items[0].file + n - 13, "/nano_42.root");
	assert_string_equal(rawchunks_field_name(RC_ACCESSED_UNCOMPRESSED_BYTES),
			    "accessed_uncompressed_bytes");
	rawchunks_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keeps_all_up_to_the_cap_in_order),
		cmocka_unit_test(past_the_cap_a_uniform_repeatable_sample),
		cmocka_unit_test(the_pool_caps_the_set),
		cmocka_unit_test(long_file_keeps_its_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
