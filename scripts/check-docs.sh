#!/usr/bin/env bash
# Builds every DocC catalog (Sources/MODULE/MODULE.docc) with warnings as errors, against the
# module's symbol graph: unresolved symbol links, undocumented parameters and broken article
# references fail. The code samples in the articles are compiled and run by the test suite
# (DocumentationBlockTests), not here.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build-docs
mkdir -p "$scratch"
# The package's own test modules have no symbol graph to emit, which the command reports as
# errors; the library modules' graphs are checked for below.
swift package dump-symbol-graph --scratch-path "$scratch" > "$scratch/dump.log" 2>&1 || true
graphs="$(find "$scratch" -type d -name symbolgraph | head -n 1)"
status=0
for catalog in Sources/*/*.docc; do
    module="$(basename "$catalog" .docc)"
    if [ ! -f "$graphs/$module.symbols.json" ]; then
        cat "$scratch/dump.log"
        echo "no symbol graph for $module" >&2
        exit 1
    fi
    work="$(mktemp -d)"
    mkdir -p "$work/symbols"
    cp "$graphs/$module".symbols.json "$work/symbols/"
    cp "$graphs/$module"@*.symbols.json "$work/symbols/" 2> /dev/null || true
    if docc convert "$catalog" --additional-symbol-graph-dir "$work/symbols" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.blemockkit.$module" \
        --output-path "$work/archive" --warnings-as-errors > "$work/log" 2>&1; then
        echo "documentation of $module builds without warnings"
    else
        cat "$work/log"
        echo "documentation of $module has problems (above)" >&2
        status=1
    fi
    rm -rf "$work"
done
exit $status
