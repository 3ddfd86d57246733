#!/bin/bash
# make fuzz: runs every libFuzzer target (tests/fuzz/fuzz_*.c) for a bounded
# time, seeded from tests/fuzz/corpus/<name>/. Built with clang into
# build-fuzz/ (-fsanitize=fuzzer,address,undefined; the library with
# fuzzer-no-link so its branches guide the search).
#
#   FUZZ_SECONDS=60   time per target (libFuzzer -max_total_time)
#   FUZZ_TARGETS="kmsg smaps"   a subset (names without fuzz_)
#   FUZZ_JOBS=1       libFuzzer -fork workers per target
#
# A crash (or leak, or UBSan finding) is copied into the target's corpus
# directory as crash-<sha1> (a fixture: `make test-fuzz` replays it from
# then on) and the run fails. New coverage inputs are NOT written into the
# corpus (it stays reviewed fixtures): libFuzzer writes them to a scratch
# directory under build-fuzz/.
set -u
cd "$(dirname "$0")/.." || exit 2
B=build-fuzz
SECS=${FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang}

if ! command -v "$CLANG" >/dev/null; then
	echo "fuzz: $CLANG not found (make deps)" >&2
	exit 2
fi
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# The library is compiled with coverage instrumentation but without
# libFuzzer's main; each target links the fuzzer runtime.
LIBCFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $SAN"
make --no-print-directory B=$B CC="$CLANG" CFLAGS="$LIBCFLAGS" \
	LDFLAGS="$SAN" $B/liboomlens.a >/dev/null || exit 2

targets=()
if [ -n "${FUZZ_TARGETS:-}" ]; then
	for t in $FUZZ_TARGETS; do targets+=("tests/fuzz/fuzz_$t.c"); done
else
	targets=(tests/fuzz/fuzz_*.c)
fi

libs=$(make --no-print-directory -s -f Makefile -f - print-libs <<<'print-libs: ; @echo $(LIBS)')
failed=() clean=()
cov_of() { # INITED|DONE: libFuzzer's "cov:" figure on that line
	grep -a "^#[0-9]*[[:space:]]*$1 " "$B/$name.log" | tail -n1 |
		sed -n 's/.* cov: \([0-9]*\) .*/\1/p'
}
for src in "${targets[@]}"; do
	name=$(basename "$src" .c)
	short=${name#fuzz_}
	bin=$B/fuzz/$name
	corpus=tests/fuzz/corpus/$short
	scratch=$B/corpus/$short
	art=$B/artifacts/$short/
	rm -rf "$art"
	mkdir -p "$B/fuzz" "$scratch" "$art" "$corpus"
	# A target named after an agent module (fuzz_inject: agent/src/
	# injector/inject.c, in whichever room) links that module, built like
	# the library.
	extra=()
	mod=$(compgen -G "agent/src/*/$short.c" ||
		compgen -G "agent/src/$short.c" || true)
	if [ -n "$mod" ]; then
		obj=$B/obj/${mod%.c}.o
		make --no-print-directory B=$B CC="$CLANG" CFLAGS="$LIBCFLAGS" \
			LDFLAGS="$SAN" "$obj" >/dev/null ||
			{ failed+=("$name (build)"); continue; }
		extra=(-Iagent/src "$obj")
	fi
	if ! "$CLANG" -std=gnu11 -O1 -g -D_GNU_SOURCE -Icommon \
		-fno-omit-frame-pointer -fsanitize=fuzzer $SAN \
		-o "$bin" "$src" "${extra[@]}" $B/liboomlens.a $libs; then
		failed+=("$name (build)")
		continue
	fi
	echo "fuzz: $name for ${SECS}s (seeds: $corpus)"
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=0 -artifact_prefix="$art" \
		"$scratch" "$corpus" >"$B/$name.log" 2>&1
	rc=$?
	found=$(find "$art" -type f \( -name 'crash-*' -o -name 'leak-*' \
		-o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null)
	if [ $rc -ne 0 ] || [ -n "$found" ]; then
		grep -aE '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' \
			"$B/$name.log" | head -n 5
		for f in $found; do
			cp "$f" "$corpus/" && echo "fuzz: $name: kept $corpus/$(basename "$f")"
		done
		echo "fuzz: $name: FAILED (exit $rc, log $B/$name.log)"
		failed+=("$name")
	else
		# runs, and coverage at the start (seeds) and the end: a
		# target whose cov does not grow never reaches its parser
		echo "fuzz: $name: $(grep -a 'Done [0-9]* runs' "$B/$name.log" |
			tail -n1), cov $(cov_of INITED) -> $(cov_of DONE)"
		clean+=("$name")
	fi
done
echo "fuzz: ${#clean[@]} clean, ${#failed[@]} failed${failed:+: ${failed[*]}}"
[ ${#failed[@]} -eq 0 ]
