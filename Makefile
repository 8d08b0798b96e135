# Lizard build. `make` builds build/{lizardd,lizard,lizard-agent}; `make test`
# runs every test; `make asan` builds an ASan/UBSan variant in build/asan/.
# A folder per component; every .c in a component folder is part of it.

CC ?= gcc
PKGS := jansson sqlite3 libseccomp openssl
CFLAGS ?= -O2 -g
# SAN holds sanitizer flags (make asan); kept apart so they add to CFLAGS.
SAN ?=
override CFLAGS += $(SAN)
LDFLAGS += $(SAN)
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -MMD -MP \
          $(shell pkg-config --cflags $(PKGS))
LDLIBS_DAEMON := $(shell pkg-config --libs $(PKGS)) -lpthread
LDLIBS_CLI := $(shell pkg-config --libs jansson openssl) -lpthread
B ?= build
# `make V=1` prints the full compiler command lines.
Q := $(if $(V),,@)

COMMON_SRC := $(wildcard src/common/*.c)
PROTO_SRC := $(wildcard src/proto/*.c)
DAEMON_SRC := $(wildcard src/daemon/*.c) $(wildcard src/runtime/*.c) \
              $(wildcard src/runtime/container/*.c) $(COMMON_SRC) $(PROTO_SRC)
AGENT_SRC := $(wildcard src/agent/*.c) $(PROTO_SRC) src/common/error.c src/common/fsutil.c
CLI_SRC := $(wildcard src/cli/*.c) $(wildcard src/client/*.c) $(COMMON_SRC)

obj = $(patsubst src/%.c,$(B)/obj/%.o,$(1))

all: $(B)/lizardd $(B)/lizard $(B)/lizard-agent

$(B)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# The agent runs inside sandboxes whose root filesystem we do not control,
# so it is linked statically (glibc + jansson) and depends on nothing there.
$(B)/obj-agent/%.o: src/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (agent)")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(B)/lizardd: $(call obj,$(DAEMON_SRC))
	@echo "  LINK    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_DAEMON)

$(B)/lizard: $(call obj,$(CLI_SRC))
	@echo "  LINK    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS_CLI)

$(B)/lizard-agent: $(patsubst src/%.c,$(B)/obj-agent/%.o,$(AGENT_SRC))
	@echo "  LINK    $@ (static)"
	$(Q)$(CC) $(LDFLAGS) -static -o $@ $^ -ljansson

# ---- tests ----
UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))
# Library objects the unit tests link against: everything but the mains.
LIB_OBJ := $(call obj,$(filter-out src/daemon/main.c src/cli/main.c,$(sort $(DAEMON_SRC) $(CLI_SRC))))

$(B)/tests/%: tests/unit/%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS_DAEMON) -lcmocka

# The container runtime driven directly, without the daemon
# (tests/unit/container_smoke.sh; `container_driver bench` times create+destroy).
$(B)/tests/container_driver: tests/container_driver.c \
		$(call obj,$(wildcard src/runtime/*.c src/runtime/container/*.c) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS_DAEMON)

unit: $(UNIT_TESTS)
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

test: all unit
	tests/run-integration.sh

# Sanitized lizardd and lizard, and the unit tests under ASan/UBSan. The
# agent stays the static one (a static binary cannot carry ASan); it is
# copied next to the sanitized lizardd, which looks for it there. The
# integration tests run against this build with LIZARD_BUILD_DIR=build/asan.
asan: build/lizard-agent
	$(MAKE) B=build/asan CFLAGS="-O1 -g" SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" \
	    build/asan/lizardd build/asan/lizard unit
	cp build/lizard-agent build/asan/lizard-agent

# Fuzz targets (clang libFuzzer): build/fuzz/fuzz_*; run each for a while.
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
fuzz: $(FUZZ_TARGETS)
# src/agent/request.c: the agent's REQUEST validation, fuzzed with the decoder;
# src/daemon/proxy_parse.c: the port proxy's Host/token/cookie parsing.
build/fuzz/%: tests/fuzz/%.c $(COMMON_SRC) $(PROTO_SRC) src/agent/request.c \
		src/daemon/proxy_parse.c
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -std=gnu11 \
	    $(shell pkg-config --cflags jansson) -o $@ $^ $(shell pkg-config --libs jansson)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

.PHONY: all unit test asan fuzz format clean
-include $(shell find $(B) -name '*.d' 2>/dev/null)
