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
GO_SRC     := $(shell find engine capi -name '*.go' -o -name '*.c' -o -name '*.h' 2>/dev/null) include/graphferry.h go.mod go.sum
PYTEST_ARGS ?=

.PHONY: help lib venv demo stats test test-go test-nocgo test-big test-c test-py test-cgocheck fuzz bench clean

help:
	@echo "graphferry make targets:"
	@echo "  make demo        set up (.venv, library) and train GraphSAGE on the shipped Cora with our loader"
	@echo "  make test        set up and run every test: Go (race), engine without cgo, C tests and soak, pytest,"
	@echo "                   the C API tests again on a cgocheck2 build, the C soak under valgrind (about 9 min on 2 cores)"
	@echo "  make lib         build $(LIB) (go build -buildmode=c-shared ./capi)"
	@echo "  make venv        create .venv with the pinned Python environment and graphferry installed (editable)"
	@echo "  make test-go     go vet + go test -race ./..."
	@echo "  make test-c      build and run the C test and the C soak (tests/c) against $(LIB)"
	@echo "  make test-cgocheck  the C tests and the pytest tests marked boundary against a GOEXPERIMENT=cgocheck2 build"
	@echo "  make test-valgrind  the C soak under valgrind memcheck (include/graphferry-valgrind.supp)"
	@echo "  make test-big    the 2^31-edge-offset sampling test (8 GiB, about 15 s)"
	@echo "  make test-py     pytest tests/python (all but the slow accuracy test)"
	@echo "  make test-accuracy  GraphSAGE accuracy through our loaders vs DGL's on Cora and CiteSeer (slow)"
	@echo "  make fuzz        run each Go fuzz target for FUZZTIME (default 20s)"
	@echo "  make stats       the sampling schemes' statistical tests, with their p-values"
	@echo "  make bench       quick benchmark (minutes): graphferry vs DGL, GraphBolt, PyG, index_select on the real datasets + a small generated graph"
	@echo "  make bench-full  full benchmark on the products-like and papers-like generated presets (long; cached in bench/.cache)"

$(LIB): $(GO_SRC)
	@mkdir -p $(dir $@)
	$(GO) build -buildmode=c-shared -o $@ ./capi
	@rm -f $(basename $@).h

lib: $(LIB)
	@mkdir -p $(dir $(PKG_LIB))
	cp $(LIB) $(PKG_LIB).tmp && mv -f $(PKG_LIB).tmp $(PKG_LIB)  # rename: a running process keeps its mapping

$(LIB_CHECK): $(GO_SRC)
	@mkdir -p $(dir $@)
	GOEXPERIMENT=cgocheck2 $(GO) build -buildmode=c-shared -o $@ ./capi
	@rm -f $(basename $@).h

$(VENV)/.stamp: python/requirements.txt python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -r python/requirements.txt
	touch $@

venv: $(VENV)/.stamp lib
	$(PY) -m pip install --quiet --no-build-isolation --no-deps -e ./python

demo: venv
	$(PY) examples/train_dgl.py --dataset examples/data/cora

test: venv test-go test-nocgo test-big test-c test-py test-cgocheck test-valgrind
	@echo "make test: all suites passed"

test-go:
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

test-nocgo:
	CGO_ENABLED=0 $(GO) test -count=1 ./engine/...

# Edge offsets past 2^31: an 8 GiB graph, so it runs on its own (the test
# skips itself when less than 14 GiB is available).
test-big:
	GRAPHFERRY_BIG_TESTS=1 $(GO) test -count=1 -v -run '^TestOffsetsBeyond2to31$$' ./engine/sample

build/test_capi: tests/c/test_capi.c include/graphferry.h $(LIB)
	$(CC) -std=c99 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -Iinclude -o $@ tests/c/test_capi.c -Lbuild -lgraphferry -Wl,-rpath,'$$ORIGIN'

build/soak: tests/c/soak.c include/graphferry.h $(LIB)
	$(CC) -std=c99 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -Iinclude -o $@ tests/c/soak.c -Lbuild -lgraphferry -Wl,-rpath,'$$ORIGIN'

# The C soak: 1,000 rounds of open, load, break mid-epoch, close on the shipped
# Cora, resident memory and file descriptors flat (about 15 s).
SOAK_ROUNDS ?= 1000

test-c: build/test_capi build/soak
	./build/test_capi
	./build/soak examples/data/cora $(SOAK_ROUNDS)

# The Python suite (the 60-second soak included) but the slow accuracy test.
test-py: venv
	$(PY) -m pytest tests/python -q -m "not slow" $(PYTEST_ARGS)

# GraphSAGE trained through our loaders matches DGL's own loader on Cora and
# CiteSeer (5 seeds each; several minutes on 2 cores, so not in `make test`).
.PHONY: test-accuracy
test-accuracy: venv
	$(PY) -m pytest tests/python -q -s -m slow $(PYTEST_ARGS)

# The C tests and the Python tests marked `boundary` (every test but those
# that only repeat crossings at volume: tests/python/conftest.py) against a
# library built with GOEXPERIMENT=cgocheck2, which checks every pointer passed
# between Go and C.
test-cgocheck: venv $(LIB_CHECK)
	$(CC) -std=c99 -D_DEFAULT_SOURCE -Wall -Iinclude -o build/cgocheck2/test_capi tests/c/test_capi.c -Lbuild/cgocheck2 -lgraphferry -Wl,-rpath,'$$ORIGIN'
	$(CC) -std=c99 -D_DEFAULT_SOURCE -Wall -Iinclude -o build/cgocheck2/soak tests/c/soak.c -Lbuild/cgocheck2 -lgraphferry -Wl,-rpath,'$$ORIGIN'
	./build/cgocheck2/test_capi
	./build/cgocheck2/soak examples/data/cora 200
	GRAPHFERRY_LIB_PATH=$(abspath $(LIB_CHECK)) $(PY) -m pytest tests/python -q -m boundary $(PYTEST_ARGS)

# The C soak under valgrind's memcheck: a definite leak of C memory or an
# invalid access in C code fails; include/graphferry-valgrind.supp (shipped
# for C users) silences the false reports inside the Go runtime. Skipped,
# saying so, where valgrind is not installed.
VALGRIND ?= valgrind
VALGRIND_ROUNDS ?= 10
.PHONY: test-valgrind
test-valgrind: build/soak
	@if ! command -v $(VALGRIND) >/dev/null 2>&1; then \
	  echo "test-valgrind: SKIPPED: $(VALGRIND) is not installed (e.g. apt-get install valgrind)"; \
	else \
	  echo "$(VALGRIND) ... ./build/soak examples/data/cora $(VALGRIND_ROUNDS)"; \
	  $(VALGRIND) --quiet --suppressions=include/graphferry-valgrind.supp --error-exitcode=99 \
	    --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	    ./build/soak examples/data/cora $(VALGRIND_ROUNDS); \
	fi

# The statistical tests of every sampling scheme, with their p-values.
stats:
	$(GO) test -count=1 -v -run 'Uniformity|Biased|ExcludeEdges|LayerWise|RandomWalk' ./engine/sample | grep -E 'p = |^(ok|FAIL|---)'

FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench: venv
	$(PY) bench/run.py --quick --out bench/results

bench-full: venv
	$(PY) bench/run.py --full --out bench/results/full

clean:
	rm -rf build $(PKG_LIB)
