# The quick start: `make run` and `make test`. Both install missing Debian packages first.
.PHONY: run test test-sanitize test-tsan test-arm64 fuzz-smoke fuzz build bench wheels deps format clean

ARGS ?=

deps:
	@scripts/install-deps.sh

build/default/build.ninja: | deps
	cmake --preset default >/dev/null

build: deps build/default/build.ninja
	cmake --build --preset default

# Only what it runs: the command and the libraries under it (tests and benchmarks build with
# `make test` and `make bench`).
run: deps build/default/build.ninja
	cmake --build --preset default --target mainboard_cli
	./build/default/src/cli/mainboard $(ARGS)

test: build
	ctest --preset default
	$(MAKE) --no-print-directory test-sanitize
	$(MAKE) --no-print-directory test-tsan
	$(MAKE) --no-print-directory test-arm64
	$(MAKE) --no-print-directory fuzz-smoke

test-sanitize: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan
	ctest --preset asan -LE nosanitize

# The profiler's hot path and session under ThreadSanitizer.
test-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan
	ctest --preset tsan

# Cross-built for arm64 and run under qemu-user: the library's tests (those that need what the
# emulator cannot give are skipped, and counted) and the command's output against the goldens.
test-arm64:
	@scripts/install-deps.sh --arm64
	cmake --preset arm64 >/dev/null
	cmake --build --preset arm64
	@ctest --preset arm64 --output-junit ctest-junit.xml; rc=$$?; \
	  echo "test-arm64: $$(grep -c 'native only (under' build/arm64/ctest-junit.xml) tests skipped" \
	    "under emulation (they need perf events, ptrace, process_vm_readv or to start arm64" \
	    "programs; they run natively)"; exit $$rc

# Profile::parse and the PyTorch profiler trace reader under libFuzzer: a bounded run of each in
# `make test`, longer with `make fuzz`.
FUZZ_SECONDS ?= 30
fuzz-smoke: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz
	mkdir -p build/fuzz/corpus
	build/fuzz/fuzz/fuzz_profile_parse build/fuzz/corpus fuzz/corpus -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=build/fuzz/ \
	  > build/fuzz/fuzz.log 2>&1; \
	  rc=$$?; tail -n 12 build/fuzz/fuzz.log; [ $$rc -eq 0 ] || exit $$rc
	mkdir -p build/fuzz/trace-corpus
	build/fuzz/fuzz/fuzz_trace_parse build/fuzz/trace-corpus fuzz/trace-corpus \
	  -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
	  -artifact_prefix=build/fuzz/trace- > build/fuzz/fuzz-trace.log 2>&1; \
	  rc=$$?; tail -n 12 build/fuzz/fuzz-trace.log; exit $$rc

fuzz:
	$(MAKE) --no-print-directory fuzz-smoke FUZZ_SECONDS=600

bench: build
	scripts/run-benchmarks.sh

# One self-contained wheel per CPython on this machine (Debian's python3 and every pyenv 3.9+),
# into dist/: the package, the command, and the libraries they need (tools/wheel/wheelkit.py).
wheels: deps
	@scripts/build-wheels.sh dist

format:
	git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format -i

clean:
	rm -rf build
