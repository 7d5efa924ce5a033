# Thin front door: each target installs missing Debian packages, configures, builds, then runs.
PRESET ?= release
BUILD_DIR := build
JOBS ?= $(shell nproc)

.PHONY: all deps configure build test demo clean test-asan test-tsan sanitize install
all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# The whole suite: every label in the release build, then the p2p/coll/launcher suites under
# ASan+UBSan and TSan.
test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j 2 --timeout 600
	@$(MAKE) --no-print-directory sanitize

# The point-to-point, collective, MPI and Fortran suites (and the launcher's) under ASan+UBSan and TSan.
SANITIZED_LABELS := ^(unit|p2p|coll|mpi|fortran|launcher)$$
test-asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ctest --preset asan -L '$(SANITIZED_LABELS)' -j 2 --timeout 900

test-tsan: deps
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j $(JOBS)
	@TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp ctest --preset tsan --output-on-failure -L '$(SANITIZED_LABELS)' -j 2 --timeout 900

sanitize: test-asan test-tsan

# Installs the libraries, headers, xmsgrun/xmsgcc/xmsgcxx/xmsg_plan, the CMake package, the
# pkg-config files and libexec/xmsg/xmsg_osu_* under PREFIX (relocatable: docs/install.md).
# DESTDIR stages it for a package.
PREFIX ?= /usr/local
install: build
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD_DIR) --prefix "$(PREFIX)"

demo: build
	@scripts/demo.sh

clean:
	rm -rf build build-debug build-asan build-tsan build-package
