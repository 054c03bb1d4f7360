# The two commands (see README):
#   make demo   — set up, build, run tailbone on a character it generates itself
#   make test   — set up, build, run every test: unit + CLI + Node checks,
#                 the same suite under ASan+UBSan, and a short fuzz run
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 30
FUZZ_LONG_SECONDS ?= 3600

.PHONY: all setup build demo test test-unit test-sanitize fuzz fuzz-long bench clean mutants mutants-pending figures check-figures blender-addon

all: build

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build build -j$(JOBS)

demo: build
	@scripts/demo.sh build/tailbone

test-unit: build
	@rm -f build/skips.log
	@cd build && ctest --output-on-failure -j$(JOBS)
	@scripts/skips.sh build/skips.log

test-sanitize: setup
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTB_SANITIZE=ON -DTB_PREVIEW=OFF >/dev/null
	@cmake --build build-asan -j$(JOBS)
	@rm -f build-asan/skips.log
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j$(JOBS) -E '^(node|blender)_'

# Each target FUZZ_SECONDS (30 s: a minute for both in CI); fuzz-long an hour each.
fuzz: setup build
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DTB_FUZZ=ON -DTB_TESTS=OFF >/dev/null
	@cmake --build build-fuzz -j$(JOBS) --target fuzz_load fuzz_fix fuzz_seeds
	@scripts/fuzz.sh build-fuzz/fuzz/fuzz_load $(FUZZ_SECONDS)
	@scripts/fuzz.sh build-fuzz/fuzz/fuzz_fix $(FUZZ_SECONDS)

fuzz-long:
	@$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_LONG_SECONDS)

test: test-unit test-sanitize fuzz
	@scripts/skips.sh build/skips.log build-asan/skips.log
	@echo "make test: all suites passed"

# Mutation check of the suite (docs/testing.md): not part of `make test`
# (tens of minutes). MUTANTS=id,id runs some.
mutants: setup
	@scripts/mutants.py $(if $(MUTANTS),--only $(MUTANTS)) --docs docs/testing.md

# Only the mutants whose snippet, file or test changed since their last run.
mutants-pending: setup
	@scripts/mutants.py --pending --docs docs/testing.md

# Deterministic tables in README.md and docs/ from the tool's own reports
# (scripts/figures.py; the test figures_current checks them).
figures: build
	@scripts/figures.py --cli build/tailbone

# The Blender add-on as an installable zip (docs/blender.md).
blender-addon:
	@python3 blender/make_zip.py build/tailbone_blender.zip

bench: build
	@for b in build/bench_*; do [ -x "$$b" ] && "$$b"; done

clean:
	rm -rf build build-asan build-fuzz build-mutants
