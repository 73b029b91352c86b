# gpuhash: PostgreSQL extension (PGXS) with CUDA kernels.
#
#   make / make install / make installcheck     as for any PGXS extension
#   make check-core                             core hash-table tests, no PostgreSQL
#   make check-core-sanitize                    the same on the CPU alone, built with
#                                               AddressSanitizer and UBSan in build/san
#   make bench-kernels                          the kernel benchmarks: build/kbench (GPU),
#                                               build/cpubench (CPU)
#
# CUDA is used when $(NVCC) exists (CUDA_HOME=/usr/local/cuda by default);
# without it the extension is built for the CPU alone (gpuhash.device=gpu then
# reports that it was built without CUDA).  Device code is compiled ahead of
# time for every architecture in GPUHASH_CUDA_ARCHS that this nvcc supports,
# plus PTX of the newest, so nothing is compiled at run time.  nvcc objects go
# into a static archive linked through SHLIB_LINK, never into OBJS: PGXS wants
# LLVM bitcode for each OBJS entry of a server built with LLVM.

EXTENSION  = gpuhash
EXTVERSION = 0.1.0
MODULE_big = gpuhash
DATA       = src/sql/gpuhash--$(EXTVERSION).sql
PGFILEDESC = "gpuhash - GPU hash tables for joins and key lookups"

REGRESS      = $(sort $(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=gpuhash
# The suite's plans must not depend on the machine's processors, which
# gpuhash.parallel_workers' default sizes plans by; sql/parallel_workers.sql
# tests that default itself.
installcheck: export PGOPTIONS := $(PGOPTIONS) -c gpuhash.parallel_workers=0

PG_CONFIG ?= pg_config
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
GPUHASH_CUDA_ARCHS ?= 70 75 80 86 89 90

# gpu_stub.c stands in for CUDA in a build without nvcc; gpu_loader.c opens
# the CUDA module from the extension, gpu_module.c is that module's entry.
CORE_GPU_C = src/core/gpu_stub.c src/core/gpu_loader.c src/core/gpu_module.c
CORE_C   = $(filter-out $(CORE_GPU_C),$(wildcard src/core/*.c))
CORE_CU  = $(wildcard src/core/*.cu)
CORE_H   = $(wildcard src/core/*.h)
CORE_CUH = $(wildcard src/core/*.cuh)
PG_WINGS = common api plan exec
PG_SRC   = $(foreach w,$(PG_WINGS),$(wildcard src/pg/$(w)/*.c))
OBJS     = $(PG_SRC:.c=.o) $(CORE_C:.c=.o)

HAVE_NVCC := $(shell test -x "$(NVCC)" && echo yes)
ifeq ($(HAVE_NVCC),yes)
NVCC_CODES := $(shell "$(NVCC)" --list-gpu-code 2>/dev/null)
CUDA_ARCHS := $(foreach a,$(GPUHASH_CUDA_ARCHS),$(if $(filter sm_$(a),$(NVCC_CODES)),$(a)))
CUDA_PTX   := $(lastword $(CUDA_ARCHS))
GENCODE    := $(foreach a,$(CUDA_ARCHS),-gencode=arch=compute_$(a),code=sm_$(a)) \
              -gencode=arch=compute_$(CUDA_PTX),code=compute_$(CUDA_PTX)
NVCCFLAGS ?= -O3
NVCCFLAGS += -std=c++17 $(GENCODE) -Xcompiler -fPIC,-fvisibility=hidden \
             -Isrc/core --expt-relaxed-constexpr -Xptxas -warn-spills
CUDA_LIB   = build/libghtcuda.a
CUDA_LINK  = $(CUDA_LIB) $(CUDA_HOME)/lib64/libcudart_static.a -ldl -lrt -lpthread -lstdc++
# The GPU half is a module of its own, opened on first use (gpu_loader.c):
# loading the extension then maps none of the kernels, the CUDA runtime or
# libstdc++ (bench/NOTES.md, section 30).
CUDA_MODULE = $(MODULE_big)_cuda$(DLSUFFIX)
OBJS      += src/core/gpu_loader.o
SHLIB_LINK += -ldl -lpthread
else
OBJS      += src/core/gpu_stub.o
CUDA_LIB   =
CUDA_LINK  =
CUDA_MODULE =
endif

PG_CPPFLAGS = -Isrc/core $(foreach w,$(PG_WINGS),-Isrc/pg/$(w))
SHLIB_LINK += -Wl,--exclude-libs,ALL -Wl,--version-script=src/gpuhash.map
EXTRA_CLEAN = $(CUDA_MODULE)

# A server without its LLVM toolchain installed (e.g. the GPU host's unpacked
# packages) cannot make bitcode; skip it there instead of failing.
PGXS := $(shell $(PG_CONFIG) --pgxs)
ifneq ($(shell grep -s '^CLANG' $(dir $(PGXS))../../src/Makefile.global | sed 's/.*= *//' | xargs -r sh -c 'test -x "$$0" && echo ok'),ok)
override with_llvm = no
endif
include $(PGXS)

$(shlib): $(CUDA_LIB) src/gpuhash.map
$(OBJS): $(CORE_H) $(foreach w,$(PG_WINGS),$(wildcard src/pg/$(w)/*.h))

build/cuda/%.o: src/core/%.cu $(CORE_H) $(CORE_CUH)
	@mkdir -p build/cuda
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(CUDA_LIB): $(patsubst src/core/%.cu,build/cuda/%.o,$(CORE_CU))
	rm -f $@
	ar rcs $@ $^

# The CUDA module: the GPU half, the helpers it shares with the CPU half
# (its own copy of ght_util.c), the static CUDA runtime; only its entry
# point is exported.
CUDA_MODULE_OBJS = build/cudamod/gpu_module.o build/cudamod/ght_util.o
build/cudamod/%.o: src/core/%.c $(CORE_H)
	@mkdir -p build/cudamod
	$(CC) $(CFLAGS_SL) -O2 -std=gnu11 -fvisibility=hidden -Isrc/core -c $< -o $@

ifneq ($(CUDA_MODULE),)
all: $(CUDA_MODULE)

$(CUDA_MODULE): $(CUDA_MODULE_OBJS) $(CUDA_LIB) src/gpuhash_cuda.map
	$(CC) -shared -o $@ $(CUDA_MODULE_OBJS) $(CUDA_LINK) -lm \
	    -Wl,--exclude-libs,ALL -Wl,--version-script=src/gpuhash_cuda.map -Wl,-z,defs

install: install-cuda-module
uninstall: uninstall-cuda-module
.PHONY: install-cuda-module uninstall-cuda-module
install-cuda-module: $(CUDA_MODULE) installdirs
	$(INSTALL_SHLIB) $(CUDA_MODULE) '$(DESTDIR)$(pkglibdir)/$(CUDA_MODULE)'
uninstall-cuda-module:
	rm -f '$(DESTDIR)$(pkglibdir)/$(CUDA_MODULE)'
endif

# ---- core tests and kernel benchmark (no PostgreSQL) ----------------------
CORE_CC     ?= gcc
CORE_CFLAGS ?= -O2 -g
CORE_LDFLAGS ?=
CORE_ALL_CFLAGS = $(CORE_CFLAGS) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Isrc/core -pthread
# Separate directories keep objects built with other flags (sanitizers) apart.
CORE_BUILD ?= build/host
TEST_CORE  ?= build/test_core
HOST_OBJS = $(patsubst src/core/%.c,$(CORE_BUILD)/%.o,$(CORE_C)) $(if $(CUDA_LIB),,$(CORE_BUILD)/gpu_stub.o)

$(CORE_BUILD)/%.o: src/core/%.c $(CORE_H)
	@mkdir -p $(CORE_BUILD)
	$(CORE_CC) $(CORE_ALL_CFLAGS) -c $< -o $@

$(TEST_CORE): test/core/test_core.c $(wildcard test/core/*.h) $(HOST_OBJS) $(CUDA_LIB)
	$(CORE_CC) $(CORE_ALL_CFLAGS) $(CORE_LDFLAGS) -Itest/core -o $@ $< $(HOST_OBJS) $(CUDA_LINK) -lm

build/kbench: bench/kbench.cu $(CUDA_LIB) $(CORE_H) $(HOST_OBJS)
	$(NVCC) $(NVCCFLAGS) -o $@ $< $(HOST_OBJS) $(CUDA_LIB) -lcudart_static -ldl -lrt -lpthread

build/cpubench: bench/cpubench.c $(HOST_OBJS) $(CUDA_LIB)
	$(CORE_CC) $(CORE_ALL_CFLAGS) -o $@ $< $(HOST_OBJS) $(CUDA_LINK) -lm

.PHONY: check-core check-core-sanitize bench-kernels clean-build
check-core: $(TEST_CORE)
	./$(TEST_CORE) $(CHECK_CORE_ARGS)

# The core tests on the CPU (the stub stands in for CUDA, which the
# sanitizers cannot see into) under AddressSanitizer and UBSan, any report
# fatal.
SANITIZE_FLAGS ?= -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
                  -fno-sanitize-recover=all
check-core-sanitize:
	$(MAKE) --no-print-directory NVCC=/nonexistent CORE_BUILD=build/san TEST_CORE=build/san/test_core \
	    CORE_CFLAGS="$(SANITIZE_FLAGS)" CORE_LDFLAGS="$(SANITIZE_FLAGS)" \
	    CHECK_CORE_ARGS="--cpu-only $(CHECK_CORE_ARGS)" check-core

bench-kernels: build/kbench build/cpubench

clean-build:
	rm -rf build

EXTRA_CLEAN = build src/core/gpu_stub.o
