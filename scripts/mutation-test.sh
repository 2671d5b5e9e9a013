#!/usr/bin/env bash
# Mutation testing: checks that the test suite notices plausible bugs in Sources/.
#
# Each mutant in the list (scripts/mutants.txt by default; its format is described at the top of
# that file) changes one line of one Swift file under Sources/. For each mutant the script
#   1. checks that the original line matches exactly one line of the file (it stops otherwise),
#   2. applies the change, keeping the line's indentation,
#   3. builds the tests (a mutant that does not compile is reported as no-compile, not killed),
#   4. runs the suite (or the mutant's test filter) in parallel, with a time limit (120 s by default;
#      a mutant that makes a test wait forever counts as killed once the limit passes),
#   5. records "killed" when the tests fail (or time out) and "SURVIVED" when they all pass,
#   6. restores the file with `git checkout`, also when the script is interrupted or fails.
# Before the mutants it builds and runs the unchanged suite once: if that fails, every mutant
# would look killed, so the script stops.
#
# It refuses to run when Sources/ has changes or untracked files, so that restoring a file with
# `git checkout` can never lose work. Builds go to their own scratch directory (.build-mutate)
# so they do not disturb .build; build and test logs are kept in <scratch>/mutation-logs/.
#
# Exit status: 0 when every mutant was killed, 1 when one survived or did not compile,
# 2 on a usage or setup error (bad option, dirty tree, a mutant that matches no line or several,
# the unchanged suite failing).
#
# A full run takes one incremental build (a few seconds) and one test run (about 20 s) per mutant,
# plus the time limit for each mutant that makes a test hang (a test waiting for an event the
# mutant never sends): about 25 minutes for the mutants of scripts/mutants.txt.
set -euo pipefail

usage() {
    cat <<'EOF'
Usage: scripts/mutation-test.sh [options]

Applies each mutant of a list to Sources/ in turn, builds, runs the tests, and reports which
mutants the tests killed and which survived. The tree is restored after each mutant.

Options:
  --list FILE          the mutant list (default: scripts/mutants.txt)
  --only N             run only mutant number N (numbered from 1, comments not counted)
  --scratch-path DIR   SwiftPM scratch directory for the builds (default: .build-mutate)
  --timeout SECONDS    time limit of each test run (default: 120); a run that times out counts as killed
  --skip-baseline      do not build and test the unchanged tree first
  --check              only check that every mutant's original line matches exactly one line
  -h, --help           show this help

Exit status: 0 if every mutant was killed, 1 if any survived or failed to compile, 2 on error.
EOF
}

caller_dir=$(pwd)
# A path given on the command line is relative to where the script was called from.
absolute() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$caller_dir/$1" ;; esac; }

root=$(cd "$(dirname "$0")/.." && pwd)
list="$root/scripts/mutants.txt"
scratch="$root/.build-mutate"
only=""
baseline=1
check_only=0
test_timeout=120

while [ $# -gt 0 ]; do
    case "$1" in
        --list) [ $# -ge 2 ] || { usage >&2; exit 2; }; list=$(absolute "$2"); shift 2 ;;
        --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; only="$2"; shift 2 ;;
        --scratch-path) [ $# -ge 2 ] || { usage >&2; exit 2; }; scratch=$(absolute "$2"); shift 2 ;;
        --timeout) [ $# -ge 2 ] || { usage >&2; exit 2; }; test_timeout="$2"; shift 2 ;;
        --skip-baseline) baseline=0; shift ;;
        --check) check_only=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

cd "$root"
fail() { echo "error: $*" >&2; exit 2; }

[ -f "$list" ] || fail "no mutant list at $list"
if [ -n "$only" ] && ! [[ "$only" =~ ^[1-9][0-9]*$ ]]; then fail "--only needs a mutant number, got '$only'"; fi
[[ "$test_timeout" =~ ^[1-9][0-9]*$ ]] || fail "--timeout needs a number of seconds, got '$test_timeout'"
command -v python3 >/dev/null || fail "python3 is needed to apply the mutants"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || fail "$root is not a git work tree"
if [ -n "$(git status --porcelain -- Sources)" ]; then
    git status --short -- Sources >&2
    fail "Sources/ has changes or untracked files; commit or stash them first (the script restores files with git)"
fi

# MARK: Reading the list

# Mutant fields, by mutant index (0-based here, 1-based for the user).
paths=()
originals=()
replacements=()
descriptions=()
filters=()
list_lines=()

line_number=0
while IFS= read -r line || [ -n "$line" ]; do
    line_number=$((line_number + 1))
    line=${line%$'\r'}
    case "$line" in '' | '#'*) continue ;; esac
    # Split on tabs only (read with IFS=tab would merge empty fields).
    mapfile -t fields < <(printf '%s' "$line" | tr '\t' '\n')
    if [ "${#fields[@]}" -lt 4 ] || [ "${#fields[@]}" -gt 5 ]; then
        fail "$list:$line_number: expected 4 or 5 tab-separated fields, found ${#fields[@]}"
    fi
    for field in 0 1 2 3; do
        [ -n "${fields[$field]}" ] || fail "$list:$line_number: field $((field + 1)) is empty"
    done
    case "${fields[0]}" in
        Sources/*.swift) ;;
        *) fail "$list:$line_number: '${fields[0]}' is not a Swift file under Sources/" ;;
    esac
    paths+=("${fields[0]}")
    originals+=("${fields[1]}")
    replacements+=("${fields[2]}")
    descriptions+=("${fields[3]}")
    filters+=("${fields[4]:-}")
    list_lines+=("$line_number")
done <"$list"

count=${#paths[@]}
[ "$count" -gt 0 ] || fail "$list has no mutants"
if [ -n "$only" ] && [ "$only" -gt "$count" ]; then fail "--only $only: the list has $count mutants"; fi

# MARK: Applying a mutant

# mutate MODE FILE ORIGINAL REPLACEMENT
# MODE "check" only checks that ORIGINAL (compared without leading and trailing whitespace)
# matches exactly one line of FILE and prints that line's number; MODE "apply" also replaces the
# line with REPLACEMENT, indented like the original, or deletes it when REPLACEMENT is <delete>.
mutate() {
    python3 - "$@" <<'PYTHON'
import sys

mode, path, original, replacement = sys.argv[1:5]
try:
    with open(path, encoding="utf-8", newline="") as file:
        lines = file.read().splitlines(keepends=True)
except OSError as error:
    sys.exit(f"error: cannot read {path}: {error.strerror}")
matches = [index for index, line in enumerate(lines) if line.strip() == original.strip()]
if len(matches) != 1:
    where = ", ".join(str(index + 1) for index in matches)
    sys.exit(f"error: {path}: the original line matches {len(matches)} lines{' (' + where + ')' if where else ''}, "
             f"expected exactly 1:\n    {original}")
index = matches[0]
if mode == "apply":
    line = lines[index]
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    indentation = body[: len(body) - len(body.lstrip())]
    if replacement == "<delete>":
        del lines[index]
    else:
        lines[index] = indentation + replacement.strip() + ending
    with open(path, "w", encoding="utf-8", newline="") as file:
        file.write("".join(lines))
print(index + 1)
PYTHON
}

# The file currently mutated, restored on every exit path.
mutated=""
restore() {
    if [ -n "$mutated" ]; then
        git checkout --quiet -- "$mutated"
        mutated=""
    fi
}
trap restore EXIT
trap 'echo "interrupted: restoring the mutated file" >&2; restore; exit 130' INT TERM

# Which mutants to run (0-based indices).
if [ -n "$only" ]; then selected=("$((only - 1))"); else mapfile -t selected < <(seq 0 $((count - 1))); fi

# Check every selected mutant before building anything, so a stale list fails at once.
source_lines=()
for index in "${selected[@]}"; do
    if ! source_lines[index]=$(mutate check "${paths[index]}" "${originals[index]}" "${replacements[index]}"); then
        fail "mutant $((index + 1)) ($list:${list_lines[index]}) does not apply"
    fi
    if [ "$check_only" = 1 ]; then
        printf '%3d  %s:%s  %s\n' "$((index + 1))" "${paths[index]}" "${source_lines[index]}" "${descriptions[index]}"
    fi
done
if [ "$check_only" = 1 ]; then
    echo "all ${#selected[@]} mutants apply"
    exit 0
fi

logs="$scratch/mutation-logs"
mkdir -p "$logs"

build() { swift build --build-tests --scratch-path "$scratch" >"$1" 2>&1; }

# run_tests LOG [FILTER]: the exit status of the suite (124 when it timed out).
run_tests() {
    local log=$1 filter=${2:-} status=0
    local command=(swift test --skip-build --parallel --scratch-path "$scratch")
    if [ -n "$filter" ]; then command+=(--filter "$filter"); fi
    timeout "$test_timeout" "${command[@]}" >"$log" 2>&1 || status=$?
    if [ "$status" = 124 ]; then
        # `timeout` stops `swift test`, not the test runner it started, which would go on
        # using the processors (and the mutated build) through every later mutant.
        pkill -KILL -f -- "$scratch/.*PackageTests" 2>/dev/null || true
    fi
    return "$status"
}

started=$SECONDS
echo "mutation testing: ${#selected[@]} of $count mutants from ${list#"$root"/}; logs in $logs"

# MARK: Baseline

if [ "$baseline" = 1 ]; then
    echo "baseline: building and testing the unchanged tree"
    build "$logs/baseline-build.log" || fail "the unchanged tree does not build; see $logs/baseline-build.log"
    run_tests "$logs/baseline-test.log" || {
        status=$?
        # A slow machine's whole suite can outlast the limit: say so, rather than that it fails.
        [ "$status" = 124 ] && fail "the unchanged suite did not finish within $test_timeout s (a slow or busy \
machine: give --timeout more); see $logs/baseline-test.log"
        fail "the unchanged suite fails; see $logs/baseline-test.log"
    }
    echo "baseline: passed ($((SECONDS - started)) s)"
fi

# MARK: Mutants

results=()
killed=0
for index in "${selected[@]}"; do
    number=$((index + 1))
    path=${paths[index]}
    where="$path:${source_lines[index]}"
    mutant_started=$SECONDS
    printf 'mutant %d/%d: %s (%s) ... ' "$number" "$count" "${descriptions[index]}" "$where"

    mutated=$path
    mutate apply "$path" "${originals[index]}" "${replacements[index]}" >/dev/null

    if ! build "$logs/mutant-$number-build.log"; then
        result="no-compile"
        note=" (see $logs/mutant-$number-build.log)"
    else
        status=0
        run_tests "$logs/mutant-$number-test.log" "${filters[index]}" || status=$?
        note=""
        if [ "$status" = 0 ]; then
            result="SURVIVED"
        else
            result="killed"
            killed=$((killed + 1))
            if [ "$status" = 124 ]; then note=" (timed out after $test_timeout s)"; fi
        fi
    fi
    restore

    echo "$result$note, $((SECONDS - mutant_started)) s"
    results+=("$(printf '%3d  %-10s  %s  [%s]%s' "$number" "$result" "${descriptions[index]}" "$where" "$note")")
done

# MARK: Report

if [ -n "$(git status --porcelain -- Sources)" ]; then
    echo "warning: Sources/ is not clean after the run:" >&2
    git status --short -- Sources >&2
fi

total=${#selected[@]}
percent=$(((killed * 200 + total) / (2 * total)))
elapsed=$((SECONDS - started))
echo
echo "results (elapsed $((elapsed / 60)) min $((elapsed % 60)) s):"
printf '%s\n' "${results[@]}"
echo "mutation score: $killed of $total killed ($percent%)"

[ "$killed" = "$total" ]
