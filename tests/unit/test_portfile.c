#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/portfile.h"

/* A port file's text: one port in 1..65535, nothing else. */
static void parse_takes_one_port_and_nothing_else(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int port;
	} cases[] = {
		{ "8790\n", 8790 }, { "8790", 8790 }, { "1", 1 },	{ "65535\n", 65535 },
		{ "65536", 0 },	    { "0", 0 },	      { "08790", 0 },	{ "", 0 },
		{ "\n", 0 },	    { "-1", 0 },      { " 8790", 0 },	{ "8790 \n", 0 },
		{ "87a0", 0 },	    { "8790\n\n", 0 }, { "123456", 0 }, { "99999", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(portfile_parse(cases[i].text, strlen(cases[i].text)), cases[i].port);
}

/* Written beside the key at 0600, read back; none read as 0; a rewrite
 * replaces it whole, leaving no temporary. */
static void write_then_read_beside_the_key(void **state)
{
	(void)state;
	char dir[] = "/tmp/roastop-portfile-XXXXXX", key[96], port[112];
	assert_non_null(mkdtemp(dir));
	snprintf(key, sizeof(key), "%s/key", dir);
	snprintf(port, sizeof(port), "%s/key.port", dir);
	assert_int_equal(portfile_read(key), 0);
	assert_int_equal(portfile_write(key, 18243), 0);
	assert_int_equal(portfile_read(key), 18243);
	assert_int_equal(portfile_write(key, 8790), 0);
	assert_int_equal(portfile_read(key), 8790);
	struct stat st;
	assert_int_equal(stat(port, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	char tmp[128];
	snprintf(tmp, sizeof(tmp), "%s.tmp", port);
	assert_int_not_equal(access(tmp, F_OK), 0);
	unlink(port);
	char missing[128];
	snprintf(missing, sizeof(missing), "%s/no/such/key", dir);
	assert_int_equal(portfile_write(missing, 8790), -1);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_takes_one_port_and_nothing_else),
		cmocka_unit_test(write_then_read_beside_the_key),
	};
	return cmocka_run_group_tests_name("portfile", tests, NULL, NULL);
}
