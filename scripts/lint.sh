#!/bin/bash
# Lint: banned functions, clang-format, cppcheck, layers, the paths docs
# name. Exits non-zero on findings.
set -u
cd "$(dirname "$0")/.." || exit 2
rc=0
SRC=$(git ls-files '*.c' '*.h' 2>/dev/null; git ls-files --others --exclude-standard '*.c' '*.h' 2>/dev/null)
SRC=$(printf '%s\n' $SRC | grep -v '^tests/victims/' | sort -u)

# 1. Banned functions (STYLE.md): one checked number parser, bounded strings.
banned='\b(atoi|atol|atoll|strtok|strcpy|strcat|sprintf|vsprintf|gets)[[:space:]]*\('
if hits=$(grep -nE "$banned" $SRC | grep -v 'lint: allow'); then
	echo "lint: banned functions:"; echo "$hits"; rc=1
fi
if hits=$(grep -nE '\bsscanf[[:space:]]*\(' $SRC | grep -v 'lint: allow'); then
	echo "lint: sscanf (use parse.h):"; echo "$hits"; rc=1
fi

# 2. clang-format (the .clang-format at the top).
if command -v clang-format >/dev/null; then
	for f in $SRC; do
		if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
			echo "lint: clang-format: $f (run: clang-format -i $f)"; rc=1
		fi
	done
else
	echo "lint: clang-format not installed, skipped (make deps)"; rc=1
fi

# 3. cppcheck.
if command -v cppcheck >/dev/null; then
	if ! cppcheck --quiet --error-exitcode=1 --std=c11 --inline-suppr \
		--enable=warning,portability --suppress=missingIncludeSystem \
		--suppress='unknownMacro:tests/*' \
		-Icommon -D_GNU_SOURCE $SRC; then
		echo "lint: cppcheck found problems"; rc=1
	fi
else
	echo "lint: cppcheck not installed, skipped (make deps)"; rc=1
fi
# 4. Layers (docs/architecture.md): in common/ and in each program (the
# agent's rooms, the sidecar's, the plugin's), no include or call a
# layer's or room's row does not allow, no include cycle, no two modules
# that call each other (read from the objects' symbols).
if ! python3 scripts/layers.py "${B:-build}"; then rc=1; fi
# 5. Every repository path a README.md or docs/*.md names (backquoted, or
# a link) exists: a moved file leaves no stale name behind.
if ! python3 scripts/docpaths.py; then rc=1; fi

[ $rc -eq 0 ] && echo "lint: ok ($(echo "$SRC" | wc -l) files)"
exit $rc
