# Makefile - neuronop: the CLI, libneuronop, tests, demo, benchmarks.
#
#   make                 build bin/neuronop
#   make demo            install missing packages, build, then build and run example libraries
#   make check           install missing packages, build, run unit and end-to-end tests
#   make sanitize        the same tests against an ASan + UBSan build (in out/sanitize)
#   make bench           benchmarks: figures and ratios against baselines measured in the run
#   make golden          regenerate the expected diagnostics in tests/golden/ (build and run)
#   make install         PREFIX=/usr/local DESTDIR=
#   make deb             out/neuronop_VERSION_ARCH.deb, with dpkg-deb
#   make fuzz            libFuzzer targets, FUZZ_TIME seconds each (default 60)
#   make clean
#
# Variables: CC, CFLAGS, LDFLAGS, O (object folder), PREFIX, DESTDIR.

PREFIX ?= /usr/local
CFLAGS ?= -O2 -g
O ?= out
BIN ?= bin/neuronop

WARNINGS = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
PKGS = yaml-0.1 libxxhash jansson
# tcc's runtime folder on this machine: compiled in as the first place to look at run time
TCC_DIR := $(patsubst %/libtcc1.a,%,$(firstword $(wildcard /usr/lib/*/tcc/libtcc1.a \
	/usr/lib/tcc/libtcc1.a /usr/local/lib/tcc/libtcc1.a)))

# lib/ sees its own subsystems (lib/base, lib/build, lib/device, lib/measure: each one's
# README says what it owns), the public header and the kernel API; cmd/ sees only the public
# header, because the CLI is a client of the library like any other.
LIB_CPPFLAGS = -D_GNU_SOURCE -Iinclude -Ilib -Ishare/neuronop/include \
	$(if $(TCC_DIR),-DNOP_TCC_DIR='"$(TCC_DIR)"') \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CPPFLAGS)
CMD_CPPFLAGS = -D_GNU_SOURCE -Iinclude $(CPPFLAGS)
ALL_CFLAGS = -std=c11 $(WARNINGS) $(CFLAGS)
# libyaml and libxxhash are linked statically (like libtcc, which Debian ships only as .a):
# fewer shared objects to load is 0.2 ms off every command's start, which matters for the
# few-millisecond up-to-date check of `neuronop build`.  The Debian package links them
# dynamically instead (STATIC_DEPS=no), as Debian policy asks.
STATIC_DEPS ?= yes
comma := ,
DEP_LIBS = -lyaml -lxxhash -ljansson
# libsleef: ATen's float32 sin, exp, pow ... are Sleef's, and so are the tensor library's
# (lib/device/tlsleef.c); Debian ships it shared only.
LIBS = -lseccomp $(if $(filter yes,$(STATIC_DEPS)),-Wl$(comma)-Bstatic $(DEP_LIBS) -Wl$(comma)-Bdynamic,\
	$(DEP_LIBS)) -ltcc -lsleef -ldl -lpthread -lm
# Bind every symbol at start-up: glibc's lazy-binding resolver would otherwise run on a
# kernel's small stack the first time the runtime calls into libc, and use 3 KB of it.
ALL_LDFLAGS = -Wl,-z,now $(LDFLAGS)

LIB_SRCS = $(sort $(wildcard lib/*/*.c))
CMD_SRCS = $(sort $(wildcard cmd/neuronop/*.c))
UNIT_SRCS = $(sort $(wildcard tests/unit/test_*.c))
LIB_OBJS = $(LIB_SRCS:%.c=$(O)/%.o)
CMD_OBJS = $(CMD_SRCS:%.c=$(O)/%.o)
UNIT_BINS = $(UNIT_SRCS:%.c=$(O)/%)
LIBA = $(O)/libneuronop.a
HEADERS = $(wildcard include/*.h lib/*/*.h lib/*/*.def cmd/neuronop/*.h \
	share/neuronop/include/*.h share/neuronop/include/neuronop/*)

# Sanitizer runs: AddressSanitizer must let neuronop handle SIGSEGV from kernels itself.
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_ENV = ASAN_OPTIONS=allow_user_segv_handler=1:detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# The tests share one compile cache (neuronop-build(1)), kept from run to run: a C++ example
# built by several scripts is compiled once.  The scripts that test the build itself unset it.
# The precompiled standard headers (neuronop-build(1), "Precompiled header") are in the XDG
# cache folder, here beside it rather than the user's.
TEST_ENV = NEURONOP="$(abspath $(BIN))" NEURONOP_SHARE_DIR="$(abspath share/neuronop)" \
	NEURONOP_SRC="$(abspath .)" NEURONOP_CACHE_DIR="$(abspath $(O))/check-cache" \
	XDG_CACHE_HOME="$(abspath $(O))/check-xdg" NEURONOP_FAILURES="$(abspath $(O))/check-failures"

.PHONY: all deps test-deps demo demo-run check check-run unit e2e sanitize bench golden deb fuzz \
	install clean warnings examples-test check-sanitized oracles

all: $(BIN)

$(BIN): $(CMD_OBJS) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(CMD_OBJS) $(LIBA) $(LIBS)

$(LIBA): $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(O)/lib/%.o: lib/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CPPFLAGS) $(ALL_CFLAGS) $(FILE_CFLAGS) -c -o $@ $<

# Sleef's 8-lane functions take AVX registers: that file alone is built for AVX2 (its caller
# checks the processor first).
ifeq ($(shell uname -m),x86_64)
$(O)/lib/device/tlsleef.o $(O)/syntax/lib/device/tlsleef.ok: FILE_CFLAGS = -mavx2 -mfma
endif

$(O)/cmd/%.o: cmd/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CMD_CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

$(O)/tests/unit/%: tests/unit/%.c tests/unit/unit.h $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBA) $(LIBS) -lcmocka

deps:
	@sh mk/deps.sh build

test-deps:
	@sh mk/deps.sh test

# The two set-up commands of the README: each installs what is missing first.
demo: deps
	@$(MAKE) --no-print-directory demo-run

demo-run: $(BIN)
	@sh share/neuronop/examples/demo.sh "$(abspath $(BIN))"

check: test-deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) check-run CFLAGS="$(CFLAGS) -Werror"

# Every test runs under one `prove`, in parallel (TEST_JOBS at once): the unit programs (cmocka
# prints TAP), the end-to-end scripts, and t0290's run of each shipped example's own cases.
# The slowest start first (E2E_SLOW, longest first as measured alone, then the unit programs,
# three of which take seconds), and the many short scripts fill the gaps at the end, so that
# both CPUs stay busy until the last script ends.
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
E2E_SLOW = t0218-run-record-bounds.sh t0133-build-cxx-pch.sh t0100-build-diagnostics.sh t0120-build-cxx.sh \
	t0105-build-cache.sh t0601-python-ops.sh t0602-python-memcheck.sh t0121-cxx-examples.sh \
	t0208-run-hostile.sh t0502-deb-package.sh t0110-run-diagnostics.sh t0220-run-aten-diff.sh \
	t0212-test-fork-server.sh t0101-build-compile-limits.sh t0123-build-linked-check.sh \
	t0600-python-launcher.sh t0132-build-cxx-std-names.sh
E2E_ALL = $(patsubst tests/e2e/%,%,$(sort $(wildcard tests/e2e/t[0-9]*.sh)))
E2E_ORDER = $(filter $(E2E_ALL),$(E2E_SLOW)) $(filter-out $(E2E_SLOW),$(E2E_ALL))
CHECK_ORDER = $(filter $(E2E_ALL),$(E2E_SLOW)) $(abspath $(UNIT_BINS)) \
	$(filter-out $(E2E_SLOW),$(E2E_ALL))
PROVE = cd tests/e2e && $(TEST_ENV) $(PROVE_ENV) CMOCKA_MESSAGE_OUTPUT=TAP prove --timer -j$(TEST_JOBS)
# The same, and when a test fails, what each failed test printed (lib.sh keeps it) once more
# after prove's summary: a CI log shown from its end still says why.
PROVE_REPORTED = rm -rf $(O)/check-failures && { $(PROVE) $(1) || \
	{ sh "$(abspath mk/failures.sh)" "$(abspath $(O))/check-failures"; exit 1; }; }

# Expectations that real libtorch computes are compiled before the tests run (each is cached
# by its sources' hash), so that the suite's time is the tests' own; at the same time as the
# second compiler's checks (warnings), which need the other CPU when the tree is new.
ORACLES = sh tests/fixtures/cxx/idioms/oracle.sh "$(abspath out)" >/dev/null && \
	sh tests/fixtures/cxx/stdnames/probe.sh libtorch "$(abspath out)" >/dev/null && \
	sh tests/fixtures/cxx/stdnames/probe.sh unit "$(abspath out)" >/dev/null

oracles:
	@$(ORACLES)

check-run: $(BIN) $(UNIT_BINS)
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) warnings oracles
	@$(call PROVE_REPORTED,$(PROVE_FLAGS) $(CHECK_ORDER))

unit: $(UNIT_BINS)
	@$(PROVE) $(abspath $(UNIT_BINS))

e2e: $(BIN)
	@$(call PROVE_REPORTED,$(PROVE_FLAGS) $(E2E_ORDER))

# Every shipped example's own test cases, under every core order and count.
examples-test: $(BIN)
	@$(PROVE) -v t0290-examples-own-tests.sh

# A second compiler catches what the first one lets through (syntax only: no link needed),
# one file a job, again only when the file or a header changed.
SYNTAX_OKS = $(LIB_SRCS:%.c=$(O)/syntax/%.ok) $(CMD_SRCS:%.c=$(O)/syntax/%.ok)
warnings: $(if $(shell command -v clang 2>/dev/null),$(SYNTAX_OKS))

$(O)/syntax/lib/%.ok: lib/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@clang -fsyntax-only $(LIB_CPPFLAGS) -std=c11 $(WARNINGS) $(FILE_CFLAGS) -Werror $< && touch $@

$(O)/syntax/cmd/%.ok: cmd/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	@clang -fsyntax-only $(CMD_CPPFLAGS) -std=c11 $(WARNINGS) -Werror $< && touch $@

sanitize: test-deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) O=out/sanitize BIN=out/sanitize/bin/neuronop \
		CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
		PROVE_ENV="$(SAN_ENV) NEURONOP_SANITIZED=1" check-sanitized

check-sanitized: $(BIN) $(UNIT_BINS)
	@$(ORACLES)
	@$(call PROVE_REPORTED,$(CHECK_ORDER))

$(O)/bench/devbench: bench/devbench.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

# Builds are measured cold: a user's compile cache (neuronop-build(1)) is not used.
bench: deps $(BIN) $(O)/bench/devbench
	@env -u NEURONOP_CACHE_DIR sh bench/run.sh "$(abspath $(BIN))"
	@env -u NEURONOP_CACHE_DIR $(O)/bench/devbench \
	    "$(abspath share/neuronop)" "$(abspath bench/kernels)" "$(abspath bench/kernels_cxx)" \
	    "$(abspath bench/kernels/cc.yaml)"

golden: $(BIN)
	@cd tests/e2e && $(TEST_ENV) NEURONOP_GOLDEN_UPDATE=1 sh t0100-build-diagnostics.sh >/dev/null
	@cd tests/e2e && $(TEST_ENV) NEURONOP_GOLDEN_UPDATE=1 sh t0110-run-diagnostics.sh >/dev/null
	@echo "updated tests/golden/; review with 'git diff tests/golden'"

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/neuronop
	install -m 644 share/bash-completion/completions/neuronop \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/neuronop
	cp -R share/neuronop $(DESTDIR)$(PREFIX)/share/
	find $(DESTDIR)$(PREFIX)/share/neuronop -name build -type d -prune -exec rm -rf {} +
	find $(DESTDIR)$(PREFIX)/share/neuronop/examples \( -name .neuronop -o -name '*.so' \
		-o -name '*.so.stamp' -o -name __pycache__ \) -prune -exec rm -rf {} +
	# the Python package where Debian's python3 finds it; the torch_neuronx stand-in only
	# where `neuronop python` alone puts it on sys.path (never shadowing a real one)
	install -d $(DESTDIR)$(PREFIX)/lib/python3/dist-packages/neuronop \
		$(DESTDIR)$(PREFIX)/share/neuronop/python-compat/torch_neuronx/xla_impl
	install -m 644 python/neuronop/*.py $(DESTDIR)$(PREFIX)/lib/python3/dist-packages/neuronop/
	install -m 644 python/compat/torch_neuronx/__init__.py \
		$(DESTDIR)$(PREFIX)/share/neuronop/python-compat/torch_neuronx/
	install -m 644 python/compat/torch_neuronx/xla_impl/*.py \
		$(DESTDIR)$(PREFIX)/share/neuronop/python-compat/torch_neuronx/xla_impl/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	$(if $(wildcard man/*.3),install -m 644 man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/)

# libFuzzer targets (tests/fuzz): the manifest loader, the .npy reader, generator specs,
# option parsing, reading a library's self-description, reading the objects a build
# compiles, the parent's reading of a worker's records, the check of a linked library
# (read as the loader maps it) and of a compile's dependency lists, built with clang and
# AddressSanitizer + UBSan, each run for FUZZ_TIME s (`make fuzz FUZZ_TARGETS=object` builds
# and runs only that one).
FUZZ_TIME ?= 60
FUZZ_O = out/fuzz
FUZZ_FLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
FUZZ_TARGETS = manifest npy generator options library object records linked deps

fuzz: test-deps
	@MAKEFLAGS= $(MAKE) -s --no-print-directory CC=clang O=$(FUZZ_O) \
		CFLAGS="$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link" $(FUZZ_O)/libneuronop.a \
		$(FUZZ_O)/cmd/neuronop/options.o $(FUZZ_O)/cmd/neuronop/report.o \
		$(FUZZ_O)/cmd/neuronop/held.o
	@set -e; for t in $(FUZZ_TARGETS); do \
		extra=; [ $$t = options ] && extra="$(FUZZ_O)/cmd/neuronop/options.o \
			$(FUZZ_O)/cmd/neuronop/report.o $(FUZZ_O)/cmd/neuronop/held.o"; \
		clang $(LIB_CPPFLAGS) -Icmd/neuronop -std=c11 $(FUZZ_FLAGS) -fsanitize=fuzzer \
			-o $(FUZZ_O)/fuzz_$$t tests/fuzz/fuzz_$$t.c $$extra $(FUZZ_O)/libneuronop.a \
			$(LIBS); \
	done
	@sh tests/fuzz/run.sh $(FUZZ_O) $(FUZZ_TIME) $(FUZZ_TARGETS)

# A Debian package of what `make install PREFIX=/usr` installs (mk/deb.sh says what is in it).
# Its binary is linked from the same objects as $(BIN) (only the link differs: shared
# libyaml, libxxhash and libjansson, as Debian policy asks), so a package after a build
# compiles nothing again.  (MAKEFLAGS emptied: a caller's BIN=... must not win over ours.)
deb: $(CMD_OBJS) $(LIBA)
	@MAKEFLAGS= $(MAKE) -s --no-print-directory O=$(O) BIN=$(O)/deb/bin/neuronop \
		STATIC_DEPS=no $(O)/deb/bin/neuronop
	@MAKEFLAGS= sh mk/deb.sh "$(abspath $(O)/deb/bin/neuronop)" "$(abspath $(O))"

clean:
	rm -rf out bin
	find share/neuronop/examples -name build -type d -prune -exec rm -rf {} +
