#!/usr/bin/env bash
# Runs the whole test suite in parallel. This is the command README.md names.
set -euo pipefail
cd "$(dirname "$0")/.."
swift test --parallel "$@"
