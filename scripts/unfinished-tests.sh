#!/usr/bin/env bash
# Lists the Swift Testing tests a test log shows as started and never ended (passed, failed
# or skipped): after a run that was stopped for taking too long, the tests it was waiting on.
#
#   scripts/unfinished-tests.sh LOG
set -euo pipefail
log="${1:?usage: scripts/unfinished-tests.sh LOG}"
awk '
    /^◇ Test .* started\.$/ && !/^◇ Test (run|case) / {
        name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name)
        if (!(name in started)) { order[++count] = name }
        started[name] = 1
        next
    }
    /^(✔|✘|➜|━) Test / {
        for (i = 1; i <= count; i++) {
            if (index($0, " Test " order[i] " ") > 0) ended[order[i]] = 1
        }
    }
    END {
        for (i = 1; i <= count; i++) if (!(order[i] in ended)) print order[i]
    }
' "$log"
