#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roastop/theme.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(THEME_MAX_FILE + 1);
	assert_non_null(buf);
	*len = fread(buf, 1, THEME_MAX_FILE, f);
	fclose(f);
	return buf;
}

static int parse(struct theme *t, const char *text, char *err, size_t errsz)
{
	theme_default(t);
	return theme_parse(t, text, strlen(text), "test.theme", err, errsz);
}

/* The built-in default and themes/default.theme are the same theme. */
static void builtin_equals_file(void **state)
{
	(void)state;
	struct theme a, b;
	char err[256];
	size_t len;
	char *text = slurp("themes/default.theme", &len);
	theme_default(&a);
	memset(&b, 0xAB, sizeof(b));
	theme_default(&b);
	assert_int_equal(theme_parse(&b, text, len, "default.theme", err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_string_equal(a.name, "default");
	assert_int_equal(a.color[TH_GRAPH_START].kind, TC_RGB);
	free(text);
}

/* Every shipped theme parses, sets every key and has a distinct name. */
static void shipped_themes_are_complete(void **state)
{
	(void)state;
	static const char *const names[] = { "default", "light", "high-contrast", "16color", "mono" };
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(names); i++) {
		char path[128], err[256];
		snprintf(path, sizeof(path), "themes/%s.theme", names[i]);
		size_t len;
		char *text = slurp(path, &len);
		for (int e = 0; e < TH__COUNT; e++) {
			char key[64];
			snprintf(key, sizeof(key), "\n%s = ", theme_key(e));
			assert_non_null(strstr(text, key)); /* no key left to the default */
		}
		struct theme t;
		theme_default(&t);
		assert_int_equal(theme_parse(&t, text, len, path, err, sizeof(err)), 0);
		assert_string_equal(t.name, names[i]);
		free(text);
	}
}

static void colour_values(void **state)
{
	(void)state;
	struct theme_color c;
	assert_true(theme_parse_color("#1a2B3c", 7, &c));
	assert_int_equal(c.kind, TC_RGB);
	assert_int_equal(c.r, 0x1a);
	assert_int_equal(c.g, 0x2b);
	assert_int_equal(c.b, 0x3c);
	assert_true(theme_parse_color("255", 3, &c));
	assert_int_equal(c.kind, TC_INDEX);
	assert_int_equal(c.index, 255);
	assert_true(theme_parse_color("0", 1, &c));
	assert_true(theme_parse_color("bright-blue", 11, &c));
	assert_int_equal(c.index, 12);
	assert_true(theme_parse_color("Grey", 4, &c));
	assert_int_equal(c.index, 8);
	assert_true(theme_parse_color("default", 7, &c));
	assert_int_equal(c.kind, TC_DEFAULT);
	assert_false(theme_parse_color("256", 3, &c));
	assert_false(theme_parse_color("-1", 2, &c));
	assert_false(theme_parse_color("#12345", 6, &c));
	assert_false(theme_parse_color("#12345g", 7, &c));
	assert_false(theme_parse_color("purplish", 8, &c));
	assert_false(theme_parse_color("", 0, &c));
	assert_false(theme_parse_color("0255", 4, &c));
}

static void good_file(void **state)
{
	(void)state;
	struct theme t;
	char err[256] = "";
	const char *text = "# a comment\n"
			   "   \n"
			   "name = mine\r\n"
			   "  title\t=  #ff0000   bold  underline \n"
			   "warning=3\n"
			   "critical = bright_red reverse\n";
	assert_int_equal(parse(&t, text, err, sizeof(err)), 0);
	assert_string_equal(t.name, "mine");
	assert_int_equal(t.color[TH_TITLE].r, 255);
	assert_int_equal(t.attr[TH_TITLE], TA_BOLD | TA_UNDERLINE);
	assert_int_equal(t.color[TH_WARNING].index, 3);
	assert_int_equal(t.attr[TH_WARNING], 0);
	assert_int_equal(t.attr[TH_CRITICAL], TA_REVERSE);
	struct theme d;
	theme_default(&d);
	assert_memory_equal(&t.color[TH_BORDER], &d.color[TH_BORDER], sizeof(d.color[0])); /* kept */
	assert_int_equal(parse(&t, "", err, sizeof(err)), 0); /* empty file: the default */
}

/* A bad file names file, line and key; the theme falls back to the default. */
static void bad_files(void **state)
{
	(void)state;
	struct {
		const char *text, *want[3];
	} cases[] = {
		{ "title = #ffffff\ngraph_end = purplish\n", { "test.theme:2:", "'graph_end'", "purplish" } },
		{ "grpah_end = #ff0000\n", { "test.theme:1:", "'grpah_end'", "unknown key" } },
		{ "\n\n\nborder #ff0000\n", { "test.theme:4:", "expected 'key = value'", "border" } },
		{ "title = red blinking\n", { "test.theme:1:", "'title'", "blinking" } },
		{ " = red\n", { "test.theme:1:", "missing key", "= red" } },
		{ "name = \n", { "test.theme:1:", "'name'", "1 to 63" } },
		{ "title = \x01\x02\n", { "test.theme:1:", "'title'", "'?" "?'" } },
	};
	for (size_t i = 0; i < ROASTOP_ARRAY_LEN(cases); i++) {
		struct theme t, d;
		char err[256] = "";
		theme_default(&d);
		assert_int_equal(parse(&t, cases[i].text, err, sizeof(err)), -1);
		for (int k = 0; k < 3; k++)
			if (!strstr(err, cases[i].want[k]))
				fail_msg("case %zu: '%s' not in '%s'", i, cases[i].want[k], err);
		assert_memory_equal(&t, &d, sizeof(t));
	}
}

static void bounded_input(void **state)
{
	(void)state;
	struct theme t;
	char err[256];
	char *big = malloc(THEME_MAX_FILE + 2);
	assert_non_null(big);
	memset(big, '#', THEME_MAX_FILE + 1);
	big[THEME_MAX_FILE + 1] = '\0';
	assert_int_equal(parse(&t, big, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than"));
	memset(big, 'a', THEME_MAX_LINE + 1);
	big[THEME_MAX_LINE + 1] = '\0';
	assert_int_equal(parse(&t, big, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "test.theme:1: line longer"));
	free(big);
	const char nul[] = "title = red\0 bold\n";
	theme_default(&t);
	assert_int_equal(theme_parse(&t, nul, sizeof(nul) - 1, "n", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "n:1: NUL"));
	/* a message that does not fit is cut, never overflowed */
	char tiny[8];
	assert_int_equal(parse(&t, "foo = bar\n", tiny, sizeof(tiny)), -1);
	assert_int_equal(strlen(tiny), 7);
}

/* Truecolour degrades: direct, then the 256-colour cube, 16 and 8. */
static void colour_degrades(void **state)
{
	(void)state;
	struct theme_color red = { .kind = TC_RGB, .r = 0xd7, .g = 0x00, .b = 0x5f };
	assert_int_equal(theme_color_number(red, 1 << 24), 0xd7005f);
	assert_int_equal(theme_color_number(red, 256), 161); /* exactly in the cube */
	int n16 = theme_color_number(red, 16), n8 = theme_color_number(red, 8);
	assert_true(n16 == 1 || n16 == 9);
	assert_int_equal(n8, 1);
	struct theme_color grey = { .kind = TC_RGB, .r = 0x80, .g = 0x80, .b = 0x80 };
	assert_int_equal(theme_color_number(grey, 256), 244);
	struct theme_color idx = { .kind = TC_INDEX, .index = 244 };
	assert_int_equal(theme_color_number(idx, 256), 244);
	int g16 = theme_color_number(idx, 16);
	assert_true(g16 == 8 || g16 == 7);
	assert_true(theme_color_number(idx, 8) < 8);
	struct theme_color bright = { .kind = TC_INDEX, .index = 12 };
	assert_int_equal(theme_color_number(bright, 16), 12);
	assert_int_equal(theme_color_number(bright, 8), 4); /* bright blue -> blue */
	struct theme_color def = { .kind = TC_DEFAULT };
	assert_int_equal(theme_color_number(def, 256), -1);
	assert_int_equal(theme_color_number(red, 2), -1); /* no colours */
	uint8_t rgb[3];
	assert_true(theme_color_rgb((struct theme_color){ .kind = TC_INDEX, .index = 16 + 5 }, rgb));
	assert_int_equal(rgb[2], 255);
	assert_true(theme_color_rgb((struct theme_color){ .kind = TC_INDEX, .index = 255 }, rgb));
	assert_int_equal(rgb[0], 238);
	assert_false(theme_color_rgb(def, rgb));
}

static void gradient(void **state)
{
	(void)state;
	struct theme t;
	char err[128];
	assert_int_equal(parse(&t, "graph_start = #000000\ngraph_mid = #808080\ngraph_end = #ffffff\n",
			       err, sizeof(err)), 0);
	struct theme_color c = theme_gradient(&t, 0);
	assert_int_equal(c.r, 0);
	c = theme_gradient(&t, 0.25);
	assert_int_equal(c.r, 64);
	c = theme_gradient(&t, 0.5);
	assert_int_equal(c.r, 128);
	c = theme_gradient(&t, 1);
	assert_int_equal(c.r, 255);
	c = theme_gradient(&t, 7); /* clamped */
	assert_int_equal(c.r, 255);
	c = theme_gradient(&t, NAN);
	assert_int_equal(c.r, 0);
	assert_int_equal(parse(&t, "graph_start = default\ngraph_mid = default\n", err, sizeof(err)), 0);
	assert_int_equal(theme_gradient(&t, 0.1).kind, TC_DEFAULT); /* nearest stop */
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* --theme NAME: the config directory wins over the install directory; a
 * path is taken as it is; a missing theme is an error naming it. */
static void lookup_order(void **state)
{
	(void)state;
	char base[] = "/tmp/roastop-theme-XXXXXX";
	assert_non_null(mkdtemp(base));
	char cfg[128], inst[128], path[256], err[512];
	snprintf(cfg, sizeof(cfg), "%s/cfg", base);
	snprintf(inst, sizeof(inst), "%s/inst", base);
	mkdir(cfg, 0700);
	mkdir(inst, 0700);
	snprintf(path, sizeof(path), "%s/ocean.theme", inst);
	write_file(path, "name = ocean-installed\n");
	snprintf(path, sizeof(path), "%s/ocean.theme", cfg);
	write_file(path, "name = ocean-mine\n");
	snprintf(path, sizeof(path), "%s/sand.theme", inst);
	write_file(path, "title = #abcdef\n"); /* no name: called after the file */
	snprintf(path, sizeof(path), "%s/broken.theme", inst);
	write_file(path, "title = #abcdef\nborder = nope\n");
	struct theme_dirs dirs = { .config = cfg, .install = inst, .source = NULL };
	struct theme t;
	assert_int_equal(theme_load("ocean", &dirs, &t, err, sizeof(err)), 0);
	assert_string_equal(t.name, "ocean-mine");
	assert_int_equal(theme_load("sand", &dirs, &t, err, sizeof(err)), 0);
	assert_string_equal(t.name, "sand");
	assert_int_equal(t.color[TH_TITLE].g, 0xcd);
	snprintf(path, sizeof(path), "%s/ocean.theme", inst);
	assert_int_equal(theme_load(path, &dirs, &t, err, sizeof(err)), 0);
	assert_string_equal(t.name, "ocean-installed");
	assert_int_equal(theme_load("nosuch", &dirs, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'nosuch' not found"));
	assert_string_equal(t.name, "default");
	assert_int_equal(theme_load("broken", &dirs, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "broken.theme:2: key 'border'"));
	assert_string_equal(t.name, "default");
	assert_int_equal(t.color[TH_TITLE].kind, TC_DEFAULT); /* nothing half-applied */
	assert_int_equal(theme_load("default", &dirs, &t, err, sizeof(err)), 0); /* built in */
	char names[8][THEME_NAME_LEN];
	size_t n = theme_list(&dirs, names, 8);
	assert_int_equal(n, 4);
	assert_string_equal(names[0], "default");
	assert_string_equal(names[1], "broken");
	assert_string_equal(names[2], "ocean"); /* once, though in both directories */
	assert_string_equal(names[3], "sand");
	assert_int_equal(theme_list(&dirs, names, 2), 2);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builtin_equals_file),
		cmocka_unit_test(shipped_themes_are_complete),
		cmocka_unit_test(colour_values),
		cmocka_unit_test(good_file),
		cmocka_unit_test(bad_files),
		cmocka_unit_test(bounded_input),
		cmocka_unit_test(colour_degrades),
		cmocka_unit_test(gradient),
		cmocka_unit_test(lookup_order),
	};
	return cmocka_run_group_tests_name("theme", tests, NULL, NULL);
}
