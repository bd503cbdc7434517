# gpusizer - the one build.
#
#   make            build build/gpusizerd (and build/gpusizer-probe when nvcc exists)
#   make run        the service on an embedded private PostgreSQL (or $DATABASE_URL)
#   make demo       demo probe data (dated now) and a few sized jobs in the running service
#   make test       unit + API tests under ASan/UBSan against a real PostgreSQL
#   make bench      benchmarks that print figures (never assert timings)
#   make lint       clang-format check, cppcheck, openapi lint
#   make fuzz       bounded libFuzzer runs of the request parsers
#   make gpu-check  on a GPU machine: the probe beside a PyTorch reference
#
# Missing Debian packages are installed with apt-get when run as root;
# otherwise the exact command is printed.

CC      ?= cc
BUILD   ?= build
SAN     ?= 0

DEB_PKGS   := pkg-config libmicrohttpd-dev libjansson-dev libpq-dev libzstd-dev \
              libcurl4-openssl-dev postgresql pgbouncer jq curl zstd
PKG_MODS   := libmicrohttpd jansson libpq libcurl libzstd

WARN := -Wall -Wextra -Werror -Wvla -Wstrict-prototypes \
        -Wold-style-definition -Wformat-security -Wwrite-strings \
        -Wpointer-arith -Wshadow
OPT  ?= -O2 -g
ifeq ($(SAN),1)
BUILD := build/san
OPT   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
         -fno-sanitize-recover=undefined
endif

# Deferred (=) so pkg-config runs after the deps step installed the packages.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKG_MODS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKG_MODS) 2>/dev/null)
ALL_CFLAGS = -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L \
             $(WARN) $(OPT) -I. $(PKG_CFLAGS) $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lpthread -lm

# lib/: code with no domain knowledge (buffer, CSV, JSON tape, cache,
# SHA-256), below every other layer; it includes only itself.
LIBX_SRCS     := $(wildcard lib/*.c)
ENGINE_SRCS   := $(wildcard engine/*.c)
STORAGE_SRCS  := $(wildcard storage/*.c)
HANDLER_SRCS  := $(wildcard handlers/*.c handlers/*/*.c)
SERVER_SRCS   := $(wildcard server/*.c)
DAEMON_SRCS   := $(SERVER_SRCS) $(HANDLER_SRCS) $(STORAGE_SRCS) $(ENGINE_SRCS) \
                 $(LIBX_SRCS)
# The report's page head and CSS (handlers/report/head.html, report.css)
# as C, made by handlers/report/embed.sh (sh and awk) in the build tree.
REPORT_ASSETS := handlers/report/head.html handlers/report/report.css
REPORT_GEN    := $(BUILD)/gen/report_assets.c
DAEMON_OBJS   := $(DAEMON_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/report_assets.o
LIB_OBJS      := $(filter-out $(BUILD)/obj/server/main.o,$(DAEMON_OBJS))
ENGINE_OBJS   := $(ENGINE_SRCS:%.c=$(BUILD)/obj/%.o)

UNIT_ENGINE_SRCS := $(wildcard tests/unit/test_engine*.c)
UNIT_LIB_SRCS    := $(filter-out $(UNIT_ENGINE_SRCS) $(wildcard tests/unit/test_probe*.c),$(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_ENGINE_SRCS:tests/unit/%.c=$(BUILD)/tests/%) \
             $(UNIT_LIB_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

DEPS_STAMP := build/.deps-ok

.PHONY: all deps run demo test bench bench-fleet lint fuzz valgrind clean format probe unit \
        gpu-check
all: $(BUILD)/gpusizerd probe

# Re-checked when this file (DEB_PKGS) changes.
$(DEPS_STAMP): Makefile
	@missing=""; \
	for m in $(PKG_MODS); do pkg-config --exists $$m 2>/dev/null || missing="$$missing $$m"; done; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing="$$missing pgbouncer"; \
	for c in jq curl pkg-config; do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: missing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: apt-get install -y $(DEB_PKGS)"; \
	    ok=0; for t in 1 2 3; do \
	      apt-get update -q >/dev/null && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(DEB_PKGS) >/dev/null && { ok=1; break; }; \
	      [ $$t = 3 ] || { echo "deps: apt-get failed (try $$t of 3; a mirror's transient error), again in $$((t * 10)) s"; sleep $$((t * 10)); }; \
	    done; [ $$ok = 1 ] || exit 1; \
	  else \
	    echo "deps: run: sudo apt-get install -y $(DEB_PKGS)"; exit 1; \
	  fi; \
	fi
	@mkdir -p build && touch $@

deps: $(DEPS_STAMP)

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(REPORT_GEN): handlers/report/embed.sh $(REPORT_ASSETS)
	@mkdir -p $(dir $@)
	sh handlers/report/embed.sh $(REPORT_ASSETS) >$@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/report_assets.o: $(REPORT_GEN) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gpusizerd: $(DAEMON_OBJS)
	$(CC) $(ALL_CFLAGS) $^ $(LDLIBS_ALL) -o $@

# Engine tests and bench see only the engine (it includes only itself).
UNIT_ENGINE_BINS := $(UNIT_ENGINE_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
$(UNIT_ENGINE_BINS): $(BUILD)/tests/%: tests/unit/%.c $(ENGINE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iengine $^ -lm -o $@

UNIT_LIB_BINS := $(UNIT_LIB_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
$(UNIT_LIB_BINS): $(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $^ $(LDLIBS_ALL) -o $@

unit: $(UNIT_BINS)

$(BUILD)/bench/bench_engine: bench/bench_engine.c $(ENGINE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iengine $^ -lm -o $@

-include probe/probe.mk

run: $(BUILD)/gpusizerd
	@BUILD=$(BUILD) deploy/dev/run.sh

# Against the daemon `make run` started (GPUSIZER_URL, default
# http://127.0.0.1:8080) and its database (DATABASE_URL or var/database_url).
demo: $(BUILD)/gpusizerd
	@BUILD=$(BUILD) deploy/dev/demo.sh

test: $(DEPS_STAMP)
	@tests/run.sh

bench: $(BUILD)/gpusizerd
	@bench/run.sh

# A simulated fleet's history in a private PostgreSQL, then storage and read
# figures (docs/BENCHMARKS.md "Fleet history"): NODES 8-GPU nodes, DAYS days.
NODES ?= 2000
DAYS  ?= 365
bench-fleet: $(BUILD)/gpusizerd
	@NODES=$(NODES) DAYS=$(DAYS) bench/fleet.sh

lint: $(DEPS_STAMP)
	@rc=0; tests/lint.sh || rc=1; deploy/lint.sh || rc=1; exit $$rc

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu')

# Bounded libFuzzer runs of every request parser (tests/fuzz/), replaying
# the committed regressions first. FUZZ_SECONDS=0 only builds and replays.
FUZZ_SECONDS ?= 30
fuzz: $(DEPS_STAMP)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_TARGETS)

# On a GPU machine: builds the probe for the local GPUs, runs --quick and
# the full probe and a PyTorch reference, prints them side by side
# (tools/gpu_check.sh). Without a GPU: "skipped: no GPU", exit 0.
gpu-check:
	@tools/gpu_check.sh

# The API suite against a non-sanitizer daemon under valgrind.
valgrind: $(DEPS_STAMP)
	@tests/valgrind.sh

clean:
	rm -rf build

-include $(DAEMON_OBJS:.o=.d)
