# posflow - build, test, install, demo.
#
#   make                  build everything (-O2 -Wall -Wextra -Werror)
#   make check            install missing Debian packages (as root), build,
#                         run every test (C unit tests, perft, bats)
#   make SANITIZE=1 check the same with AddressSanitizer and UBSan
#   make demo             run the main pipeline on the bundled games
#   make fuzz             build the libFuzzer targets of tests/fuzz/ (needs
#                         clang and libclang-rt-14-dev), replay the inputs
#                         of tests/fuzz/regress/, fuzz each target FUZZ_S
#                         seconds (default 60) from its corpus; fails on a
#                         crash or a broken property (CI: FUZZ_S=6)
#   make install PREFIX=/usr/local
#
# Every cmd/*.c is one tool, every lib/*.c goes into libposflow.a and
# libposflow.so (the shared library the Python module scripts/posflow loads),
# every tests/unit/*.c is one unit-test program, every tests/fuzz/*.c one
# fuzz target: adding a file needs no change here.

PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
LIBDIR	?= $(PREFIX)/lib
MANDIR	?= $(PREFIX)/share/man
# The Python module; Debian's python3 finds it there when PREFIX is /usr,
# else through PYTHONPATH (README.md, "Python and PyTorch").
PYTHONDIR ?= $(LIBDIR)/python3/dist-packages
# The dataset build (scripts/posflow.mk).
SHAREDIR ?= $(PREFIX)/share/posflow

CC	?= cc
PKGS	= libzstd zlib libarchive
CFLAGS	?= -O2 -g
WARN	= -Wall -Wextra -Werror
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lzstd -lz -larchive)
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) \
	$(CFLAGS) $(PKG_CFLAGS) -Ilib
LIBS	= $(PKG_LIBS) -lxxhash -lpthread -lm

ifeq ($(SANITIZE),1)
BUILD	?= build-san
ALL_CFLAGS += -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
LDFLAGS	+= -fsanitize=address,undefined
else
BUILD	?= build
endif

LIB_SRC	= $(wildcard lib/*.c)
LIB_HDR	= $(wildcard lib/*.h)
LIB_OBJ	= $(LIB_SRC:lib/%.c=$(BUILD)/lib/%.o)
LIB_A	= $(BUILD)/libposflow.a
LIB_SO	= $(BUILD)/libposflow.so
SONAME	= libposflow.so.0
PY_SRC	= $(wildcard scripts/posflow/*.py)
TOOLS	= $(basename $(notdir $(wildcard cmd/*.c)))
BINS	= $(TOOLS:%=$(BUILD)/bin/%)
UNIT_SRC = $(wildcard tests/unit/*.c)
UNITS	= $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# tests/tools/*.c: programs the tests use (fake engine, record makers);
# built, never run as tests themselves.
TOOL_SRC = $(wildcard tests/tools/*.c)
TEST_TOOLS = $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tests/tools/%)
MAN1	= $(wildcard man/man1/*.1)
MAN5	= $(wildcard man/man5/*.5)
MAN7	= $(wildcard man/man7/*.7)

DEB_PKGS = gcc make pkg-config libzstd-dev zlib1g-dev libarchive-dev \
	libxxhash-dev bats bats-support bats-assert stockfish mandoc \
	pgn-extract zstd xz-utils bzip2 libarchive-tools jq zip python3 \
	python3-xxhash python3-numpy python3-torch \
	parallel openssh-server openssh-client rsync \
	slurm-wlm slurmctld slurmd slurm-client munge
# and for make check only: a browser to look at posstat's HTML report,
# and strace and gdb to stop shard at chosen moments
TEST_PKGS = chromium strace gdb
INSTALL_PKGS = $(DEB_PKGS)
check: INSTALL_PKGS = $(DEB_PKGS) $(TEST_PKGS)

.PHONY: all check unit bats lint deps demo install clean bench

all: $(BINS) $(LIB_SO) $(UNITS) $(TEST_TOOLS)

# Position-independent, so that the same objects make the shared library;
# without semantic interposition, so that calls within the library may be
# inlined as in a static build (a user cannot replace one pf_ function of
# the shared library by preloading another).
$(BUILD)/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -fno-semantic-interposition -c -o $@ $<

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $(LIB_OBJ)

$(LIB_SO): $(LIB_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined \
		-o $@ $(LIB_OBJ) $(LIBS)

$(BUILD)/bin/%: cmd/%.c $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_A) $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/t.h $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIB_A) $(LIBS)

$(BUILD)/tests/tools/%: tests/tools/%.c $(LIB_A) $(LIB_HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_A) $(LIBS)

# Install missing Debian packages when run as root; a no-op when all are
# present.  Without root, say what is missing and go on.
deps:
	@missing=""; for p in $(INSTALL_PKGS); do \
		dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "deps: installing$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends $$missing \
			>/dev/null || exit 1; \
		else \
			echo "deps: missing$$missing (run as root to install)"; \
		fi; \
	fi

check: deps
	$(MAKE) all
	BUILD=$(BUILD) tests/run-all

lint:
	mandoc -Tlint -Wwarning $(MAN1) $(MAN5) $(MAN7)

demo: deps
	$(MAKE) all
	BUILD=$(BUILD) scripts/demo

bench: all
	BUILD=$(BUILD) scripts/bench

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PYTHONDIR)/posflow
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libposflow.so
	install -m 644 $(PY_SRC) $(DESTDIR)$(PYTHONDIR)/posflow
	echo 'LIBDIR = "$(LIBDIR)"' > $(DESTDIR)$(PYTHONDIR)/posflow/_install.py
	install -d $(DESTDIR)$(SHAREDIR)
	install -m 644 scripts/posflow.mk $(DESTDIR)$(SHAREDIR)
	install -m 755 scripts/posflow-parallel scripts/posflow-slurm \
		$(DESTDIR)$(BINDIR)

clean:
	rm -rf build build-san

# ---- fuzzing (tests/fuzz/README) -------------------------------------------
# Every tests/fuzz/*.c is one libFuzzer target, linked with the library
# sources built again by clang with ASan, UBSan and coverage; tests/fuzz/run
# runs them.  Separate from the rules above: nothing here is built by
# `all` or `check`.
FUZZ_S	?= 60
FUZZ_CC	?= clang
FUZZ_DIR = $(BUILD)/fuzz
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 \
	-fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined $(PKG_CFLAGS) -Ilib
FUZZ_SRC = $(wildcard tests/fuzz/*.c)
FUZZ_HDR = $(wildcard tests/fuzz/*.h)
FUZZ_BINS = $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_DIR)/%)
FUZZ_LIB_OBJ = $(LIB_SRC:lib/%.c=$(FUZZ_DIR)/lib/%.o)

.PHONY: fuzz fuzz-build

$(FUZZ_DIR)/lib/%.o: lib/%.c $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# Named here, not only in the pattern rule, so that make keeps them.
$(FUZZ_BINS): $(FUZZ_LIB_OBJ)

$(FUZZ_DIR)/%: tests/fuzz/%.c $(FUZZ_HDR) $(FUZZ_LIB_OBJ) $(LIB_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wall -Wextra -Werror -fsanitize=fuzzer \
		-o $@ $< $(FUZZ_LIB_OBJ) $(LIBS)

fuzz-build:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { echo "fuzz: $(FUZZ_CC)" \
		"not found (Debian: apt-get install clang libclang-rt-14-dev)"; \
		exit 1; }
	$(MAKE) $(FUZZ_BINS)

fuzz: fuzz-build
	BUILD=$(BUILD) FUZZ_S=$(FUZZ_S) tests/fuzz/run
