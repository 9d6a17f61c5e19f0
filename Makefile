# A thin front over CMake: `make demo` and `make test` do everything,
# installing missing Debian packages first.
BUILD      ?= build
BUILD_SAN  ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build build-asan demo test test-fast test-asan fuzz format clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

$(BUILD_SAN)/CMakeCache.txt:
	CC=clang-19 cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DQGEN_SANITIZE=ON -DQGEN_FUZZ=ON -DQGEN_CROSS_TESTS=OFF

build-asan: deps $(BUILD_SAN)/CMakeCache.txt
	cmake --build $(BUILD_SAN) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

# The whole suite: once built with gcc, once more built with clang-19 under
# AddressSanitizer and UndefinedBehaviorSanitizer; each phase timed
# (scripts/test.sh, docs/testing.md).
test:
	@scripts/test.sh full $(BUILD) $(BUILD_SAN)

# Each fuzz target for FUZZ_SECONDS (default 600) from its seed corpus;
# new units go to $(BUILD_SAN)/fuzz/corpus-<target>, findings to
# $(BUILD_SAN)/fuzz/findings/; then the differential tester for
# FUZZ_SECONDS, the fault sweep over every call and the shared JIT cache
# under corruption (docs/robustness.md).
FUZZ_SECONDS ?= 600
fuzz: build build-asan
	@scripts/fuzz.sh $(BUILD_SAN) $(FUZZ_SECONDS) $(BUILD)

# The development check: unit, CLI, native kernels and the JIT, one
# scalable ISA per foreign architecture at one width (docs/testing.md).
test-fast:
	@scripts/test.sh fast $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cpp')

clean:
	rm -rf $(BUILD) $(BUILD_SAN)
