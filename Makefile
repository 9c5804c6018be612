# roastop — build, test, bench, install. Plain GNU make; see README.md.

PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
# the test venv (tests/integration/run.sh makes it too), for bench_emitter.py
VENV ?= $(BUILD)/venv
CC ?= cc
PKGS := ncursesw libcurl libcjson libcrypto libmicrohttpd libwebsockets
# The version is written once, in the Python package (python/roastop/__init__.py).
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' python/roastop/__init__.py)
VERSION_DEF := -DROASTOP_VERSION='"$(VERSION)"'

WARN := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wundef -Wvla
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude \
	-DROASTOP_THEMEDIR='"$(PREFIX)/share/roastop/themes"' $(VERSION_DEF) \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

LIB_SRC := $(sort $(filter-out src/main.c,$(wildcard src/*.c src/*/*.c src/*/*/*.c)))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard bench/bench_*.c))
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
TOOL_SRC := $(sort $(filter-out tests/tools/clockstep.c tests/tools/udpdrop.c,$(wildcard tests/tools/*.c)))
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)
# An LD_PRELOAD shim, not a program: tests/integration/test_time.py.
SHIM_BIN := $(BUILD)/tools/clockstep.so $(BUILD)/tools/udpdrop.so
FUZZ_SECONDS ?= 60

# Keep the instrumented objects between harness builds.
.SECONDARY:

.PHONY: FORCE all deps deps-test deps-wheel wheel test test-faults unit integration asan bench bench-run bench-smoke \
	fuzz fuzz-smoke demo report-screenshot install clean

# The targets a person types on a fresh machine (all, demo, test, bench,
# install) install the Debian packages first and then run make again: the
# pkg-config answers above are taken once, when a make reads this file, so
# only a make started after the install sees the packages. The targets they
# call (unit, integration, asan, fuzz-smoke, bench-run, bench-smoke, the
# files under $(BUILD)) assume the packages are there.
all: deps
	@$(MAKE) --no-print-directory $(BUILD)/roastop

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

deps-wheel:
	@scripts/deps.sh wheel

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# screen.c compiles the installed theme directory in: rebuild it when
# PREFIX changes (make install PREFIX=/usr after a plain make).
$(BUILD)/prefix: FORCE
	@mkdir -p $(BUILD)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' > $@

$(BUILD)/obj/src/ui/screen.o: $(BUILD)/prefix

# Likewise the version, in every object (it is one -D for all of them).
$(BUILD)/version: FORCE
	@mkdir -p $(BUILD)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(LIB_OBJ) $(BUILD)/obj/src/main.o: $(BUILD)/version

FORCE:

$(BUILD)/libroastop.a: $(LIB_OBJ)
	@rm -f $@
	@ar rcs $@ $^

$(BUILD)/roastop: $(BUILD)/obj/src/main.o $(BUILD)/libroastop.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libroastop.a
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	@$(CC) $(ALL_CFLAGS) -Itests/unit -MMD -MP -MF $@.d $(LDFLAGS) -o $@ $< $(BUILD)/libroastop.a $(LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/bench/%: bench/%.c bench/bench.h $(BUILD)/libroastop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libroastop.a $(LDLIBS)

$(BUILD)/tools/%: tests/tools/%.c $(BUILD)/libroastop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libroastop.a $(LDLIBS)

# Built without the sanitizers: it is preloaded into an instrumented
# roastop under ASan and must not need a runtime of its own.
$(BUILD)/tools/%.so: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -fPIC -shared -o $@ $< -ldl

# The one test command (README, .ci/run): installs what it needs, then runs
# unit tests, integration tests, a short fuzz pass and the ASan/UBSan build.
test: deps-test
	$(MAKE) --no-print-directory unit bench-smoke integration fuzz-smoke asan

# The fault suite alone (make test runs it too, with the integration tests).
test-faults: $(BUILD)/roastop $(TOOL_BIN)
	@BUILD=$(BUILD) ROASTOP=$(BUILD)/roastop TOOLS=$(BUILD)/tools sh tests/integration/run.sh --only-faults

unit: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do $$t || fail=1; done; exit $$fail

integration: $(BUILD)/roastop $(TOOL_BIN) $(SHIM_BIN) $(BENCH_BIN)
	@BUILD=$(BUILD) ROASTOP=$(BUILD)/roastop TOOLS=$(BUILD)/tools sh tests/integration/run.sh

# ASan + UBSan build of the unit tests and of the binary the integration
# tests drive, in its own build directory.
asan:
	ROASTOP_SANITIZED=1 $(MAKE) --no-print-directory BUILD=build-asan CC=clang \
		CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" unit integration

# libFuzzer harnesses (clang); each parser gets one. The library is built
# once with the fuzzer's instrumentation and linked into every harness.
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE $(VERSION_DEF) -Iinclude -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
FUZZ_OBJ := $(LIB_SRC:%.c=$(BUILD)/fuzzobj/%.o)

$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $<"
	@clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

fuzz: $(FUZZ_BIN)

# Every harness, FUZZ_SECONDS each (60 in `make test`), two at a time.
fuzz-smoke: $(FUZZ_BIN)
	@scripts/fuzz.sh $(BUILD) $(FUZZ_SECONDS) 2 $(FUZZ_BIN)

bench: deps-test
	@$(MAKE) --no-print-directory bench-run

# Every benchmark, full length (bench/RESULTS.md).
bench-run: $(BUILD)/roastop $(BENCH_BIN) $(TOOL_BIN) $(VENV)/requirements.txt
	@BUILD=$(BUILD) VENV=$(VENV) sh scripts/bench.sh

# Every benchmark built and run once, briefly, its lines checked for the
# documented form and no figure asserted (part of make test): a benchmark
# that no longer builds or prints fails here, not months later.
bench-smoke: $(BUILD)/roastop $(BENCH_BIN) $(TOOL_BIN) $(VENV)/requirements.txt
	@BUILD=$(BUILD) VENV=$(VENV) sh scripts/bench.sh --smoke

# The bench scripts time roastop against roastcoffea on real NanoEvents and
# against identity.json on a real scheduler, in the test venv
# (scripts/venv.sh, as tests/integration/run.sh makes it).
$(VENV)/requirements.txt: tests/requirements.txt tests/requirements-nodeps.txt
	@sh scripts/venv.sh $(VENV)

# One wheel for a login node without root (README): the program, the
# libraries it needs beyond the manylinux allow-list, its themes, manual and
# demo, and the Python package, in $(DIST)/roastop-VERSION-py3-none-manylinux_*.whl.
DIST ?= dist
wheel: deps-wheel
	@$(MAKE) --no-print-directory $(BUILD)/roastop $(VENV)/requirements.txt
	@$(VENV)/bin/python scripts/wheel.py $(BUILD)/roastop $(DIST)

# Runs the dashboard on the embedded default recording.
demo: deps
	@$(MAKE) --no-print-directory $(BUILD)/roastop
	@sh scripts/demo.sh $(BUILD)

# docs/report.png: the demo's report.html in headless Chromium (README links it).
report-screenshot: $(BUILD)/roastop
	@sh scripts/report_screenshot.sh $(BUILD) docs/report.png

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/roastop/themes
	install -m 755 $(BUILD)/roastop $(DESTDIR)$(PREFIX)/bin/roastop
	install -m 644 roastop.1 $(DESTDIR)$(PREFIX)/share/man/man1/roastop.1
	for t in themes/*.theme; do [ -e "$$t" ] || continue; \
		install -m 644 "$$t" $(DESTDIR)$(PREFIX)/share/roastop/themes/; done
	install -m 644 examples/demo-recording.jsonl $(DESTDIR)$(PREFIX)/share/roastop/

clean:
	rm -rf build build-asan

# the unit tests' too: a change to a shared fixture header rebuilds them
-include $(shell find $(BUILD)/obj $(BUILD)/fuzzobj $(BUILD)/tests -name '*.d' 2>/dev/null)
