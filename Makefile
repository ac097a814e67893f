# The quick start: `make run` and `make test`. Both install missing Debian packages first.
.PHONY: run test test-sanitize build bench deps format clean

ARGS ?=

deps:
	@scripts/install-deps.sh

build/default/build.ninja: | deps
	cmake --preset default >/dev/null

build: deps build/default/build.ninja
	cmake --build --preset default

run: build
	./build/default/src/cli/mainboard $(ARGS)

test: build
	ctest --preset default
	$(MAKE) --no-print-directory test-sanitize

test-sanitize: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan
	ctest --preset asan -LE nosanitize

bench: build
	scripts/run-benchmarks.sh

format:
	git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format -i

clean:
	rm -rf build
