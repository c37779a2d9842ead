# collc: a schedule compiler for collective communication.
#   make            build bin/collc
#   make test       build and run every test (CUnit suites and golden files)
#   make check      the quick tier, under a minute: every suite but the tests
#                   tests/unit/test_main.c lists as slow (chosen by measurement:
#                   `tests/run --times` prints each test's time), the golden
#                   files and the docs' commands among them, in 2 processes
#                   (docs/testing.md, "The quick tier")
#   make coverage   the suites built with gcov (objects in build/cov), then line
#                   coverage per folder and overall by lcov; COV_TESTS='--quick
#                   --jobs 2' runs only the quick tier
#   make reproducible-check  build twice in two directories, compare the binaries
#   make SAN=1 test the same under AddressSanitizer and UBSan (objects in build/san)
#   make bench      time and peak memory of the large cases, against their targets
#   make fuzz       build the libFuzzer targets (tests/fuzz, clang) and run each
#                   for FUZZ_SECONDS (default 60); finds land in build/fuzz/fuzz/finds
#   make mutate     a mutation sample over the passes (tests/mutate.sh)
#   make update-goldens  rewrite every golden file from the built collc, then
#                   show git diff --stat of what changed (read it first)
#   make demo       install dependencies, build, compile a bundled example
#   make deps       install the Debian packages collc needs (as root), or print the line
#   make install PREFIX=/usr/local   collc, its man page, docs, examples, bash
#                   completion and Vim syntax; make uninstall PREFIX=... removes them
#   make clean
#
# CFLAGS, CPPFLAGS, LDFLAGS and LDLIBS given on the command line add to the
# flags collc needs (C11, the warnings, the sanitizers of SAN=1), never replace
# them: `make CFLAGS=-O0` is still a C11 build with every warning.

CC     ?= cc
BISON  ?= bison
FLEX   ?= flex
PREFIX ?= /usr/local

WARN   := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
          -Wmissing-prototypes -Wwrite-strings -Wformat=2 -Wvla
CFLAGS ?= -O2 -g
# the source paths compiled into the objects (debug information) are relative
# to the checkout, so two checkouts build the same bytes (reproducible-check)
override CFLAGS += -std=c11 $(WARN) -ffile-prefix-map=$(CURDIR)=.
ifdef WERROR
override CFLAGS += -Werror
endif

ifdef SAN
O      := build/san
BINDIR := build/san/bin
override CFLAGS += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
          -fno-sanitize-recover=all
override LDFLAGS += -fsanitize=address,undefined
else ifdef FUZZ
CC     := clang
O      := build/fuzz
BINDIR := build/fuzz/bin
override CFLAGS += -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
          -fno-sanitize-recover=all -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
override LDFLAGS += -fsanitize=address,undefined
else ifdef COV
O      := build/cov
BINDIR := build/cov/bin
override CFLAGS += -O0 --coverage
# sweep's workers write their gcov counters before _exit (worker_exit)
override CPPFLAGS += -DCOLLC_COVERAGE
override LDFLAGS += --coverage
else
O      := build/default
BINDIR := bin
endif

XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null || echo -I/usr/include/libxml2)
XML_LIBS   := $(shell pkg-config --libs libxml-2.0 2>/dev/null || echo -lxml2)
override CPPFLAGS += -D_POSIX_C_SOURCE=200809L -Ibase -Icompiler -Igrammar -Iir -Ibackends \
            -Iruntime -I$(O)/grammar -I$(O)/backends $(XML_CFLAGS)
override LDLIBS += $(XML_LIBS) -lprotobuf-c -lpthread -lm

# Debian packages: build tools, libraries, and what the tests run. The one
# list: `make deps` installs it, `make deps-check` looks for it, and README.md's
# set-up paragraph names it word for word (`make readme-deps` checks that).
DEPS := make gcc flex bison pkg-config libcunit1-dev libxml2-dev openmpi-bin libopenmpi-dev \
        protobuf-c-compiler libprotobuf-c-dev man-db mpich python3 chromium graphviz lcov \
        strace

GEN    := $(O)/grammar/coll.tab.c $(O)/grammar/coll.lex.c $(O)/backends/chakra_et.pb-c.c \
          $(O)/backends/mpi_text.c $(O)/backends/explain_text.c
SRC    := $(wildcard base/*.c compiler/*.c grammar/*.c ir/*.c backends/*.c runtime/*.c)
LIBOBJ := $(patsubst %.c,$(O)/%.o,$(filter-out compiler/main.c,$(SRC))) $(GEN:.c=.o)
# the MPI target's runtime and main: real C files, compiled by mpicc (not into collc)
MPI_RT := backends/mpi/runtime.c backends/mpi/lib.c backends/mpi/main.c
TSRC   := $(wildcard tests/unit/*.c) tests/fuzz/targets.c
TOBJ   := $(patsubst %.c,$(O)/%.o,$(TSRC))
COLLC  := $(BINDIR)/collc
BENCH  := $(patsubst tests/bench/%.c,$(O)/tests/%,$(wildcard tests/bench/bench_*.c))

all: $(COLLC)

$(COLLC): $(O)/compiler/main.o $(LIBOBJ)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/run: $(TOBJ) $(LIBOBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

$(O)/tests/%.o: override CPPFLAGS += -Itests/unit -Itests/fuzz -Iir -Ibackends \
                                     -DCOLLC_BIN='"$(COLLC)"'

$(O)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(O)/grammar/%.o: $(O)/grammar/%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# the Chakra trace schema (backends/chakra_et.proto) in C, by protobuf-c
$(O)/backends/chakra_et.pb-c.c $(O)/backends/chakra_et.pb-c.h &: backends/chakra_et.proto
	@mkdir -p $(@D)
	protoc-c --c_out=$(O)/backends -Ibackends $<

$(O)/backends/chakra_et.pb-c.o: $(O)/backends/chakra_et.pb-c.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(O)/backends/%.o: $(O)/backends/%.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

# the MPI runtime, library part and main embedded as C arrays (od and sed: nothing beyond coreutils)
$(O)/backends/mpi_text.c: $(MPI_RT)
	@mkdir -p $(@D)
	{ for f in runtime lib main; do \
	    echo "extern const char collc_mpi_$${f}_text[];"; \
	    echo "const char collc_mpi_$${f}_text[] = {"; \
	    od -An -v -tx1 backends/mpi/$$f.c | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	    echo "0};"; \
	done; } >$@.tmp && mv $@.tmp $@

# the explain page's script and style as C strings, the same way
# (common.js: what both pages draw with, before page.js: one schedule, or
# compare.js: two or three side by side)
$(O)/backends/explain_text.c: backends/explain/page.js backends/explain/page.css \
                              backends/explain/compare.js backends/explain/common.js
	@mkdir -p $(@D)
	{ for f in page.js:js page.css:css compare.js:compare_js common.js:common_js; do n=$${f#*:}; \
	    echo "extern const char collc_explain_$${n}[];"; \
	    echo "const char collc_explain_$${n}[] = {"; od -An -v -tx1 backends/explain/$${f%:*} | \
	    sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo "0};"; done; } >$@.tmp && mv $@.tmp $@

# the MPI runtime compiled alone, in both forms, by every MPI installed (Open
# MPI's mpicc, MPICH's mpicc.mpich), with our warnings as errors at -O2
$(O)/backends/mpi/check.ok: $(MPI_RT)
	@mkdir -p $(@D)
	@for cc in mpicc mpicc.mpich; do \
		command -v $$cc >/dev/null || { echo "mpi-runtime-check: no $$cc"; exit 1; }; \
		for sym in 0 1; do \
			echo "$$cc -DCOLLC_SYMMETRIC=$$sym backends/mpi/runtime.c"; \
			$$cc -std=c11 $(WARN) -Werror -O2 -DCOLLC_SYMMETRIC=$$sym -c \
				backends/mpi/runtime.c -o $(@D)/runtime.o || exit 1; \
		done; \
		echo "$$cc backends/mpi/lib.c"; \
		$$cc -std=c11 $(WARN) -Werror -O2 -DCOLLC_SYMMETRIC=0 -c backends/mpi/lib.c \
			-o $(@D)/lib.o || exit 1; \
		echo "$$cc -DCOLLC_PMPI backends/mpi/lib.c"; \
		$$cc -std=c11 $(WARN) -Werror -O2 -DCOLLC_SYMMETRIC=0 -DCOLLC_PMPI -c backends/mpi/lib.c \
			-o $(@D)/lib.o || exit 1; \
		echo "$$cc backends/mpi/main.c"; \
		$$cc -std=c11 $(WARN) -Werror -O2 -c backends/mpi/main.c -o $(@D)/main.o || exit 1; \
	done; touch $@

mpi-runtime-check: $(O)/backends/mpi/check.ok

$(O)/grammar/coll.tab.c $(O)/grammar/coll.tab.h &: grammar/coll.y
	@mkdir -p $(@D)
	$(BISON) -Wall -Werror -o $(O)/grammar/coll.tab.c --header=$(O)/grammar/coll.tab.h $<

$(O)/grammar/coll.lex.c $(O)/grammar/coll.lex.h &: grammar/coll.l $(O)/grammar/coll.tab.h
	@mkdir -p $(@D)
	$(FLEX) -o $(O)/grammar/coll.lex.c --header-file=$(O)/grammar/coll.lex.h $<

# A generated header is made before the objects whose source includes it by
# name (grep), as an order-only prerequisite: from then on the compiler's .d
# files list who reads it, so touching backends/chakra_et.proto rebuilds its
# users only. (coll.lex.c's own rule already waits for coll.tab.h.)
users_of = $(patsubst %.c,$(O)/%.o,$(shell grep -l '^\#include "$(1)"' $(SRC) $(TSRC)))
$(call users_of,coll.tab.h): | $(O)/grammar/coll.tab.h
$(call users_of,coll.lex.h): | $(O)/grammar/coll.lex.h
$(call users_of,chakra_et.pb-c.h): | $(O)/backends/chakra_et.pb-c.h

test: deps-check readme-deps $(O)/backends/mpi/check.ok $(O)/tests/run $(COLLC)
	$(O)/tests/run
	tests/funclen.sh
	tests/filelen.sh
	python3 tests/reproduce.py --quick --collc $(COLLC) --out $(O)/reproduce-quick

# the quick tier: every suite's fast tests (test_main.c's slow[] left out),
# the golden files and the docs' commands among them
check: deps-check readme-deps $(O)/tests/run $(COLLC)
	$(O)/tests/run --quick --jobs 2
	tests/funclen.sh
	tests/filelen.sh

# every golden file rewritten from what the built collc does: tests/golden's
# diagnostics and canonical forms (.err, .fmt) and the readers' finds (.ir,
# .xml, .sim), the MSCCL limit errors (.msccl-err), the command lines of
# tests/golden/cli (.out) and the explain page's reference layouts (chromium);
# then what changed, to read before committing (docs/testing.md)
GOLDEN_TESTS := golden \
	"msccl:a schedule beyond the limits: the golden error" \
	"cli:golden command lines: --opt=value, help, suggestions" \
	"explain:chromium: \#round=N, \#tree=K, an aggregated page, a screenshot"
update-goldens: $(O)/tests/run $(COLLC)
	@for t in $(GOLDEN_TESTS); do \
		suite=$${t%%:*}; name=$${t#*:}; [ "$$name" = "$$t" ] && name=; \
		echo "update-goldens: $$suite $$name"; \
		COLLC_UPDATE_GOLDEN=1 $(O)/tests/run $$suite $${name:+"$$name"} \
			>$(O)/update-goldens.log 2>&1 || { cat $(O)/update-goldens.log; exit 1; }; \
	done
	@git diff --stat -- tests/golden
	@git status --short --untracked-files=all -- tests/golden | grep '^??' || true

# line coverage of the suites (gcov, lcov): per folder, then overall
COV_TESTS ?=
COV_DIRS  := base grammar ir runtime backends compiler
coverage:
	$(MAKE) COV=1 coverage-run

coverage-run: $(O)/tests/run $(COLLC)
	@command -v lcov >/dev/null || { echo "coverage: lcov is needed (apt-get install lcov)"; exit 1; }
	lcov --quiet --zerocounters --directory $(O)
	-$(O)/tests/run $(COV_TESTS) >$(O)/tests.log 2>&1; tail -6 $(O)/tests.log
	lcov --quiet --capture --directory $(O) --base-directory . --output-file $(O)/all.info 2>&1 \
		| grep -v 'redefined at' || true
	@set -f; for d in $(COV_DIRS) overall; do \
		pat="$(CURDIR)/$$d/*"; [ $$d = overall ] && pat="$(COV_DIRS:%=$(CURDIR)/%/*)"; \
		lcov --quiet --extract $(O)/all.info $$pat --output-file $(O)/part.info 2>/dev/null; \
		lcov --summary $(O)/part.info 2>&1 | sed -n "s|^ *lines\.*: *\([0-9.]*%\) (\(.*\))|$$d \1 (\2)|p"; \
	done | column -t

# every checkable claim of the seeds regenerated (docs/reproduce.md)
reproduce: $(COLLC)
	python3 tests/reproduce.py --collc $(COLLC) --out build/reproduce

# performance: each tests/bench/bench_NAME.c is a program that prints its
# figures beside their targets; `make bench` runs them all in one go
$(O)/tests/bench_%: $(O)/tests/bench/bench_%.o $(LIBOBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench: $(BENCH) $(COLLC)
	@rc=0; for b in $(BENCH); do echo "== $$b"; $$b || rc=1; done; \
	echo "== tests/forestcoll_compare.py"; \
	if command -v python3 >/dev/null; then COLLC=$(COLLC) python3 tests/forestcoll_compare.py || rc=1; \
	else echo "skipped: no python3"; fi; \
	echo "== tests/osu_imb_compare.py"; \
	if command -v python3 >/dev/null; then COLLC=$(COLLC) python3 tests/osu_imb_compare.py || rc=1; \
	else echo "skipped: no python3"; fi; exit $$rc # every bench runs

# fuzzing: one libFuzzer target per reader (tests/fuzz/targets.c), seeded from
# the examples, the golden files and the MSCCL fixtures (inputs up to 64 KiB).
# The limits catch a reader that grows quadratic or runs out of memory: an
# input that takes over FUZZ_TIMEOUT seconds or FUZZ_RSS_MB megabytes is a
# find. The fuzz build divides the work limits of base/collc_limits.h by 256,
# so that what they let through fits FUZZ_TIMEOUT under the sanitizers: a
# timeout is work the estimates miss. FUZZ_SEED=0 is a random seed; a fixed
# one replays a run. A find is a file in build/fuzz/fuzz/finds/; once fixed,
# it becomes a golden regression file (tests/golden/NAME.coll|ir|xml|sim
# with NAME.err).
FUZZ_SECONDS ?= 60
FUZZ_TIMEOUT ?= 10
FUZZ_RSS_MB  ?= 2048
FUZZ_SEED    ?= 0
FUZZ_TARGETS := coll msccl ir sim ncclxml
FUZZ_BIN     := $(FUZZ_TARGETS:%=$(O)/fuzz/fuzz_%)

fuzz:
	$(MAKE) FUZZ=1 fuzz-run

# nightly, not CI: an hour per reader, the corpus kept between runs
fuzz-long:
	$(MAKE) FUZZ=1 FUZZ_SECONDS=3600 fuzz-run

$(O)/fuzz/fuzz_%.o: tests/fuzz/fuzz_main.c tests/fuzz/targets.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/fuzz -DFUZZ_TARGET=fuzz_$* $(CFLAGS) -c -o $@ $<

$(O)/fuzz/fuzz_%: $(O)/fuzz/fuzz_%.o $(O)/tests/fuzz/targets.o $(LIBOBJ)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

$(O)/fuzz/seeds.stamp: $(COLLC) tests/fuzz/seeds.sh $(wildcard examples/*.coll tests/golden/*)
	tests/fuzz/seeds.sh $(COLLC) $(O)/fuzz/seeds
	touch $@

fuzz-build: $(FUZZ_BIN) $(O)/fuzz/seeds.stamp

fuzz-run: fuzz-build
	@mkdir -p $(O)/fuzz/finds
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(O)/fuzz/corpus/$$t; \
		echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
		$(O)/fuzz/fuzz_$$t $(O)/fuzz/corpus/$$t $(O)/fuzz/seeds/$$t \
			-dict=tests/fuzz/$$t.dict -max_len=65536 \
			-max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
			-rss_limit_mb=$(FUZZ_RSS_MB) -malloc_limit_mb=$(FUZZ_RSS_MB) \
			-seed=$(FUZZ_SEED) -report_slow_units=2 \
			-artifact_prefix=$(O)/fuzz/finds/$$t- -print_final_stats=1 \
			>$(O)/fuzz/$$t.log 2>&1 \
			|| { tail -40 $(O)/fuzz/$$t.log; echo "fuzz $$t: a find in $(O)/fuzz/finds"; \
			     for f in $(O)/fuzz/finds/$$t-*; do echo "== $$f (base64)"; base64 "$$f" | head -c 16384; echo; done; \
			     exit 1; }; \
		grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' $(O)/fuzz/$$t.log; \
	done

# a mutation sample over the passes: MUTANTS single flips, SEED picks them
MUTANTS ?= 40
SEED    ?= 1
mutate:
	tests/mutate.sh $(MUTANTS) $(SEED)

# the build after the packages, also under -j (protoc-c and flex come from deps)
demo: deps
	$(MAKE) all
	$(COLLC) check examples/sp-torus-8x8.coll

deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all installed ($(DEPS))"; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "deps: installing$$(echo ' '$$missing)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else \
		echo "deps: missing packages; run as root:"; \
		echo "  apt-get install -y$$(echo ' '$$missing)"; \
		exit 1; \
	fi

# test needs CUnit, libxml2, Open MPI and MPICH: say how to get them instead of failing later
deps-check:
	@command -v dpkg-query >/dev/null || exit 0; \
	missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "missing:$$(echo ' '$$missing); run 'make deps' (as root)"; exit 1; fi

# README.md's set-up paragraph: "runs `make deps`, which installs `PACKAGES`"
readme-deps:
	@got=$$(tr '\n' ' ' <README.md | sed -n 's/.*runs `make deps`, which installs `\([^`]*\)`.*/\1/p' \
		| tr -s ' '); \
	[ "$$got" = "$(strip $(DEPS))" ] || { echo "README.md lists the packages '$$got'"; \
		echo "the Makefile's DEPS are      '$(strip $(DEPS))'"; exit 1; }

# two copies of the sources in directories of different lengths, each built
# from scratch: the binaries must be the same bytes (no build path inside)
REPRO := build/repro
reproducible-check:
	rm -rf $(REPRO)
	@for d in one second-copy; do \
		mkdir -p $(REPRO)/$$d && \
		tar -cf - --exclude=./build --exclude=./bin --exclude=./.git . | tar -xf - -C $(REPRO)/$$d && \
		echo "== build in $(REPRO)/$$d" && \
		$(MAKE) -s -C $(REPRO)/$$d all $(O)/tests/run || exit 1; \
	done
	cmp $(REPRO)/one/$(COLLC) $(REPRO)/second-copy/$(COLLC)
	cmp $(REPRO)/one/$(O)/tests/run $(REPRO)/second-copy/$(O)/tests/run
	@echo "reproducible-check: $(COLLC) and the test runner are the same bytes in both"
	rm -rf $(REPRO)

# what `make install` puts where (uninstall removes exactly these)
DOCDIR   = $(PREFIX)/share/doc/collc
EXDIR    = $(PREFIX)/share/collc/examples
MANDIR   = $(PREFIX)/share/man/man1
COMPDIR  = $(PREFIX)/share/bash-completion/completions
VIMDIR   = $(PREFIX)/share/vim/vimfiles
DOCS     = README.md $(wildcard docs/*.md)

install: all install-files

# install-files copies an already built $(COLLC) (the tests install this way)
install-files:
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(EXDIR) $(DESTDIR)$(DOCDIR) \
		$(DESTDIR)$(MANDIR) $(DESTDIR)$(COMPDIR) $(DESTDIR)$(VIMDIR)/syntax \
		$(DESTDIR)$(VIMDIR)/ftdetect
	install -m 755 $(COLLC) $(DESTDIR)$(PREFIX)/bin/collc
	install -m 644 examples/*.coll $(DESTDIR)$(EXDIR)
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)
	install -m 644 docs/collc.1 $(DESTDIR)$(MANDIR)/collc.1
	install -m 644 docs/contrib/collc.bash $(DESTDIR)$(COMPDIR)/collc
	install -m 644 docs/contrib/vim/syntax/coll.vim $(DESTDIR)$(VIMDIR)/syntax/coll.vim
	install -m 644 docs/contrib/vim/ftdetect/coll.vim $(DESTDIR)$(VIMDIR)/ftdetect/coll.vim

# removes what install wrote, then the directories it made that are now empty
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/collc $(DESTDIR)$(MANDIR)/collc.1 $(DESTDIR)$(COMPDIR)/collc \
		$(DESTDIR)$(VIMDIR)/syntax/coll.vim $(DESTDIR)$(VIMDIR)/ftdetect/coll.vim \
		$(addprefix $(DESTDIR)$(EXDIR)/,$(notdir $(wildcard examples/*.coll))) \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS)))
	-rmdir $(DESTDIR)$(EXDIR) $(DESTDIR)$(PREFIX)/share/collc $(DESTDIR)$(DOCDIR) 2>/dev/null
	-for d in $(VIMDIR)/syntax $(VIMDIR)/ftdetect $(VIMDIR) $(PREFIX)/share/vim $(COMPDIR) \
		$(PREFIX)/share/bash-completion $(MANDIR) $(PREFIX)/share/man $(PREFIX)/share/doc \
		$(PREFIX)/share $(PREFIX)/bin; do rmdir $(DESTDIR)$$d 2>/dev/null; done; true

clean:
	rm -rf build bin

.PHONY: all test check update-goldens coverage coverage-run reproducible-check reproduce bench fuzz fuzz-long fuzz-build \
        fuzz-run mutate demo deps deps-check readme-deps install install-files uninstall clean \
        mpi-runtime-check
.SECONDARY:
-include $(shell find $(O) -name '*.d' 2>/dev/null)
