/* The JSON writer's styles: indented, on one line, and JSONW_CJSON, which
 * must be the very text cJSON's compact printer gave for metrics.json's
 * roastop blocks (their bytes did not change when jsonw took them over). */
#include "test_util.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "roastop/jsonw.h"

static const double NUMS[] = {
	0, -0.0, 1, -7, 0.5, 0.1, 0.192656763336443, 0.19265676333644297, 1e-7, 123.456789,
	2147483647.0, 2147483648.0, -2147483648.0, 3e9, 1e15 + 1, 1e16, 12345678901234567.0,
	1.0 / 3, 2.6776392459869385, 1e300, 5e-324,
};
static const char *const STRS[] = {
	"", "plain", "quote\" and \\ back", "\b\f\n\r\t", "\x01\x1f\x7f", "\xc3\xa9t\xc3\xa9",
	"[\"sum-082f\", 0, 1]",
};

static void flat_is_cjsons_compact_text(void **state)
{
	(void)state;
	cJSON *o = cJSON_CreateObject();
	struct strbuf sb;
	strbuf_init(&sb);
	struct jsonw w;
	jsonw_init(&w, &sb);
	jsonw_object_as(&w, NULL, JSONW_CJSON);
	cJSON *arr = cJSON_AddArrayToObject(o, "n");
	jsonw_array(&w, "n");
	for (size_t i = 0; i < sizeof(NUMS) / sizeof(NUMS[0]); i++) {
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(NUMS[i]));
		jsonw_num(&w, NULL, NUMS[i]);
	}
	jsonw_end(&w, ']');
	for (size_t i = 0; i < sizeof(STRS) / sizeof(STRS[0]); i++) {
		cJSON_AddStringToObject(o, STRS[i], STRS[i]);
		jsonw_str(&w, STRS[i], STRS[i]);
	}
	cJSON_AddNullToObject(o, "none");
	jsonw_opt(&w, "none", optnum_none());
	cJSON_AddBoolToObject(o, "yes", true);
	jsonw_bool(&w, "yes", true);
	cJSON_AddObjectToObject(o, "empty");
	jsonw_object(&w, "empty");
	jsonw_end(&w, '}');
	jsonw_end(&w, '}');
	char *want = cJSON_PrintUnformatted(o);
	assert_non_null(want);
	assert_non_null(sb.data);
	assert_int_equal(strncmp(sb.data, want, strlen(want)), 0);
	assert_string_equal(sb.data + strlen(want), "\n"); /* the top level's end */
	free(want);
	cJSON_Delete(o);
	strbuf_free(&sb);
}

/* A one-line block inside an indented object: the block on its key's
 * line, a container inside it on that line too, the indentation back
 * after it. */
static void line_styles_inside_indented(void **state)
{
	(void)state;
	struct strbuf sb;
	strbuf_init(&sb);
	struct jsonw w;
	jsonw_init(&w, &sb);
	jsonw_object(&w, NULL);
	jsonw_object(&w, "roastop");
	jsonw_object_as(&w, "session", JSONW_CJSON);
	jsonw_num(&w, "runs", 1);
	jsonw_object(&w, "rejected");
	jsonw_num(&w, "total", 0);
	jsonw_end(&w, '}');
	jsonw_end(&w, '}');
	jsonw_num(&w, "after", 0.25);
	jsonw_array(&w, "records");
	jsonw_object_as(&w, NULL, JSONW_LINE);
	jsonw_num(&w, "seq", 0.1 + 0.2); /* exact, not cJSON's 15 digits */
	jsonw_array(&w, "pair");
	jsonw_str(&w, NULL, "\b");
	jsonw_opt(&w, NULL, optnum_none());
	jsonw_end(&w, ']');
	jsonw_end(&w, '}');
	jsonw_array_as(&w, NULL, JSONW_COMPACT);
	jsonw_num(&w, NULL, 1);
	jsonw_num(&w, NULL, 2);
	jsonw_end(&w, ']');
	jsonw_end(&w, ']');
	jsonw_end(&w, '}');
	jsonw_end(&w, '}');
	assert_string_equal(sb.data, "{\n  \"roastop\": {\n    \"session\": {\"runs\":1,"
				     "\"rejected\":{\"total\":0}},\n    \"after\": 0.25,\n"
				     "    \"records\": [\n      {\"seq\": 0.30000000000000004, "
				     "\"pair\": [\"\\u0008\", null]},\n      [1,2]\n    ]\n  }\n}\n");
	strbuf_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flat_is_cjsons_compact_text),
		cmocka_unit_test(line_styles_inside_indented),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
