#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "roastop/httpc.h"

/* The wheel's libcurl reads Debian's bundle; on a system that keeps its
 * own elsewhere (AlmaLinux: /etc/pki/tls/certs/ca-bundle.crt) the first
 * readable of the others is given instead, and nothing when libcurl's own
 * default is there or no bundle is. */
static void cainfo_falls_back_to_the_systems_bundle(void **state)
{
	(void)state;
	char dir[] = "/tmp/roastop-httpc-XXXXXX", here[64], missing[64];
	assert_non_null(mkdtemp(dir));
	snprintf(here, sizeof(here), "%s/ca-bundle.crt", dir);
	snprintf(missing, sizeof(missing), "%s/ca-certificates.crt", dir);
	FILE *f = fopen(here, "w");
	assert_non_null(f);
	fclose(f);
	const char *cands[] = { missing, here };
	assert_null(httpc_cainfo_pick(here, cands, 2));
	assert_string_equal(httpc_cainfo_pick(missing, cands, 2), here);
	assert_string_equal(httpc_cainfo_pick(NULL, cands, 2), here);
	assert_null(httpc_cainfo_pick(missing, cands, 1));
	unlink(here);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cainfo_falls_back_to_the_systems_bundle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
