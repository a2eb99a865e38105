# shellcheck shell=bash
# Transitional: bench/fixit_h200.sh, bench/train_smoke_h200.sh and bench/supervision_h200.sh still
# source this path; they move to bench/adapt/ (on their own branch) and then source bench/lib/env.sh.
# Delete this file when they have. New scripts source bench/lib/env.sh (bench/README.md).
# shellcheck source=bench/lib/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/env.sh"
