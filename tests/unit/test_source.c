/* The source interface's shape (source.h): every registry source fills
 * the core and every slot its capabilities require, and the app's questions
 * about a capability get the loop's "without it" answer from a source that
 * lacks it and the source's own answer from one that has it. */
#include "test_util.h"

#include <string.h>

#include "roastop/source.h"

static int calls;

static const char *fake_text(const void *src)
{
	(void)src;
	calls++;
	return "said";
}

static bool fake_yes(const void *src)
{
	(void)src;
	calls++;
	return true;
}

static bool fake_tick(void *src)
{
	(void)src;
	calls++;
	return true;
}

static bool fake_address(const void *src, struct sockaddr_storage *addr, socklen_t *len)
{
	(void)src;
	(void)addr;
	*len = 1;
	calls++;
	return true;
}

static void fake_on_event(void *src, const struct event *ev)
{
	(void)src;
	(void)ev;
	calls++;
}

static bool fake_take(void *src, const char *buf, size_t len, int port, double now)
{
	(void)src;
	(void)buf;
	(void)now;
	calls += len == 3;
	return port == 8790;
}

static void fake_finish(void *src, double now)
{
	(void)src;
	(void)now;
	calls++;
}

static const struct source_end fake_end = { "end of recording", "cut", false };

static const struct source_end *fake_ended(const void *src)
{
	(void)src;
	calls++;
	return &fake_end;
}

static void registry_fills_the_core_and_its_capabilities(void **state)
{
	(void)state;
	size_t n = 0, recorded = 0;
	for (const struct source_ops *const *ops = source_registry; *ops; ops++, n++) {
		const struct source_ops *o = *ops;
		assert_non_null(o->name);
		assert_true(o->wanted && o->open && o->pollfds && o->dispatch && o->stats &&
			    o->close);
		if (o->senders)
			assert_true(o->senders->hint && o->senders->address && o->senders->take);
		if (o->watch)
			assert_true(o->watch->alert != NULL);
		if (o->recorded) {
			assert_non_null(o->recorded->ended);
			recorded++;
		}
		if (o->run_hooks)
			assert_true(o->run_hooks->on_event || o->run_hooks->busy ||
				    o->run_hooks->finish);
	}
	assert_true(n >= 4);
	assert_int_equal(recorded, 1);
}

static void without_a_capability_the_loop_goes_without(void **state)
{
	(void)state;
	static const struct source_run_hooks no_hooks = { 0 };
	const struct source_ops bare = { .name = "bare" }, empty = { .run_hooks = &no_hooks };
	struct sockaddr_storage addr;
	socklen_t len = 0;
	struct event ev = test_event(EV_LOG, 1.0);
	calls = 0;
	for (const struct source_ops *o = &bare; o; o = o == &bare ? &empty : NULL) {
		assert_null(source_hint(o, NULL));
		assert_false(source_address(o, NULL, &addr, &len));
		assert_false(source_take(o, NULL, "abc", 3, 8790, 1.0));
		assert_null(source_alert(o, NULL));
		assert_false(source_tick(o, NULL));
		source_on_event(o, NULL, &ev);
		assert_false(source_busy(o, NULL));
		source_finish(o, NULL, 1.0);
		assert_null(source_ended(o, NULL));
	}
	assert_int_equal(len, 0);
	assert_int_equal(calls, 0);
}

static void with_a_capability_its_slots_answer(void **state)
{
	(void)state;
	static const struct source_senders senders = { fake_text, fake_address, fake_take };
	static const struct source_watch watch = { fake_text, fake_tick };
	static const struct source_run_hooks hooks = { fake_on_event, fake_yes, fake_finish };
	static const struct source_recorded recorded = { fake_ended };
	const struct source_ops o = { .name = "full", .senders = &senders, .watch = &watch,
				      .run_hooks = &hooks,
				      .recorded = &recorded };
	struct sockaddr_storage addr;
	socklen_t len = 0;
	struct event ev = test_event(EV_LOG, 1.0);
	calls = 0;
	assert_string_equal(source_hint(&o, NULL), "said");
	assert_true(source_address(&o, NULL, &addr, &len));
	assert_int_equal(len, 1);
	assert_true(source_take(&o, NULL, "abc", 3, 8790, 1.0));
	assert_false(source_take(&o, NULL, "abc", 3, 8791, 1.0));
	assert_string_equal(source_alert(&o, NULL), "said");
	assert_true(source_tick(&o, NULL));
	source_on_event(&o, NULL, &ev);
	assert_true(source_busy(&o, NULL));
	source_finish(&o, NULL, 1.0);
	assert_ptr_equal(source_ended(&o, NULL), &fake_end);
	assert_int_equal(calls, 10);
}

/* Each registry source's counters come back by field, as its table names
 * them (the same name in another group is not the field); a name the
 * registry lacks is read as nothing. */
static void counters_read_by_field(void **state)
{
	(void)state;
	for (const struct source_ops *const *ops = source_registry; *ops; ops++) {
		struct source_counter c[2 * SOURCE_COUNTERS_MAX];
		size_t n = 0;
		for (const struct source_field *f = (*ops)->fields; f && f->name; f++, n += 2) {
			c[n] = (struct source_counter){ "elsewhere", f->name, 7 };
			c[n + 1] = (struct source_counter){ f->group, f->name, 100 + n };
		}
		struct ev_counters ev = { .source = (*ops)->name, .counters = c, .n_counters = n };
		struct source_typed t;
		source_typed_of(&ev, &t);
		assert_int_equal(t.role, (*ops)->role);
		n = 0;
		for (const struct source_field *f = (*ops)->fields; f && f->name; f++, n += 2) {
			uint64_t v;
			memcpy(&v, (const char *)&t + f->off, sizeof(v));
			assert_int_equal(v, 100 + n);
		}
		ev.source = "nobody";
		source_typed_of(&ev, &t);
		assert_int_equal(t.role, SOURCE_PLAIN);
		assert_int_equal(t.datagrams + t.tasks + t.connects, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry_fills_the_core_and_its_capabilities),
		cmocka_unit_test(without_a_capability_the_loop_goes_without),
		cmocka_unit_test(with_a_capability_its_slots_answer),
		cmocka_unit_test(counters_read_by_field),
	};
	return cmocka_run_group_tests_name("source", tests, NULL, NULL);
}
