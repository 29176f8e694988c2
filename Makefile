# uswap - application-level swap on userfaultfd.
#
#   make            build the library, the preload library, the CLI, tests, benches
#   make demo       run a workload four times its budget and print the counters
#   make check      build and run every test; ends with "N passed, N failed, N skipped"
#   make asan check / make tsan check
#                   the same with AddressSanitizer / ThreadSanitizer
#   make CC=clang   build with clang
#   make debug [check]  build/debug: asserts the locks each "Caller holds" names and runs the consistency checkers (src/lockdep.h)
#   make fuzz       build the libFuzzer targets (tests/fuzz) into build/fuzz
#   make docs       write the option list of docs/uswap.1 from the option table
#   make lint       the docs and comments name what exists; options documented
#   make format     clang-format -i (.clang-format, kernel style) the C files
#                   git lists under src/ cli/ preload/ include/
#   make format-check
#                   list those files that make format would change, and how
#                   many lines; change nothing (exit 1 if any)
#   make bench      run the benchmarks against the kernel's swap and write
#                   docs/benchmarks.md (needs root; 35-50 minutes)
#   make numa-check run the NUMA tests in a qemu virtual machine (needs root)
#   make soak DURATION=30
#                   the randomized soak (tests/soak/run) for DURATION minutes
#
# Everything goes to $(B) (build/, build/asan, build/tsan, build/debug).

CC ?= cc
SAN ?=
ifneq ($(filter asan,$(MAKECMDGOALS)),)
SAN := asan
endif
ifneq ($(filter tsan,$(MAKECMDGOALS)),)
SAN := tsan
endif
ifneq ($(filter debug,$(MAKECMDGOALS)),)
DEBUG := 1
endif

ifeq ($(SAN),)
B ?= $(if $(DEBUG),build/debug,build)
SANFLAGS :=
else ifeq ($(SAN),asan)
B ?= build/asan
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else ifeq ($(SAN),tsan)
B ?= build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
endif

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wpointer-arith -Wformat=2
CFLAGS ?= -O2 -g
# The library's subsystems are folders of src/ (docs/design.md, "Where the
# code is"): the swap devices, the compressed pool, the memory tiers.
SRC_DIRS := src src/swap src/zswap src/tiers
SRC_INC := $(SRC_DIRS:%=-I%)
SRC_HDRS := $(wildcard $(SRC_DIRS:%=%/*.h))
ALL_CFLAGS := -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -D_GNU_SOURCE -Iinclude $(SRC_INC) -pthread
LDLIBS := -pthread -llz4 -lzstd -lz -luring -lsodium

# The debug flavour (src/lockdep.h): USWAP_DEBUG turns the lock assertions
# and the consistency checkers on; the linker sends every pthread mutex and
# rwlock call through src/lockdep.c, which records what each thread holds.
ifneq ($(DEBUG),)
ifneq ($(SAN),)
$(error the debug flavour is built without a sanitizer)
endif
ALL_CFLAGS += -DUSWAP_DEBUG -O1 -g
LOCKDEP_WRAP := pthread_mutex_lock pthread_mutex_trylock pthread_mutex_timedlock \
	pthread_mutex_clocklock pthread_mutex_unlock pthread_mutex_init pthread_mutex_destroy \
	pthread_rwlock_rdlock pthread_rwlock_tryrdlock pthread_rwlock_timedrdlock \
	pthread_rwlock_clockrdlock pthread_rwlock_wrlock pthread_rwlock_trywrlock \
	pthread_rwlock_timedwrlock pthread_rwlock_clockwrlock pthread_rwlock_unlock \
	pthread_rwlock_init pthread_rwlock_destroy
LDLIBS += $(LOCKDEP_WRAP:%=-Wl,--wrap=%)
endif

LIB_SRCS := $(wildcard $(SRC_DIRS:%=%/*.c))
LIB_OBJS := $(LIB_SRCS:src/%.c=$(B)/obj/%.o)
# hiredis, for the remote tier (docs/far-memory.md), bundled from Debian's
# libhiredis.a into every uswap library, its allocation calls renamed to
# uswap's own memory (src/swap/redis_alloc.c): a program under uswap may
# carry a hiredis of its own (redis-server does), and its heap is memory
# uswap manages.  The shared and preload libraries keep its symbols local
# (their version scripts).
HIREDIS_A := $(shell $(CC) -print-file-name=libhiredis.a)
HIREDIS_OBJS := alloc.o hiredis.o net.o read.o sds.o
HIREDIS_RENAME := malloc calloc realloc free strdup
SHARED_SRCS := $(LIB_SRCS)
LIB_OBJS += $(B)/hiredis.o
PIC_OBJS := $(SHARED_SRCS:src/%.c=$(B)/pic/%.o) $(B)/hiredis.o

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/unit/%)
E2E_SRCS := $(wildcard tests/e2e/*.c)
E2E_BINS := $(E2E_SRCS:tests/e2e/%.c=$(B)/tests/e2e/%)
SOAK_SRCS := $(wildcard tests/soak/*.c)
SOAK_BINS := $(SOAK_SRCS:tests/soak/%.c=$(B)/tests/soak/%)
FUZZ_SRCS := $(wildcard tests/fuzz/*_fuzz.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%_fuzz.c=$(B)/tests/fuzz/%)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(B)/bench/%)

TARGETS := $(B)/libuswap.a $(B)/libuswap.so $(B)/libuswap_preload.so $(B)/uswap \
	$(UNIT_BINS) $(E2E_BINS) $(FUZZ_BINS) $(BENCH_BINS) $(SOAK_BINS)

.PHONY: all deps demo check lint asan tsan debug bench fuzz clean format format-check numa-check print-ldlibs docs
all: $(TARGETS)

# Flavour words: "make asan check" builds and tests the asan flavour;
# "make debug" builds the debug flavour, "make debug check" tests it.
asan tsan:
	@:
debug: all

deps:
	@scripts/deps.sh

$(B)/obj/%.o: src/%.c $(SRC_HDRS) include/uswap.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -c $< -o $@
$(B)/pic/%.o: src/%.c $(SRC_HDRS) include/uswap.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(B)/hiredis.o: $(wildcard $(HIREDIS_A))
	@test -f "$(HIREDIS_A)" || { echo "libhiredis.a not found: run make deps" >&2; exit 1; }
	rm -rf $(B)/hiredis && mkdir -p $(B)/hiredis
	cd $(B)/hiredis && ar x "$(HIREDIS_A)" $(HIREDIS_OBJS)
	ld -r -o $(B)/hiredis/all.o $(HIREDIS_OBJS:%=$(B)/hiredis/%)
	objcopy $(foreach f,$(HIREDIS_RENAME),--redefine-sym $(f)=rs_hi_$(f)) $(B)/hiredis/all.o $@

$(B)/libuswap.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^
$(B)/libuswap.so: $(PIC_OBJS) src/libuswap.map
	$(CC) $(ALL_CFLAGS) -shared -fPIC -Wl,--version-script=src/libuswap.map -o $@ $(PIC_OBJS) $(LDLIBS)
# The preload library is never built with a sanitizer: it goes first into
# programs whose sanitizer runtime, if any, comes after it, and its code
# would run before that runtime is initialised (docs/reliability.md, soak
# bug 5).  A sanitizer build links it from plain objects of its own.
ifeq ($(SAN),)
PRELOAD_CFLAGS := $(ALL_CFLAGS)
PRELOAD_OBJS := $(PIC_OBJS)
else
PRELOAD_CFLAGS := $(filter-out $(SANFLAGS),$(ALL_CFLAGS))
PRELOAD_OBJS := $(SHARED_SRCS:src/%.c=$(B)/plain-pic/%.o) $(B)/hiredis.o
endif
$(B)/plain-pic/%.o: src/%.c $(SRC_HDRS) include/uswap.h
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@
$(B)/libuswap_preload.so: $(wildcard preload/*.c) $(PRELOAD_OBJS) preload/preload.map
	$(CC) $(PRELOAD_CFLAGS) -shared -fPIC -fvisibility=hidden -Wl,--version-script=preload/preload.map \
		-o $@ $(wildcard preload/*.c) $(PRELOAD_OBJS) $(LDLIBS) -ldl
# The CLI is a program of the library's users: the public header only.
$(B)/uswap: $(wildcard cli/*.c) $(wildcard cli/*.h) $(B)/libuswap.a
	$(CC) $(filter-out $(SRC_INC),$(ALL_CFLAGS)) -o $@ $(filter %.c,$^) $(B)/libuswap.a $(LDLIBS)

$(B)/tests/unit/%: tests/unit/%.c $(B)/libuswap.a $(wildcard tests/*.h tests/unit/*.h) | $(B)/tests/unit
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(B)/libuswap.a $(LDLIBS) -lm
$(B)/tests/e2e/%: tests/e2e/%.c $(B)/libuswap.a $(wildcard tests/*.h) | $(B)/tests/e2e
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(B)/libuswap.a $(LDLIBS) -lm
$(B)/tests/soak/%: tests/soak/%.c $(B)/libuswap.a $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(B)/libuswap.a $(LDLIBS) -lm
# Fuzz targets: built here with a replay driver (make check replays their
# corpora in tests/fuzz/corpus/NAME); "make fuzz" builds them for libFuzzer.
$(B)/tests/fuzz/%: tests/fuzz/%_fuzz.c tests/fuzz/replay.c $(B)/libuswap.a | $(B)/tests/fuzz
	$(CC) $(ALL_CFLAGS) -Itests -o $@ $< tests/fuzz/replay.c $(B)/libuswap.a $(LDLIBS) -lm
build/fuzz/%: tests/fuzz/%_fuzz.c $(SHARED_SRCS) $(SRC_HDRS)
	@mkdir -p build/fuzz
	clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Iinclude $(SRC_INC) -Itests -pthread \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $< $(SHARED_SRCS) $(LDLIBS) -lhiredis -lm
fuzz: $(FUZZ_SRCS:tests/fuzz/%_fuzz.c=build/fuzz/%)

$(B)/bench/%: bench/%.c $(wildcard bench/*.h) $(B)/libuswap.a | $(B)/bench
	$(CC) $(ALL_CFLAGS) -o $@ $< $(B)/libuswap.a $(LDLIBS) -lm

$(B)/obj $(B)/pic $(B)/plain-pic $(B)/tests/unit $(B)/tests/e2e $(B)/tests/fuzz $(B)/bench:
	mkdir -p $@

# The man page's option blocks, as uswap --help-man prints them from the
# option table (scripts/man-options; scripts/lint checks them).
docs: $(B)/uswap
	scripts/man-options $(B)/uswap docs/uswap.1

demo: deps all
	@echo "uswap run --max 64M --zswap lz4 -- usemem --size 256M --verify: 256 MiB written and checked under a 64 MiB budget"
	@$(B)/uswap run --max 64M --zswap lz4 --stats $(B)/demo-stats.json -- $(B)/bench/usemem --size 256M --verify >$(B)/demo.out
	@awk '{ for (i = 1; i <= NF; i++) { split($$i, kv, "="); f[kv[1]] = kv[2] } } \
		END { printf "  usemem      %d MiB in %s s (%s MB/s), %s\n", f["bytes"] / 1048576, \
		f["secs"], f["mbps"], f["verified"] == 1 ? "every byte read back as written" : "VERIFY FAILED" }' $(B)/demo.out
	@scripts/summary $(B)/demo-stats.json
	@echo "  (every counter: $(B)/demo-stats.json)"

# The docs and comments name what exists; every option is documented.
lint: deps $(B)/uswap
	scripts/lint $(B)

# The build runs on every CPU (a sub-make: -j set inside a makefile does not
# reach the make that reads it), with this make's flavour.
NPROC := $(shell nproc 2>/dev/null || echo 2)
check: deps
	@$(MAKE) --no-print-directory -j$(NPROC) SAN=$(SAN) DEBUG=$(DEBUG) B=$(B) all
	@tests/run $(B)

# The soak (docs/reliability.md): randomized rounds under uswap run for
# DURATION minutes, every byte checked; part of them under ASan (build/asan).
# SOAK_FLAGS=--avoid-known steers clear of the bugs it found and are open.
.PHONY: soak
DURATION ?= 30
soak: deps all
	tests/soak/run --duration $(DURATION) --build $(B) $(SOAK_FLAGS)

bench: deps all
	bench/suite

# The NUMA test machine (tests/numa-vm/README.md): boots Debian's kernel in
# qemu with two CPU nodes, a memory-only node and a disk on each CPU node.
numa-check: all
	tests/numa-vm/run $(B)

# The link flags, for programs built outside the Makefile (tests/numa-vm).
print-ldlibs:
	@echo $(LDLIBS)

clean:
	rm -rf build

# The C sources in .clang-format's style (the files git lists: nothing
# generated or untracked).
FORMAT_FILES = $(shell git ls-files 'src/*.[ch]' 'cli/*.[ch]' 'preload/*.[ch]' 'include/*.[ch]' 2>/dev/null)

format:
	clang-format --style=file -i $(FORMAT_FILES)

format-check:
	@command -v clang-format >/dev/null || \
		{ echo "format-check: clang-format missing (make deps)"; exit 2; }; \
	files=0; lines=0; \
	for f in $(FORMAT_FILES); do \
		n=$$(clang-format --style=file "$$f" | diff "$$f" - | grep -c '^<'); \
		[ "$$n" -eq 0 ] && continue; \
		echo "$$f: $$n lines would change"; \
		files=$$((files + 1)); lines=$$((lines + n)); \
	done; \
	echo "format-check: $$files files, $$lines lines would change"; \
	[ $$files -eq 0 ]
