# probe/probe.mk — builds gpusizer-probe (the on-node CUDA agent) and its
# GPU-free unit tests. Included by the top-level Makefile (which may set
# CC/CFLAGS first) or used alone:
#
#   make -f probe/probe.mk probe          # build/gpusizer-probe (needs nvcc)
#   make -f probe/probe.mk probe-unit     # build/test_probe* (plain cc)
#   make -f probe/probe.mk probe-check    # run unit tests + no-device check
#   make -f probe/probe.mk probe PROBE_ARCHS=90   # one arch while iterating
#
# All variables and targets are prefixed "probe" so the include is safe.

PROBE_STANDALONE := $(if $(filter 1,$(words $(MAKEFILE_LIST))),yes,)
PROBE_SAVED_GOAL := $(.DEFAULT_GOAL)

CC ?= cc
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(shell command -v nvcc 2>/dev/null || echo $(CUDA_HOME)/bin/nvcc)
PROBE_HAVE_NVCC := $(shell test -x "$(NVCC)" && echo yes)

PROBE_VERSION ?= 0.1.0
PROBE_BIN := build/gpusizer-probe
PROBE_OBJDIR := build/probe

# Warnings the project requires; appended to whatever CFLAGS the caller set.
PROBE_WARN := -std=c11 -Wall -Wextra -Werror -Wvla -Wstrict-prototypes \
	-Wold-style-definition -Wformat-security -Wwrite-strings \
	-Wpointer-arith -Wshadow
PROBE_CFLAGS := $(CFLAGS) $(PROBE_WARN) -O2 -g -Iprobe \
	-DPROBE_VERSION=\"$(PROBE_VERSION)\"
PROBE_SANITIZE ?= -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined

# Plain C, no CUDA: statistics, limits, report JSON, run_id, spool, HTTP
# posting, CLI, NVML loader. The unit tests link exactly these.
PROBE_UNIT_SRCS := probe/stats.c probe/limits.c probe/util.c probe/status.c \
	probe/report.c probe/report_check.c probe/cli.c probe/spool.c \
	probe/post.c probe/nvml.c probe/policy.c probe/numa.c probe/check.c \
	probe/registry.c
PROBE_UNIT_LIBS := -ljansson -lcurl -lm -ldl -lpthread
PROBE_UNIT_TESTS := $(wildcard tests/unit/test_probe*.c)
PROBE_HDRS := $(wildcard probe/*.h)

# The run (context, scheduler, inventory, delivery), the registry's table
# and one file per measurement (probe/m_*.c): they call the CUDA code.
PROBE_RUN_SRCS := probe/main.c probe/run.c probe/inventory.c \
	probe/deliver.c probe/registry_table.c $(wildcard probe/m_*.c)
PROBE_C_SRCS := $(PROBE_UNIT_SRCS) $(PROBE_RUN_SRCS)
PROBE_CU_SRCS := probe/gpu_common.cu probe/gpu_copy.cu probe/gpu_p2p.cu \
	probe/gpu_gemm.cu probe/gpu_nccl.cu
PROBE_C_OBJS := $(patsubst probe/%.c,$(PROBE_OBJDIR)/%.o,$(PROBE_C_SRCS))
PROBE_CU_OBJS := $(patsubst probe/%.cu,$(PROBE_OBJDIR)/%.cu.o,$(PROBE_CU_SRCS))

# SASS for Ampere (8.0, 8.6), Ada (8.9), Hopper (9.0), Blackwell (10.0,
# 12.0) and PTX of the newest so later GPUs JIT. Never -arch=native: with
# no GPU it silently builds a default target.
PROBE_ARCHS ?= 80 86 89 90 100 120
PROBE_PTX_ARCH ?= $(lastword $(PROBE_ARCHS))
PROBE_GENCODE := $(foreach a,$(PROBE_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	-gencode arch=compute_$(PROBE_PTX_ARCH),code=compute_$(PROBE_PTX_ARCH)
PROBE_NVCCFLAGS ?= -std=c++17 -O2 -g -Werror all-warnings \
	-Xcompiler -Wall,-Wextra,-Werror
PROBE_CUDA_LIBDIR := $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib))
# cudart static (nodes have no libcudart.so); NVML, NCCL and cuBLASLt are
# dlopen'ed at run time; libcuda.so.1 is loaded by cudart.
PROBE_LDLIBS := -L$(PROBE_CUDA_LIBDIR) -lcudart_static -lcurl -ljansson \
	-lstdc++ -ldl -lpthread -lrt -lm

.PHONY: probe probe-unit probe-check probe-nodevice probe-clean probe-format

ifeq ($(PROBE_HAVE_NVCC),yes)
probe: $(PROBE_BIN)

$(PROBE_BIN): $(PROBE_C_OBJS) $(PROBE_CU_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(PROBE_LDLIBS)

$(PROBE_OBJDIR)/%.cu.o: probe/%.cu $(PROBE_HDRS) probe/gpu_common.cuh
	@mkdir -p $(dir $@)
	$(NVCC) $(PROBE_NVCCFLAGS) $(PROBE_GENCODE) -Iprobe \
		-I$(CUDA_HOME)/include -c $< -o $@
else
probe:
	@echo "probe: nvcc not found (set CUDA_HOME); skipping gpusizer-probe"
endif

$(PROBE_OBJDIR)/%.o: probe/%.c $(PROBE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) -c $< -o $@

# One binary per tests/unit/test_probe_*.c (build/test_probe_<subject>),
# all linking the plain-C sources compiled once with the sanitizers; their
# shared fixtures are tests/unit/probe_fixtures.h.
PROBE_UNIT_BINS := $(patsubst tests/unit/%.c,build/%,$(PROBE_UNIT_TESTS))
PROBE_UNIT_OBJDIR := build/probe-unit
PROBE_UNIT_OBJS := $(patsubst probe/%.c,$(PROBE_UNIT_OBJDIR)/%.o,$(PROBE_UNIT_SRCS))

probe-unit: $(PROBE_UNIT_BINS)

$(PROBE_UNIT_OBJDIR)/%.o: probe/%.c $(PROBE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $(PROBE_SANITIZE) -c $< -o $@

$(PROBE_UNIT_BINS): build/%: tests/unit/%.c $(PROBE_UNIT_OBJS) $(PROBE_HDRS) \
		tests/unit/testlib.h tests/unit/probe_fixtures.h
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $(PROBE_SANITIZE) -Itests/unit -o $@ \
		$< $(PROBE_UNIT_OBJS) $(PROBE_UNIT_LIBS)

# Unit tests, then the no-device exit-path check (skips when the binary
# was not built).
probe-check: probe-unit
	set -e; for t in $(PROBE_UNIT_BINS); do ./$$t; done
	sh tests/probe_nodevice.sh $(PROBE_BIN)

probe-nodevice:
	sh tests/probe_nodevice.sh $(PROBE_BIN)

probe-format:
	clang-format -i probe/*.c probe/*.h probe/*.cu probe/*.cuh \
		$(PROBE_UNIT_TESTS)

probe-clean:
	rm -rf $(PROBE_OBJDIR) $(PROBE_BIN) $(PROBE_UNIT_BINS) $(PROBE_UNIT_OBJDIR)

ifeq ($(PROBE_STANDALONE),yes)
.DEFAULT_GOAL := probe
else
.DEFAULT_GOAL := $(PROBE_SAVED_GOAL)
endif
