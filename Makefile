# graphferry: `make` with no target lists the targets.
#
# The two commands of the README:
#   make demo   set everything up, then train GraphSAGE on the shipped Cora through our loader
#   make test   set everything up, then run every test
# Both create the Python virtual environment .venv (pinned in python/requirements.txt)
# and build libgraphferry.so; Go modules are fetched by the go command.

SHELL      := /bin/bash
GO         ?= go
PYTHON     ?= python3
VENV       := .venv
PY         := $(VENV)/bin/python
LIB        := build/libgraphferry.so
LIB_CHECK  := build/cgocheck2/libgraphferry.so
PKG_LIB    := python/graphferry/lib/libgraphferry.so
GO_SRC     := $(shell find engine capi -name '*.go' -o -name '*.c' -o -name '*.h' 2>/dev/null) capi/graphferry.map.o include/graphferry.h include/dlpack.h go.mod go.sum
CXX        ?= g++
PYTEST_ARGS ?=

.PHONY: bench-subgraph bench-verify gen help lib lib-cuda fakecuda venv demo stats test test-go test-nocgo test-big test-c test-py test-cgocheck test-cuda lint fmt-py fuzz bench bench-hetero bench-link clean

help:
	@echo "graphferry make targets:"
	@echo "  make demo        set up (.venv, library) and train GraphSAGE on the shipped Cora with our loader"
	@echo "  make test        set up and run every test: Go (race), engine without cgo, C tests and soak, pytest,"
	@echo "                   the C API tests again on a cgocheck2 build, the C soak under valgrind (about 9 min on 2 cores)"
	@echo "  make lib         build $(LIB) (go build -buildmode=c-shared ./capi)"
	@echo "  make lib-cuda    build $(LIB_CUDA) (engine + CUDA backend, -tags cuda; no GPU needed, see cuda/README.md)"
	@echo "  make fakecuda    build the fake CUDA driver $(FAKECUDA) (tests without a GPU; never shipped)"
	@echo "  make test-cuda   the CUDA library, kernels on the emulator, GPU device tests over the fake driver, tests/gpu/run.sh --dry-run"
	@echo "  make docs        the documentation site into build/docs/html (Sphinx, warnings as errors), checked by tests/docs"
	@echo "  make docs-linkcheck  every external link of the documentation (needs the network)"
	@echo "  make wheel       dist/graphferry-VERSION-py3-none-manylinux_*.whl: both libraries and the header, tagged by auditwheel"
	@echo "  make sdist       dist/graphferry-VERSION.tar.gz: the package and the Go sources (installing it builds with Go)"
	@echo "  make test-wheel  the wheel in a fresh environment without Go: the demo trains, a C program runs on it"
	@echo "  make test-sdist  test-wheel and the sdist installed from source with Go (about 30 s more)"
	@echo "  make test-wheel-fresh  pip install graphferry[dgl] and [pyg] into empty environments from the package index:"
	@echo "                   info, a trained epoch, every documented example (downloads ~6 GB the first time)"
	@echo "  make venv        create .venv with the pinned Python environment and graphferry installed (editable)"
	@echo "  make test-go     go vet + go test -race ./... (-tags gftest: the capi tests and their helpers)"
	@echo "  make test-abi    a C program built against released headers (tests/c/abi/: 0.1.0, 0.3.0) runs on this library"
	@echo "  make test-c      the header as C99 and C++, the C tests, the C soak, and the symbols of $(LIB) (exports, no test helpers)"
	@echo "  make test-cgocheck  the C tests and the pytest tests marked boundary against a GOEXPERIMENT=cgocheck2 build"
	@echo "  make test-valgrind  the C soak under valgrind memcheck (include/graphferry-valgrind.supp)"
	@echo "  make test-big    the 2^31-edge-offset sampling test (8 GiB, about 15 s)"
	@echo "  make test-py     pytest tests/python (all but the slow accuracy test)"
	@echo "  make test-accuracy  GraphSAGE accuracy through our loaders vs DGL's on Cora and CiteSeer (slow)"
	@echo "  make test-threads  gf_graph_close while other threads use the graph (C, a few seconds)"
	@echo "  make test-comm   a host-provided communicator (gf_comm) over threads: ranks' batches = single-process (C)"
	@echo "  make lint        ruff check + ruff format --check over python/, tests/python, examples, bench;"
	@echo "                   the package's import graph (no cycle, no import inside a function);"
	@echo "                   the files derived from include/graphferry.h are as make gen writes them"
	@echo "  make gen         write what include/graphferry.h, the C boundary's source, derives: the Python"
	@echo "                   bindings, capi's layout tables and C shims (python/tools/cgen.py)"
	@echo "  make venv-latest create .venv-latest: newest torch and torch_geometric, no DGL (python/requirements-latest.txt)"
	@echo "  make test-py-latest  the core and PyG tests in .venv-latest (under a minute)"
	@echo "  make fuzz        run each Go fuzz target for FUZZTIME (default 20s)"
	@echo "  make stats       the sampling schemes' statistical tests, with their p-values"
	@echo "  make bench       quick benchmark (minutes): graphferry vs DGL, GraphBolt, PyG, index_select on the real datasets + a small generated graph"
	@echo "  make bench-full  full benchmark on the products-like and papers-like generated presets (long; cached in bench/.cache)"
	@echo "  make bench-dist  issue 11: bytes per hop of CSP push vs adjacency pull, 1/2/4 ranks, layouts, edge cut (long, 17 GB)"
	@echo "  make bench-disk  issue 21: the disk tier vs the mapping in a 1 GiB cgroup v1 memory group (bench/results/disk, ~15 min)"
	@echo "  make bench-hetero  heterograph sampling: graphferry vs DGL's NeighborSampler (bench/results/hetero, a minute)"
	@echo "  make bench-link  link prediction: graphferry's DGL and PyG edge loaders vs DGL's edge loader, and the node"
	@echo "                   loaders (graphferry.pyg vs graphferry.dgl), on CiteSeer and products-like (bench/results/link, ~15 min)"
	@echo "  make bench-subgraph  GraphSAINT epochs: the engine's pipelined subgraph loader vs the same batches on the"
	@echo "                   training thread and DGL's DataLoader; every other subgraph loader kind beside DGL's or"
	@echo "                   PyG's where it runs, on Cora (bench/results/subgraph, minutes)"
	@echo "  make bench-kinds  every loader kind's sampling epoch beside DGL's loader (bench/results/kinds, minutes)"
	@echo "  make bench-verify  a loading epoch with and without feat.bin's per-block checks (bench/results/verify_read.md, seconds)"

# The checkout's source id (capi/source_id.sh), compiled into every library
# by capi/build.sh; build/source_id changes only when the id does, so a
# change to any source the id covers rebuilds the libraries.
SOURCE_ID := $(shell capi/source_id.sh)
.PHONY: FORCE
build/source_id: FORCE
	@mkdir -p $(dir $@)
	@echo $(SOURCE_ID) | cmp -s - $@ || echo $(SOURCE_ID) >$@

$(LIB): $(GO_SRC) build/source_id
	@mkdir -p $(dir $@)
	GO=$(GO) capi/build.sh $@

lib: $(LIB)
	@mkdir -p $(dir $(PKG_LIB))
	cp $(LIB) $(PKG_LIB).tmp && mv -f $(PKG_LIB).tmp $(PKG_LIB)  # rename: a running process keeps its mapping

# The CUDA library: kernels to PTX with NVRTC from the venv, cuda.h from the
# nvidia-cuda-runtime-cu12 wheel, a generated link-time stub of libcuda.so.1
# (cuda/tools/build.sh). PTXAS=/path/to/ptxas also checks the PTX.
LIB_CUDA     := build/libgraphferry_cuda.so
PKG_LIB_CUDA := python/graphferry/lib/libgraphferry_cuda.so
CUDA_SRC     := $(wildcard cuda/*.go cuda/kernels/*.cu cuda/kernels/*.cuh cuda/tools/*)

# With it, build/gpu/cuda.test: the cuda package's Go tests (go test -c
# -tags cuda,gftest: gftest adds the C helpers of the tests, never shipped),
# which tests/gpu/run.sh runs on a GPU machine.
GPU_TEST_BIN := build/gpu/cuda.test
$(LIB_CUDA): $(GO_SRC) $(CUDA_SRC) $(VENV)/.stamp build/source_id
	PYTHON=$(abspath $(PY)) GO=$(GO) cuda/tools/build.sh $@ --test $(GPU_TEST_BIN)

lib-cuda: $(LIB_CUDA)
	@mkdir -p $(dir $(PKG_LIB_CUDA))
	cp $(LIB_CUDA) $(PKG_LIB_CUDA).tmp && mv -f $(PKG_LIB_CUDA).tmp $(PKG_LIB_CUDA)

# The fake CUDA driver (cuda/fakedriver): a host-memory libcuda.so.1 that runs
# the kernels, so that the GPU device code (cuda/gpu.go, -tags cuda) and the
# CUDA library's fence run their driver calls here. A test double; never shipped.
FAKECUDA     := build/fakecuda/libcuda.so.1
FAKECUDA_SRC := $(wildcard cuda/fakedriver/*.cpp cuda/fakedriver/*.h cuda/fakedriver/*.sh cuda/fakedriver/*.txt cuda/emu/*.h cuda/kernels/*.cu cuda/kernels/*.cuh)
CUDA_INC      = $$($(PY) cuda/tools/cuda_include.py build/cuda)
$(FAKECUDA): $(FAKECUDA_SRC) $(VENV)/.stamp
	PYTHON=$(abspath $(PY)) bash cuda/fakedriver/build.sh $(dir $@)

fakecuda: $(FAKECUDA)

# The CUDA side without a GPU: the library's driver dependency and hooks; vet;
# the kernels on the emulator; the fake driver's own C test; the GPU device
# tests (-tags cuda) over the fake driver, once in order and with each
# launch's threads run concurrently on 3 host threads in seeded orders (the
# kernels and the mode-2 pipeline on three schedules); and
# tests/gpu/run.sh --dry-run (the GPU script, every step that runs here).
test-cuda: lib lib-cuda $(FAKECUDA) build/cudatest/test_device_loader
	readelf -d $(LIB_CUDA) | grep -q 'NEEDED.*\[libcuda\.so\.1\]'
	for h in check selfcheck epoch fault; do nm -D --defined-only $(LIB_CUDA) | grep -q " T gfcuda_$$h$$" || exit 1; done
	CGO_CFLAGS=-I$(CUDA_INC) $(GO) vet -tags cuda,$(GO_TEST_TAGS) ./cuda ./capi
	PYTHON=$(abspath $(PY)) bash cuda/fakedriver/test.sh $(dir $(FAKECUDA))
	cd cuda && LD_LIBRARY_PATH=$(abspath $(dir $(FAKECUDA))) GF_FAKECUDA_DEVICES=2 ../$(GPU_TEST_BIN) -test.run '^(TestGPU|TestFake)' -test.count=1
	cd cuda && LD_LIBRARY_PATH=$(abspath $(dir $(FAKECUDA))) GF_FAKECUDA_DEVICES=2 GF_FAKECUDA_THREADS=3 GF_FAKECUDA_SEED=11 \
	  ../$(GPU_TEST_BIN) -test.run '^TestGPU(SelfCheck|ConcurrentUse|EpochCora|PipelineCheck|PipelinePinnedTopology|DeviceStage)$$' -test.count=1
	for seed in 12 13; do \
	  (cd cuda && LD_LIBRARY_PATH=$(abspath $(dir $(FAKECUDA))) GF_FAKECUDA_DEVICES=2 GF_FAKECUDA_THREADS=3 GF_FAKECUDA_SEED=$$seed \
	    ../$(GPU_TEST_BIN) -test.run '^TestGPU(SelfCheck|PipelineCheck)$$' -test.count=1) || exit 1; \
	done
	LD_LIBRARY_PATH=$(abspath $(dir $(FAKECUDA))) ./build/cudatest/test_device_loader cuda examples/data/cora
	LD_LIBRARY_PATH=$(abspath $(dir $(FAKECUDA))) GF_FAKECUDA_THREADS=3 GF_FAKECUDA_SEED=11 ./build/cudatest/test_device_loader cuda examples/data/cora
	PYTHON=$(abspath $(PY)) bash tests/gpu/run.sh --dry-run

$(LIB_CHECK): $(GO_SRC) build/source_id
	@mkdir -p $(dir $@)
	GOEXPERIMENT=cgocheck2 GO=$(GO) capi/build.sh $@

$(VENV)/.stamp: python/requirements.txt python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -r python/requirements.txt
	touch $@

# The editable install points a venv at this checkout: redone only when the
# venv last pointed elsewhere or python/pyproject.toml changed (the venv's
# .editable records which; 10 s saved on every make test).
EDITABLE_ID = $(CURDIR) $(shell sha256sum python/pyproject.toml | cut -c1-16)
define editable
	@if [ "$$(cat $(1)/.editable 2>/dev/null)" != "$(EDITABLE_ID)" ]; then \
	  echo "$(1)/bin/python -m pip install --quiet --no-build-isolation --no-deps -e ./python"; \
	  $(1)/bin/python -m pip install --quiet --no-build-isolation --no-deps -e ./python && \
	  echo "$(EDITABLE_ID)" > $(1)/.editable; fi
endef

venv: $(VENV)/.stamp lib
	$(call editable,$(VENV))

demo: venv
	$(PY) examples/train_dgl.py --dataset examples/data/cora

test: venv lint test-go test-nocgo test-c test-untimed-pairs test-py-once test-cgocheck test-side-by-side
	@echo "make test: all suites passed"

# Suites that assert nothing about time, two at a time: the 8 GiB graph
# (test-big: one core, about 30 s) beside the ABI, communicator and
# close-while-busy C tests. (test-c's cancellation latencies and
# test-py-once's soak, which counts rounds in a fixed time, run alone.)
.PHONY: test-untimed-pairs
test-untimed-pairs:
	$(MAKE) --no-print-directory -j2 test-big test-abi test-comm test-threads

# The last suites of `make test` two at a time: valgrind's runs are
# single-threaded (memcheck serialises a program's threads) and, like the
# fake driver's tests, the wheel's and the documentation's builds and the
# newest-torch suite (whose one bound, a 5 s close, is generous), assert
# nothing tight about time (test_cancel's bounds under memcheck carry
# GF_TEST_SLACK=$(VALGRIND_SLACK)), so they share the two cores; the timed
# suites above run alone.
.PHONY: test-side-by-side
test-side-by-side: venv lib-cuda $(FAKECUDA)
	$(MAKE) --no-print-directory -j2 test-valgrind test-cuda test-wheel docs test-py-latest

# The capi tests and their helpers (capi/testhelp.go, capi/abihelp.go) build
# only with the tag gftest, so that the shipped library carries no test code
# (tests/c/check_exports.sh checks it); every go vet and go test of capi here
# passes it.
GO_TEST_TAGS := gftest

test-go:
	$(GO) vet -tags $(GO_TEST_TAGS) ./...
	$(GO) test -race -count=1 -tags $(GO_TEST_TAGS) ./...

# The engine builds, with its tests, without cgo (pure Go: go vet compiles
# every package and test); test-go runs those tests (with the race detector).
test-nocgo:
	CGO_ENABLED=0 $(GO) vet ./engine/...

# Edge offsets past 2^31: an 8 GiB graph, so it runs on its own (the test
# skips itself when less than 14 GiB is available).
test-big:
	GRAPHFERRY_BIG_TESTS=1 $(GO) test -count=1 -v -run '^TestOffsetsBeyond2to31$$' ./engine/sample

# The C tests: C99 + pthreads, the public header, tests/c/gftest.h (the
# scaffolding they share) and the library, nothing else of graphferry. Each
# is built against $(LIB) as build/NAME and against $(LIB_CHECK) as
# build/cgocheck2/NAME.
C_TESTS       := test_capi test_comm test_threads test_typed test_alloc test_edge_loader test_cancel test_disk soak
C_TEST_CFLAGS := -std=c99 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -pthread -Iinclude
C_TEST_DEPS   := include/graphferry.h include/dlpack.h tests/c/gftest.h

$(addprefix build/,$(C_TESTS)): build/%: tests/c/%.c $(C_TEST_DEPS) $(LIB)
	$(CC) $(C_TEST_CFLAGS) -o $@ $< -Lbuild -lgraphferry -Wl,-rpath,'$$ORIGIN'

# tests/c/test_device_loader.c twice: against the CPU library (its refusal
# of a device) and, in build/cudatest/ beside a copy of the CUDA library,
# against libgraphferry_cuda.so and the driver (the fake one in test-cuda).
build/test_device_loader: tests/c/test_device_loader.c $(C_TEST_DEPS) $(LIB)
	$(CC) $(C_TEST_CFLAGS) -Itests/c -o $@ $< -Lbuild -lgraphferry -Wl,-rpath,'$$ORIGIN'
build/cudatest/test_device_loader: tests/c/test_device_loader.c $(C_TEST_DEPS) $(LIB_CUDA) $(FAKECUDA)
	@mkdir -p $(dir $@)
	cp $(LIB_CUDA) $(dir $@)libgraphferry_cuda.so
	$(CC) $(C_TEST_CFLAGS) -DGFT_CUDA -Itests/c -I$(CUDA_INC) -Icuda/fakedriver -o $@ $< $(dir $@)libgraphferry_cuda.so \
	  -L$(dir $(FAKECUDA)) -lcuda -ldl -Wl,-rpath,'$$ORIGIN'

$(addprefix build/cgocheck2/,$(C_TESTS)): build/cgocheck2/%: tests/c/%.c $(C_TEST_DEPS) $(LIB_CHECK)
	$(CC) $(C_TEST_CFLAGS) -o $@ $< -Lbuild/cgocheck2 -lgraphferry -Wl,-rpath,'$$ORIGIN'

# The ABI promise against released headers: tests/c/abi/abi_0_1_0.c is
# compiled against 0.1.0's header as released (tests/c/abi/0.1.0/, verbatim)
# and against 0.3.0's (tests/c/abi/0.3.0/), and each program runs against
# this checkout's library: old option struct layouts read, signatures and
# field numbers unchanged. (python/tools/cgen.py checks every kept header's
# structs and signatures against today's header.)
build/abi_%: tests/c/abi/abi_0_1_0.c tests/c/abi/%/graphferry.h tests/c/abi/%/dlpack.h $(LIB)
	$(CC) -std=c99 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -pthread -Itests/c/abi/$* -o $@ $< -Lbuild -lgraphferry -Wl,-rpath,'$$ORIGIN'

.PHONY: test-abi
test-abi: build/abi_0.1.0 build/abi_0.3.0
	./build/abi_0.1.0 examples/data/cora
	./build/abi_0.3.0 examples/data/cora

# gf_graph_close while other threads sample, read node data and run loaders
# on the same graph (a few seconds).
.PHONY: test-threads
test-threads: build/test_threads
	./build/test_threads

# A host-provided communicator (gf_comm) over threads: each rank's batches
# equal the single-process loader's, and host failures are reported.
.PHONY: test-comm
test-comm: build/test_comm
	./build/test_comm examples/data/cora

# The C soak: 1,000 rounds of open, load, break mid-epoch, close on the shipped
# Cora, resident memory and file descriptors flat (about 15 s).
SOAK_ROUNDS ?= 1000

# The headers alone, as pedantic C99 and as C++; the C test (a forked child
# included); the typed constructors; the soak; and the library's symbols:
# exactly the header's GF_API functions exported, no Go test helper linked in.
test-c: build/test_capi build/test_typed build/test_alloc build/test_edge_loader build/test_cancel build/test_disk build/soak build/test_device_loader
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -Iinclude include/graphferry.h
	$(CXX) -x c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -Iinclude include/graphferry.h
	./build/test_capi
	./build/test_typed tests/data/typed_edges.arrow
	./build/test_alloc examples/data/cora
	./build/test_edge_loader examples/data/cora
	./build/test_cancel examples/data/cora
	./build/test_disk examples/data/cora
	./build/test_device_loader cpu examples/data/cora
	./build/soak examples/data/cora $(SOAK_ROUNDS)
	tests/c/check_exports.sh $(LIB) include/graphferry.h

# The modules each environment installs: in `make test` a test that needs
# one of them fails when it cannot be imported, rather than being skipped
# (tests/python/conftest.py); a plain `pytest` still skips with the reason.
REQUIRE_MAIN   := GRAPHFERRY_TEST_REQUIRE=dgl,torch_geometric,pymetis,pyarrow,setuptools,wheel
REQUIRE_LATEST := GRAPHFERRY_TEST_REQUIRE=torch_geometric

# The Python suite (the 15-second soak included) but the slow accuracy test
# and the torchrun launches (test-torchrun).
test-py: venv lib-cuda $(FAKECUDA)
	$(REQUIRE_MAIN) $(PY) -m pytest tests/python -q -m "not slow and not torchrun" $(PYTEST_ARGS)

# `make test` runs each Python test once: those marked `boundary` (nearly
# all: tests/python/conftest.py) against the cgocheck2 build in
# test-cgocheck, the others (fresh interpreters, volume, no library) here
# against the shipped build. `make test-py` still runs every test against
# the shipped build.
test-py-once: venv lib-cuda $(FAKECUDA)
	$(REQUIRE_MAIN) $(PY) -m pytest tests/python -q -m "not slow and not boundary and not torchrun" $(PYTEST_ARGS)

# Two torchrun launches of two ranks each (--nnodes=2 on 127.0.0.1), training
# partitioned Cora. Not in `make test`, for its time (a minute or more of the
# 2 cores; make test is held under 10 minutes). The random hang it showed
# (a rank deadlocked at exit: torch < 2.8 destroys a Gloo group holding the
# GIL its worker needs) is fixed in examples/train_dist.py and guarded in
# TorchComm (docs/limitations.md).
.PHONY: test-torchrun
test-torchrun: venv
	$(PY) -m pytest tests/python/test_torchrun.py -q -m "torchrun and not slow" $(PYTEST_ARGS)

# A second environment with the newest torch and torch_geometric of the package
# index and no DGL (DGL pins .venv to torch 2.2), for the PyG users who run a
# current torch. test-py-latest runs there what depends on torch's and PyG's
# versions: the PyG loaders, the compatibility rules, the core API and its
# errors (DLPack in and out); the DGL tests skip, and the tests of library
# loading and the CLI, which start fresh interpreters, are left to test-py.
VENV_LATEST := .venv-latest
PY_LATEST   := $(VENV_LATEST)/bin/python
LATEST_TESTS = tests/python/test_compat.py $(wildcard tests/python/test_pyg*.py) \
               tests/python/test_hetero_pyg.py tests/python/test_temporal_pyg.py \
               tests/python/test_errors.py tests/python/test_graph.py tests/python/test_distributed_pyg.py \
               tests/python/test_fork.py::test_torch_dataloader_fork_worker_fails_cleanly
LATEST_SKIP  = not cli and not library_ and not major_version

.PHONY: venv-latest test-py-latest

$(VENV_LATEST)/.stamp: python/requirements-latest.txt python/pyproject.toml
	test -x $(PY_LATEST) || $(PYTHON) -m venv $(VENV_LATEST)
	$(PY_LATEST) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY_LATEST) -m pip install --quiet -r python/requirements-latest.txt
	touch $@

venv-latest: $(VENV_LATEST)/.stamp lib
	$(call editable,$(VENV_LATEST))

test-py-latest: venv-latest
	$(REQUIRE_LATEST) $(PY_LATEST) -m pytest $(LATEST_TESTS) -q -m "not slow" -k "$(LATEST_SKIP)" $(PYTEST_ARGS)

# The training runs (marked slow): GraphSAGE trained through our loaders
# matches DGL's own loader on Cora and CiteSeer (5 seeds each), two ranks
# train to one process's accuracy (node and link prediction); several minutes
# on 2 cores, so not in `make test`.
.PHONY: test-accuracy
test-accuracy: venv
	$(PY) -m pytest tests/python -q -s -m slow $(PYTEST_ARGS)

# The C tests and the Python tests marked `boundary` (every test but those
# that only repeat crossings at volume: tests/python/conftest.py; in `make
# test` their only run, see test-py-once) against a
# library built with GOEXPERIMENT=cgocheck2, which checks every pointer passed
# between Go and C.
test-cgocheck: venv lib-cuda $(FAKECUDA) $(LIB_CHECK) build/cgocheck2/test_capi build/cgocheck2/test_threads build/cgocheck2/test_alloc build/cgocheck2/test_edge_loader build/cgocheck2/test_cancel build/cgocheck2/test_disk build/cgocheck2/soak
	./build/cgocheck2/test_capi
	./build/cgocheck2/test_threads
	./build/cgocheck2/test_alloc examples/data/cora
	./build/cgocheck2/test_edge_loader examples/data/cora
	./build/cgocheck2/test_cancel examples/data/cora
	./build/cgocheck2/test_disk examples/data/cora
	tests/c/check_exports.sh $(LIB_CHECK) include/graphferry.h
	./build/cgocheck2/soak examples/data/cora 200
	$(MAKE) --no-print-directory -j2 test-cgocheck-py-0 test-cgocheck-py-1

# The Python half of test-cgocheck in two shards side by side (the test
# files alternately, in name order): most tests keep one core busy, so two
# interpreters finish in about half the time on two cores. Each shard's
# pytest keeps no cache (-p no:cacheprovider), so that they share no files.
PY_TEST_FILES = $(sort $(wildcard tests/python/test_*.py))
PY_CGOCHECK = $(REQUIRE_MAIN) GRAPHFERRY_LIB_PATH=$(abspath $(LIB_CHECK)) $(PY) -m pytest -q -m boundary -p no:cacheprovider $(PYTEST_ARGS)
PY_SHARD = $(shell $(PY) -c 'import sys; print(" ".join(sys.argv[2:][int(sys.argv[1])::2]))' $(1) $(PY_TEST_FILES))
.PHONY: test-cgocheck-py-0 test-cgocheck-py-1
test-cgocheck-py-0: venv $(LIB_CHECK)
	$(PY_CGOCHECK) $(call PY_SHARD,0)
test-cgocheck-py-1: venv $(LIB_CHECK)
	$(PY_CGOCHECK) $(call PY_SHARD,1)

# The C soak under valgrind's memcheck: a definite leak of C memory or an
# invalid access in C code fails; include/graphferry-valgrind.supp (shipped
# for C users) silences the false reports inside the Go runtime. Skipped,
# saying so, where valgrind is not installed.
VALGRIND ?= valgrind
VALGRIND_ROUNDS ?= 10
# test_cancel's latency bounds (the issue's 100 ms times this) under
# memcheck, which slows the Go runtime tens of times.
VALGRIND_SLACK ?= 50
.PHONY: test-valgrind
VALGRIND_RUN = $(VALGRIND) --quiet --undef-value-errors=no --suppressions=include/graphferry-valgrind.supp --error-exitcode=99 \
	    --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
test-valgrind: build/soak build/test_alloc build/test_edge_loader build/test_cancel build/test_typed
	@if ! command -v $(VALGRIND) >/dev/null 2>&1; then \
	  echo "test-valgrind: SKIPPED: $(VALGRIND) is not installed (e.g. apt-get install valgrind)"; \
	else \
	  echo "$(VALGRIND) ... ./build/soak examples/data/cora $(VALGRIND_ROUNDS)"; \
	  $(VALGRIND_RUN) ./build/soak examples/data/cora $(VALGRIND_ROUNDS) && \
	  echo "$(VALGRIND) ... ./build/test_alloc examples/data/cora" && \
	  $(VALGRIND_RUN) ./build/test_alloc examples/data/cora && \
	  echo "$(VALGRIND) ... ./build/test_edge_loader examples/data/cora" && \
	  $(VALGRIND_RUN) ./build/test_edge_loader examples/data/cora && \
	  echo "$(VALGRIND) ... ./build/test_typed tests/data/typed_edges.arrow" && \
	  $(VALGRIND_RUN) ./build/test_typed tests/data/typed_edges.arrow && \
	  echo "$(VALGRIND) ... ./build/test_cancel examples/data/cora (GF_TEST_SLACK=$(VALGRIND_SLACK))" && \
	  GF_TEST_SLACK=$(VALGRIND_SLACK) $(VALGRIND_RUN) ./build/test_cancel examples/data/cora; \
	fi

# ruff (pinned in python/requirements.txt, configured in python/pyproject.toml) lints and
# checks the formatting of the Python tree, as gofmt and go vet do for Go. `make fmt-py` formats.
# python/tools/importgraph.py (standard library only) checks the package's import graph:
# no cycle, no import inside a function but of the optional third-party packages.
# The venv is a prerequisite only when its own ruff is used (RUFF=... names another).
RUFF       ?= $(VENV)/bin/ruff
RUFF_PATHS := python tests/python tests/wheel tests/docs examples bench docs
lint: $(if $(filter $(VENV)/bin/ruff,$(RUFF)),$(VENV)/.stamp)
	$(RUFF) check --config python/pyproject.toml $(RUFF_PATHS)
	$(RUFF) format --check --config python/pyproject.toml $(RUFF_PATHS)
	$(PYTHON) python/tools/importgraph.py python/graphferry
	$(PYTHON) python/tools/cgen.py --check

# The C boundary from its one source, include/graphferry.h (its opening
# comment says how): python/tools/cgen.py (standard library only) rewrites
# the generated part of python/graphferry/_native/lib.py and errors.py,
# capi/boundary_gen.c (the forwarding shims) and capi/boundary_gen.go (the
# struct layouts); `make lint` fails when they differ from what it writes.
gen:
	$(PYTHON) python/tools/cgen.py

fmt-py: $(VENV)/.stamp
	$(RUFF) check --fix --config python/pyproject.toml $(RUFF_PATHS)
	$(RUFF) format --config python/pyproject.toml $(RUFF_PATHS)

# The statistical tests of every sampling scheme, with their p-values.
stats:
	$(GO) test -count=1 -v -run 'Uniformity|Biased|ExcludeEdges|LayerWise|RandomWalk' ./engine/sample | grep -E 'p = |^(ok|FAIL|---)'

FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -tags $(GO_TEST_TAGS) -list 'Fuzz.*' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -tags $(GO_TEST_TAGS) -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench: venv
	$(PY) bench/run.py --quick --out bench/results

.PHONY: bench-kinds
bench-kinds: venv lib
	$(PY) bench/kinds_bench.py

bench-subgraph: venv lib
	for m in node edge walk; do $(PY) bench/subgraph_bench.py --mode $$m --out bench/results/subgraph || exit 1; done
	for k in dgl_cluster dgl_shadow pyg_cluster pyg_saint pyg_shadow; do $(PY) bench/subgraph_bench.py --kind $$k --out bench/results/subgraph || exit 1; done

bench-full: venv
	$(PY) bench/run.py --full --out bench/results/full

# Issue 11's distributed sampling bench: bytes per hop of CSP's task push
# against pulling whole adjacency lists, for 1, 2 and 4 in-process ranks and
# each layout, sampling epoch time, and the edge cut of METIS (pymetis from
# .venv), random and range, on the products-like preset. About 7 minutes on
# 2 cores and 17 GB at its peak (the pull baseline holds 4 ranks' whole
# adjacency lists); the first run also generates the graph and runs METIS
# (about 8 minutes, 17 GB), both cached for later runs.
.PHONY: bench-dist
bench-dist: venv
	$(GO) run ./bench/dspbytes -preset products-like -cache bench/.cache/dspbytes-products-like \
	  -python $(PY) -out bench/results

.PHONY: bench-disk
bench-disk: venv lib
	$(PY) bench/disk_bench.py --out bench/results/disk

bench-hetero: venv
	$(PY) bench/hetero_bench.py --out bench/results/hetero

# Link prediction (issue 18): edge loaders on CiteSeer's and products-like's
# edges, and the node loaders on the same graphs, one run (JSON + Markdown).
bench-link: venv
	$(PY) bench/link_bench.py --out bench/results/link

# The documentation site (docs/: Sphinx with MyST, pinned in
# python/requirements.txt) into build/docs/html, warnings as errors, then
# tests/docs (each main class's page has its parameter list, an anchor per C
# function, ...); the pages' Python and C examples run in test-py
# (tests/python/test_docs.py). It documents this checkout's python/ (docs/conf.py),
# so it needs the library and the pinned environment, not the editable install.
# The site is self-contained (no link into the repository): build/docs/html
# can be hosted as it is. docs-linkcheck checks every external link (network).
.PHONY: docs docs-linkcheck
docs: $(VENV)/.stamp lib
	rm -rf build/docs docs/reference/api
	$(PY) -m sphinx -W --keep-going -q -b html docs build/docs/html
	$(PY) -m pytest tests/docs -q -p no:cacheprovider $(PYTEST_ARGS)
	@echo "docs: build/docs/html/index.html ($$(wc -l <build/docs/docs-verbatim.txt) docstrings shown verbatim: build/docs/docs-verbatim.txt)"

docs-linkcheck: $(VENV)/.stamp lib
	$(PY) -m sphinx -W --keep-going -q -b linkcheck docs build/docs/linkcheck

# Distributions (dist/). The wheel packages the libraries `make lib lib-cuda`
# built (python/setup.py with GRAPHFERRY_PREBUILT: nothing is built twice and
# no virtual environment is touched), the header beside them, and is tagged
# for the oldest manylinux its shared objects satisfy, as auditwheel finds
# it (python/tools/wheeltag.py). The sdist carries the Go sources and builds
# the library with Go when installed (python/tools/sdist.py).
DIST := dist
.PHONY: wheel sdist dist test-wheel
wheel: lib lib-cuda
	rm -rf build/wheel python/build && mkdir -p build/wheel
	GRAPHFERRY_PREBUILT=$(abspath build) GRAPHFERRY_BUILD_CUDA=1 \
	  $(PY) -m pip wheel --quiet --no-build-isolation --no-deps -w build/wheel ./python
	rm -f $(DIST)/graphferry-*.whl
	$(PY) python/tools/wheeltag.py build/wheel/graphferry-*.whl $(DIST)

sdist: $(VENV)/.stamp
	rm -f $(DIST)/graphferry-*.tar.gz
	$(PY) python/tools/sdist.py $(DIST)

dist: wheel sdist

# The wheel installed into a fresh environment without Go: the demo trains,
# a C program builds and runs against the library inside it; the sdist
# without Go says what it needs (tests/wheel/test_wheel.py, about a minute).
test-wheel: wheel sdist $(FAKECUDA)
	$(PY) -m pytest tests/wheel -q $(PYTEST_ARGS)

# The wheel with each extra, [dgl] and [pyg], installed from the package
# index into empty environments: graphferry --version, info, a trained epoch
# and every documented example from an empty folder (tests/wheel/test_fresh.py).
# Not in make test: the first run downloads about 6 GB (torch twice, with its
# CUDA wheels) into build/wheelhouse; later runs only ask the index and
# install from there (minutes).
.PHONY: test-wheel-fresh
test-wheel-fresh: wheel
	GRAPHFERRY_TEST_FRESH=1 $(PY) -m pytest tests/wheel/test_fresh.py -q -s $(PYTEST_ARGS)

# Also the sdist installed from source with Go (about 30 s more; not in make test).
.PHONY: test-sdist
test-sdist: wheel sdist $(FAKECUDA)
	GRAPHFERRY_TEST_SDIST_BUILD=1 $(PY) -m pytest tests/wheel -q $(PYTEST_ARGS)

clean:
	rm -rf build $(DIST) $(PKG_LIB) $(PKG_LIB_CUDA) cuda/kernels.ptx

# Issue 23: what checking feat.bin's blocks at their first read costs a loading epoch.
bench-verify:
	$(GO) run ./bench/verifyread -out bench/results/verify_read.md
