# fuzz.mk - builds the libFuzzer harnesses of the request parsers.
# Called by tests/fuzz/run.sh (make fuzz); usable alone from the repository
# root:  make -f tests/fuzz/fuzz.mk -j2   ->  build/fuzz/fuzz_<name>
#
# The project's own sources are compiled with -fsanitize=fuzzer-no-link
# (coverage for libFuzzer) plus ASan and UBSan into build/fuzz/obj and
# archived; storage/ is replaced by the stubs in tests/fuzz/stubs/ (no
# database in a fuzzer). A harness that needs a static function includes
# that one .c file; the archive then leaves that module out by itself.

FUZZ_CC    ?= clang
FUZZ_OUT   ?= build/fuzz
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_PKGS  := jansson libpq libmicrohttpd
FUZZ_CFLAGS := -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L \
	-g -O1 -fno-omit-frame-pointer -Wall -Wextra -Wno-unused-function \
	-I. $(shell pkg-config --cflags $(FUZZ_PKGS) 2>/dev/null)
FUZZ_LIBS  := $(shell pkg-config --libs $(FUZZ_PKGS) 2>/dev/null) -lm -lpthread

# What the harnesses link: handlers, engine, the route table, metrics and
# log (for http.c, included by fuzz_routes), lib/ (jtape, sbuf, csv,
# sha256, ttl_cache), the catalog's typed
# GPU row (no SQL: it reads the stub's rows); the probe's report
# code for fuzz_probe_report.
FUZZ_LIB_SRCS := $(wildcard lib/*.c handlers/*.c handlers/*/*.c) $(wildcard engine/*.c) \
	server/routes.c server/metrics.c server/log.c \
	storage/catalog_spec.c $(FUZZ_OUT)/gen/report_assets.c
FUZZ_STUB_SRCS := $(wildcard tests/fuzz/stubs/stub_*.c)
FUZZ_PROBE_SRCS := probe/report.c probe/report_check.c probe/status.c probe/stats.c probe/util.c probe/limits.c

FUZZ_LIB_OBJS := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_OUT)/obj/%.o)
FUZZ_STUB_OBJS := $(FUZZ_STUB_SRCS:%.c=$(FUZZ_OUT)/obj/%.o)
FUZZ_PROBE_OBJS := $(FUZZ_PROBE_SRCS:%.c=$(FUZZ_OUT)/obj/%.o)

FUZZ_HARNESSES := $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS := $(FUZZ_HARNESSES:%=$(FUZZ_OUT)/%)

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BINS)

$(FUZZ_OUT)/obj/probe/%.o: probe/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Iprobe $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_OUT)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

# The report's page head and CSS as C (as the Makefile makes them).
REPORT_ASSETS := handlers/report/head.html handlers/report/report.css
$(FUZZ_OUT)/gen/report_assets.c: handlers/report/embed.sh $(REPORT_ASSETS)
	@mkdir -p $(dir $@)
	sh handlers/report/embed.sh $(REPORT_ASSETS) >$@.tmp && mv $@.tmp $@

$(FUZZ_OUT)/libgsz.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(FUZZ_OUT)/libstubs.a: $(FUZZ_STUB_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(FUZZ_OUT)/libprobe.a: $(FUZZ_PROBE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h \
		$(FUZZ_OUT)/libgsz.a $(FUZZ_OUT)/libstubs.a $(FUZZ_OUT)/libprobe.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -MMD -MP \
		-MF $@.d -MT $@ $< -Wl,--start-group $(FUZZ_OUT)/libgsz.a \
		$(FUZZ_OUT)/libstubs.a $(FUZZ_OUT)/libprobe.a -Wl,--end-group \
		$(FUZZ_LIBS) -o $@

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_STUB_OBJS:.o=.d) $(FUZZ_PROBE_OBJS:.o=.d) \
	$(FUZZ_BINS:=.d)
