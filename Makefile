# oomlens — top-level build. Respects CC, CFLAGS, LDFLAGS; builds into build/.
# Sources are discovered by wildcard: a new common/<subsystem>/x.c joins
# liboomlens.a, a new tests/unit/test_x.c becomes a Criterion binary, a new
# tests/victims/x.c a victim program.

CC       ?= gcc
CFLAGS   ?= -O2 -g
LDFLAGS  ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
B        ?= build
PYTHON   ?= python3

WARN     := -Wall -Wextra -Wformat=2 -Wshadow -Wmissing-prototypes \
            -fstack-protector-strong -D_FORTIFY_SOURCE=2
ifeq ($(CI),true)
WARN     += -Werror
endif
CPPFLAGS += -D_GNU_SOURCE -Icommon
# each function and datum in its own section, so that the programs'
# --gc-sections drops the ones nothing calls (185 KB of the sidecar's text);
# string literals not mergeable, so that the linker keeps ours together in
# link order instead of tail-merging them into OpenSSL's, libcurl's and
# libarchive's strings all over .rodata, where each one a command reads
# faults in a 64 KiB window of its own (the sidecar's pmap: 7 windows, 416
# KiB of .rodata resident; docs/build.md). GCC's flag: clang has none
# (and warns), so it is asked once whether it takes it.
NO_MERGE := $(shell $(CC) -fno-merge-constants -Werror -x c -c /dev/null \
              -o /dev/null 2>/dev/null && echo -fno-merge-constants)
ALLCFLAGS = -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) -ffunction-sections \
            -fdata-sections $(NO_MERGE) -MMD -MP
# Tests link Debian's shared libraries (quick to link, what ASan wants).
LIBS     := -lwebsockets -lcurl -ljson-c -lyaml -larchive -lcrypto -lz -lseccomp -lcap -lpthread -lm

# The programs, for a host and for the images alike (docs/build.md): lean
# against the static libcurl, nghttp2, libarchive and OpenSSL of
# images/build-static-libs.sh when its cache has them (`make static-libs`
# builds them), else against Debian's shared libcurl, libarchive and
# OpenSSL, said once. Either way every library Debian ships an archive of
# is static and only libc stays shared; --gc-sections drops what nothing
# calls and -z pack-relative-relocs (DT_RELR: glibc 2.36) packs the
# relative relocations the loader reads at every start. LINK=shared: the
# test binaries' $(LIBS) (make asan).
LINK        ?= lean
STATIC_PKGS := nghttp2 curl libarchive openssl
# the prefixes, looked up once and only by a recipe that links (~40 ms)
STATIC_DIRS  = $(eval STATIC_DIRS := $(foreach p,$(STATIC_PKGS),$(shell \
                 images/build-static-libs.sh --cached $(p) 2>/dev/null)))$(STATIC_DIRS)
STATIC_OK    = $(if $(filter $(words $(STATIC_PKGS)),$(words $(STATIC_DIRS))),yes)
LEAN_LD      := $(CURDIR)/scripts/lean.ld
LEAN_LDFLAGS := -Wl,--gc-sections -Wl,--as-needed -Wl,-z,pack-relative-relocs
LEAN_ARCHIVES = $(STATIC_DIRS:%=-L%/lib) -Wl,-Bstatic -lcurl -lnghttp2 \
               -larchive -lwebsockets -lssl -lcrypto -ljson-c -lyaml -lz \
               -lseccomp -lcap -lm
LEAN_STATIC  = $(LEAN_ARCHIVES) -Wl,-Bdynamic -lpthread -ldl
LEAN_DEBIAN := -Wl,-Bstatic -lwebsockets -ljson-c -lyaml -lseccomp -lcap -lm \
               -Wl,-Bdynamic -lcurl -larchive -lssl -lcrypto -lz -lpthread -ldl
ifeq ($(LINK),shared)
PROG_LIBS    = $(LIBS)
LINK_KIND    = shared (Debian's libraries)
PIE_LIBS     = $(PROG_LIBS)
else
PROG_LIBS    = $(LEAN_LDFLAGS) $(if $(STATIC_OK),$(LEAN_STATIC),$(LEAN_DEBIAN))
LINK_KIND    = $(if $(STATIC_OK),lean (static cache),lean without the static cache (Debian's shared libcurl, libarchive, OpenSSL))
# The agent, the sidecar and its uploader, with the static cache, are
# static-pie: glibc's libc.a from libc6-dev too, so no ld.so and no
# libc.so.6 mapped and relocated at every start (~0.5 MiB of each
# command's peak RSS, docs/build.md) and no glibc needed where they run.
# Their name lookups (the API server's, an IP in a pod; a --publish-url
# host) are kept to files and dns, built into libc (static_nss_pin()).
# scripts/lean.ld keeps json-c's and libcap's constants apart from
# OpenSSL's, and -ljson-c -lcap first puts their code right after ours,
# not behind OpenSSL's 2.5 MB: 64 KiB fault-around windows fewer at each
# command (docs/build.md, The lean link; measured on the sidecar alone).
# The plugin stays dynamic: it resolves kubeconfig names through the
# host's NSS.
PIE_LEAN     := -Wl,-T,$(LEAN_LD) -Wl,-Bstatic -ljson-c -lcap
PIE_LIBS     = $(if $(STATIC_OK),-static-pie $(LEAN_LDFLAGS) \
                 $(PIE_LEAN) $(LEAN_ARCHIVES) -lpthread -ldl,$(PROG_LIBS))
endif

SUBSYSTEMS  := base kernel inspect forensics forensics/runtimes kube
COMMON_SRC  := $(foreach s,$(SUBSYSTEMS),$(wildcard common/$(s)/*.c))
# The agent: main.c and its subcommands at agent/src/, the rest in rooms by
# concern (agent/src/<room>/README.md); -Iagent/src for "<room>/x.h".
AGENT_ROOMS := detector kill publish obs injector
AGENT_SRC   := $(wildcard agent/src/*.c) \
               $(foreach r,$(AGENT_ROOMS),$(wildcard agent/src/$(r)/*.c))
SIDECAR_SRC := $(wildcard sidecar/src/*.c)
UPLOAD_SRC  := $(wildcard sidecar/upload/*.c)
PLUGIN_SRC  := $(wildcard kubectl-oomlens/src/*.c)
UNIT_SRC    := $(wildcard tests/unit/test_*.c)
ITEST_SRC   := $(wildcard tests/integration/itest_*.c)
VICTIM_SRC  := $(wildcard tests/victims/*.c)
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)

COMMON_OBJ  := $(COMMON_SRC:%.c=$(B)/obj/%.o)
AGENT_OBJ   := $(AGENT_SRC:%.c=$(B)/obj/%.o)
SIDECAR_OBJ := $(SIDECAR_SRC:%.c=$(B)/obj/%.o)
UPLOAD_OBJ  := $(UPLOAD_SRC:%.c=$(B)/obj/%.o)
PLUGIN_OBJ  := $(PLUGIN_SRC:%.c=$(B)/obj/%.o)
LIB         := $(B)/liboomlens.a
AGENT       := $(B)/bin/oomlens-agent
SIDECAR     := $(B)/bin/oomlens-sidecar
UPLOAD      := $(B)/bin/oomlens-sidecar-upload
PLUGIN      := $(B)/bin/kubectl-oomlens
PLUGIN_COMP := $(B)/bin/kubectl_complete-oomlens
VERSION     := $(shell cat VERSION)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
ITEST_BIN   := $(ITEST_SRC:tests/integration/%.c=$(B)/itests/%)
VICTIM_BIN  := $(VICTIM_SRC:tests/victims/%.c=$(B)/victims/%)
# The Go victim (tests/victims/go/), built with Debian's Go when there is
# one (golang-go: scripts/deps.sh test); without it the test says why.
GO          ?= $(firstword $(shell command -v go 2>/dev/null) \
                 $(wildcard /usr/lib/go-*/bin/go))
GO_VICTIM   := $(if $(GO),$(B)/victims/go-orders)
FUZZ_BIN    := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
BINS        := $(if $(AGENT_SRC),$(AGENT)) $(if $(SIDECAR_SRC),$(SIDECAR) $(UPLOAD)) \
               $(if $(PLUGIN_SRC),$(PLUGIN) $(PLUGIN_COMP))

.PHONY: all deps test test-build test-unit test-integration test-vm \
        test-fuzz lint check asan bench demo install clean victims fuzz \
        images node cluster-up cluster-down apiserver-up test-cluster
.DEFAULT_GOAL := all

all: $(LIB) $(BINS) $(VICTIM_BIN) $(GO_VICTIM)

# What a command needs (scripts/deps.sh says what each set holds):
# `make deps DEPS=demo|test|all|dist`; demo, test and dist install their own set.
DEPS ?= all
.PHONY: deps-demo deps-test test-fresh
deps:
	@B=$(B) scripts/deps.sh $(DEPS)

deps-demo:
	@B=$(B) scripts/deps.sh demo

deps-test:
	@B=$(B) scripts/deps.sh test

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -c $< -o $@

$(LIB): $(COMMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The programs' link line, kept in a file rewritten only when it changes
# (the static cache appeared, LINK=...): the programs are linked again then.
LINK_STAMP := $(B)/link-libs.txt
.PHONY: FORCE
$(LINK_STAMP): FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(PROG_LIBS)' '$(PIE_LIBS)' | cmp -s - $@ || { \
	  printf '%s\n' '$(PROG_LIBS)' '$(PIE_LIBS)' >$@; \
	  $(if $(filter shared,$(LINK))$(STATIC_OK),:,echo "make: no static \
	libcurl, nghttp2, libarchive, OpenSSL in the cache of \
	images/build-static-libs.sh: the programs link Debian's shared ones \
	(about 45 more libraries loaded at start, ~10 ms, ~9 MiB RSS; \
	docs/build.md); \`make static-libs\` builds them (once, \
	~10 min)" >&2); }

# The release archives for linux/amd64 and linux/arm64 (the arm64 ones
# cross-built), SHA256SUMS and the krew manifest, in $(B)/dist
# (scripts/dist.sh, docs/build.md: Distributables). DIST_URL: the
# manifest's download address. Installs its set first, as make test does.
.PHONY: dist
dist:
	@B=$(B) scripts/deps.sh dist
	+@B=$(B) MAKE="$(MAKE)" scripts/dist.sh

# Builds (or finds in the cache) the static libraries the lean link uses.
.PHONY: static-libs
static-libs:
	@for p in $(STATIC_PKGS); do images/build-static-libs.sh $$p || exit 1; done

$(AGENT_OBJ): CPPFLAGS += -Iagent/src
$(AGENT): $(AGENT_OBJ) $(LIB) $(LINK_STAMP) $(LEAN_LD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(AGENT_OBJ) $(LIB) $(PIE_LIBS)

$(SIDECAR): $(SIDECAR_OBJ) $(LIB) $(LINK_STAMP) $(LEAN_LD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(SIDECAR_OBJ) $(LIB) $(PIE_LIBS)

# The sidecar's uploader, linked like it: the only one of the two that
# holds libcurl and OpenSSL (sidecar/upload/main.c).
$(UPLOAD): $(UPLOAD_OBJ) $(LIB) $(LINK_STAMP) $(LEAN_LD)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(UPLOAD_OBJ) $(LIB) $(PIE_LIBS)

# kubectl-oomlens: a kubectl plugin (found on PATH by its name); the
# version is the project's (VERSION, also the chart's appVersion).
$(PLUGIN_OBJ) $(B)/obj/common/base/cli.o: CPPFLAGS += -DOOMLENS_VERSION='"$(VERSION)"'
$(PLUGIN_OBJ) $(B)/obj/common/base/cli.o: VERSION
$(PLUGIN_COMP): kubectl-oomlens/kubectl_complete-oomlens
	@mkdir -p $(@D)
	install -m 0755 $< $@

$(PLUGIN): $(PLUGIN_OBJ) $(LIB) $(LINK_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(PLUGIN_OBJ) $(LIB) $(PROG_LIBS)

$(B)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(LDFLAGS) -o $@ $< $(LIB) -lcriterion $(LIBS)

# A unit test named after an agent module (tests/unit/test_correlate.c for
# agent/src/detector/correlate.c) links that module's object too, in
# whichever room it is: agent_obj NAME is the object of agent/src/*/NAME.c.
agent_obj = $(patsubst %.c,$(B)/obj/%.o,$(filter %/$(1).c,$(AGENT_SRC)))
AGENT_MODS := $(basename $(notdir $(AGENT_SRC)))
ifneq ($(words $(AGENT_MODS)),$(words $(sort $(AGENT_MODS))))
$(error two agent modules share a name: their tests could not tell them apart)
endif
AGENT_UNIT := $(filter $(AGENT_MODS:%=$(B)/tests/test_%),$(UNIT_BIN))
$(foreach t,$(AGENT_UNIT),$(eval $(t): $(call agent_obj,$(t:$(B)/tests/test_%=%))))
$(AGENT_UNIT): $(B)/tests/test_%: tests/unit/test_%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Iagent/src $(LDFLAGS) -o $@ $< \
	  $(filter %.o,$^) $(LIB) -lcriterion $(LIBS)
# ... and the agent modules it needs besides (added as prerequisites here)
$(B)/tests/test_metrics_agent: $(call agent_obj,metrics)
$(B)/tests/test_pubqueue: $(call agent_obj,metrics_agent) \
  $(call agent_obj,metrics) $(call agent_obj,target_kube)
# a publish target's (test_target_<name>) links the queue it runs in
$(filter $(B)/tests/test_target_%,$(AGENT_UNIT)): $(call agent_obj,pubqueue) \
  $(call agent_obj,metrics_agent) $(call agent_obj,metrics)
$(B)/tests/test_cluster_events: $(call agent_obj,evqueue) \
  $(call agent_obj,forecast)

# Victims stand in for real glibc programs: plain -O1, never the CFLAGS or
# LDFLAGS of a sanitizer build (ASan would replace their malloc).
$(B)/victims/%: tests/victims/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -D_GNU_SOURCE -o $@ $< -lpthread

# Static (CGO_ENABLED=0), GOPATH mode: one file, no module, no network.
$(B)/victims/go-orders: tests/victims/go/orders.go
	@mkdir -p $(dir $@)
	GOCACHE=$(abspath $(B))/gocache GOPATH=$(abspath $(B))/gopath \
	  GO111MODULE=off CGO_ENABLED=0 GOFLAGS= $(GO) build -o $@ $<

# Fuzz targets: with clang's libFuzzer via `make fuzz`; in `make test` each
# target is linked to a driver that replays its corpus (the fixtures).
$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/driver.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/driver.c $(LIB) $(LIBS)

# A fuzz target named after an agent module (tests/fuzz/fuzz_inject.c for
# agent/src/injector/inject.c, the AdmissionReview decoder) links that
# module too.
FUZZ_AGENT := $(filter $(AGENT_MODS:%=$(B)/fuzz/fuzz_%),$(FUZZ_BIN))
$(foreach t,$(FUZZ_AGENT),$(eval $(t): $(call agent_obj,$(t:$(B)/fuzz/fuzz_%=%))))
$(FUZZ_AGENT): $(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) -Iagent/src $(LDFLAGS) -o $@ $< tests/fuzz/driver.c \
	  $(filter $(B)/obj/%.o,$^) $(LIB) $(LIBS)

# Integration tests written with Criterion: they touch the live system
# (real cgroups, real processes) and say so in their name.
$(B)/itests/%: tests/integration/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALLCFLAGS) $(LDFLAGS) -o $@ $< $(LIB) -lcriterion $(LIBS)

victims: $(VICTIM_BIN) $(GO_VICTIM)

# Every binary the suites run.
test-build: all $(UNIT_BIN) $(ITEST_BIN) $(FUZZ_BIN)

# SUITES: any of unit fuzz integration vm (.ci/run runs them in tiers).
SUITES ?= all
test: deps-test
	@$(MAKE) --no-print-directory test-build
	@scripts/run-tests.sh $(SUITES)

test-unit: all $(UNIT_BIN)
	@scripts/run-tests.sh unit

test-fuzz: $(FUZZ_BIN)
	@scripts/run-tests.sh fuzz

test-integration: all $(ITEST_BIN)
	@scripts/run-tests.sh integration

test-vm: all $(ITEST_BIN)
	@scripts/run-tests.sh vm

# libFuzzer, clang: FUZZ_SECONDS per target (60), FUZZ_TARGETS="kmsg ...".
fuzz:
	@scripts/fuzz.sh

# A real single-node Kubernetes 1.20 for the cluster suite (tests/cluster/,
# docs/cluster.md): the node programs are built once and cached outside
# build/; images are docker archives in build/images/.
images: all
	@B=$(B) images/images.sh

node:
	@tests/cluster/build-node.sh

# NODE=v1 (default): the node on this host, cgroup v1, cgroupfs driver;
# NODE=v2: the same programs in a qemu guest, cgroup v2, systemd driver.
NODE ?= v1
CLUSTER_DIR_v1 = tests/cluster
CLUSTER_DIR_v2 = tests/cluster/v2
CLUSTER_DIR = $(or $(CLUSTER_DIR_$(NODE)),$(error NODE=$(NODE): v1 or v2))

cluster-up: images
	@B=$(B) $(CLUSTER_DIR)/up.sh

apiserver-up:
	@B=$(B) tests/cluster/up.sh --apiserver-only

cluster-down:
	@B=$(B) $(CLUSTER_DIR)/down.sh

test-cluster: deps-test images
	@scripts/run-tests.sh $(if $(filter v2,$(NODE)),cluster-v2,cluster)

# Lint first builds everything as CI's tier 1 does (warnings are errors), in
# its own tree so that the everyday build keeps its flags.
lint: $(LIB)
	@$(MAKE) --no-print-directory CI=true B=build-werror test-build >/dev/null
	@B=$(B) scripts/lint.sh

check: test lint

asan:
	@$(MAKE) --no-print-directory B=build-asan LINK=shared \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer" \
	  LDFLAGS="-fsanitize=address,undefined" all \
	  $(UNIT_SRC:tests/unit/%.c=build-asan/tests/%) \
	  $(FUZZ_SRC:tests/fuzz/%.c=build-asan/fuzz/%)
	@ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  B=build-asan scripts/run-tests.sh unit fuzz

bench: all
	@scripts/bench.sh

demo: deps-demo
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

# The newcomer check (not part of test): make demo and make test from a
# clean clone of HEAD in a pristine Debian 12 container (scripts/test-fresh.sh).
test-fresh:
	@B=$(B) scripts/test-fresh.sh

# `make -s print-PROG_LIBS`: a variable's value, for scripts that link
# against liboomlens.a outside the Makefile as the programs are linked
# (tests/bench/bench_kube.sh)
print-%:
	@:$(info $($*))

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf build build-asan build-fuzz build-werror

-include $(shell find $(B) -name '*.d' 2>/dev/null)
