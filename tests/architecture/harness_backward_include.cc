// Compiled by the architecture tests with the include path of the trusted harness (ptxbench_harness):
// the orchestrator's pipeline is above the harness and must not be found — the harness links the
// measurement analysis (measure), never the orchestrator (eval).
#include "eval/pipeline.h"
