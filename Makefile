# Thin front door: each target installs missing Debian packages, configures, builds, then runs.
PRESET ?= release
BUILD_DIR := build
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test demo clean
all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j 2 --timeout 600

demo: build
	@scripts/demo.sh

clean:
	rm -rf build build-debug build-asan build-tsan
