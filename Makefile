# cpnumeric: `make run` (set up, build, run the demo) and `make test`.
# Both are idempotent: nothing is redone when nothing changed.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUILD := build
APT_PACKAGES := llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools libomp-22-dev \
  libhwy-dev libfftw3-dev libopenmpi-dev openmpi-bin ccache ninja-build cmake \
  g++ libgtest-dev python3-venv
JOBS ?= 2

export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: all run test build deps venv bench bench-quick bench-library bench-patterns bench-peers bench-scaling fuzz fuzz-mpi clean

all: build

# apt packages, once per machine and again when this list changes (a stamp
# in the build directory).
$(BUILD)/.apt-stamp: Makefile
	@mkdir -p $(BUILD)
	@if ! dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then \
	  SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(APT_PACKAGES); \
	fi
	@touch $@

deps: $(BUILD)/.apt-stamp

$(VENV)/.stamp: requirements.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	@touch $@

venv: $(VENV)/.stamp

$(BUILD)/build.ninja: $(BUILD)/.apt-stamp $(VENV)/.stamp CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
	  -DPython_EXECUTABLE=$(abspath $(PY))

# The package is used in place: a .pth file puts python/ on the venv's path,
# and the build writes _cpn and libcpnrt into python/cpnumeric/.
build: $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS)
	@echo "$(abspath python)" > $$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/cpnumeric-dev.pth
	@printf '#!%s\nimport sys\nfrom cpnumeric._cpnc import main\nsys.exit(main())\n' "$(abspath $(PY))" > $(VENV)/bin/cpnc
	@chmod +x $(VENV)/bin/cpnc

run: build
	$(PY) benchmarks/jacobi_demo.py

test: build
	cd $(BUILD) && ctest --output-on-failure -j 1

# Benchmarks unset the OpenBLAS variables some machines set (they force slower
# kernels); tests and CI keep them.
BENCH_ENV := env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE

bench: build
	$(BENCH_ENV) $(PY) benchmarks/run.py --json build/bench.json --markdown build/bench.md

bench-quick: build
	$(BENCH_ENV) $(PY) benchmarks/run.py --quick --json build/bench-quick.json

# Sorting, indexing, scans and linear algebra against NumPy (library-backed).
bench-library: build
	$(BENCH_ENV) $(PY) benchmarks/library.py --json build/bench-library.json \
	  --markdown build/bench-library.md

# Ordinary loops, sizes and element access, cold and warm (issue 22).
bench-patterns: build
	$(BENCH_ENV) $(PY) benchmarks/patterns.py --json build/bench-patterns.json \
	  --markdown build/bench-patterns.md

# Weak and strong scaling over 1 and 2 MPI ranks (issue 23), beside a
# hand-written mpi4py + NumPy program and Dask; installs those two peers
# (benchmark-only: the test run does not need them; one that does not
# install leaves its columns empty).
bench-scaling: build
	@for p in mpi4py "dask[distributed]"; do \
	  $(PY) -m pip install -q -c requirements.txt "$$p" || echo "bench-scaling: $$p skipped"; \
	done
	$(BENCH_ENV) $(PY) benchmarks/scaling.py --json build/bench-scaling.json \
	  --markdown build/bench-scaling.md

# The peer columns (NumExpr, Numba, Dask); the test run does not need them.
# Each is installed alone against the pinned NumPy; one that does not support
# it yet is skipped (its column stays empty).
bench-peers: venv
	@for p in numexpr numba "dask[array]"; do \
	  $(PY) -m pip install -q -c requirements.txt "$$p" || echo "bench-peers: $$p skipped"; \
	done

# AddressSanitizer + UndefinedBehaviorSanitizer (not part of `make test`): its
# own build directory and a copy of the package (build-asan/pkg), then the
# runtime's gtests and a conformance subset of pytest. Python itself is not
# instrumented, so libasan is preloaded; leak checking is off (CPython keeps
# its objects at exit), UBSan stops at the first finding.
ASAN_BUILD := build-asan
ASAN_PKG := $(ASAN_BUILD)/pkg/cpnumeric
ASAN_SUBSET ?= test/python/test_robustness.py test/python/test_linalg.py \
  test/python/test_sorting.py test/python/test_indexing.py test/python/test_patterns.py
# libstdc++ is preloaded too: else ASan's __cxa_throw interceptor finds no
# real __cxa_throw (Python loads libstdc++ after it) and aborts at a throw.
ASAN_ENV := LD_PRELOAD="$$(g++ -print-file-name=libasan.so) $$(g++ -print-file-name=libstdc++.so.6)" \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_odr_violation=0 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

.PHONY: test-asan
test-asan: $(BUILD)/.apt-stamp $(VENV)/.stamp
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  -DCMAKE_C_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" \
	  -DCPN_PACKAGE_BINARY_DIR=$(abspath $(ASAN_PKG)) \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
	  -DPython_EXECUTABLE=$(abspath $(PY))
	ninja -C $(ASAN_BUILD) -j $(JOBS) _cpn cpnrt-tests
	mkdir -p $(ASAN_PKG)
	for f in python/cpnumeric/*.py; do ln -sf $(abspath .)/$$f $(ASAN_PKG)/; done
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(ASAN_BUILD)/test/runtime/cpnrt-tests
	$(ASAN_ENV) CPN_TEST_PACKAGE_ROOT=$(abspath $(ASAN_BUILD)/pkg) CPN_EAGER_THRESHOLD=0 \
	  CPN_CACHE_DIR= $(PY) -m pytest -q -p no:cacheprovider $(ASAN_SUBSET)

# Differential fuzzing against NumPy (tools/fuzz, docs/fuzzing.md):
# N random programs of seed SEED in each of MODE (default, eager0, jit, or
# a comma list); FUZZ_SAVE=DIR keeps the results and minimized reproducers.
N ?= 1000
SEED ?= 0
MODE ?= default,eager0
fuzz: build
	$(PY) tools/fuzz/cpnfuzz.py --seed $(SEED) -n $(N) --mode $(MODE) --jobs $(JOBS) \
	  $(if $(FUZZ_SAVE),--save $(FUZZ_SAVE))

# The same programs on several MPI ranks with nearly every array split
# (CPN_PARTITION=rows, tools/fuzz/mpifuzz.py): RANKS=2,3; every op traced,
# then small arrays eager beside split ones.
RANKS ?= 2,3
fuzz-mpi: build
	$(PY) tools/fuzz/mpifuzz.py --seed $(SEED) -n $(N) --ranks $(RANKS) --eager0
	$(PY) tools/fuzz/mpifuzz.py --seed $(SEED) -n $(N) --ranks $(RANKS) --eager 128

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
