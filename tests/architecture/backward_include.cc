// Compiled by the architecture tests with the include path of ptxbench_verdict only: it includes a
// header of a layer above the verdict (eval), which must not be found.
#include "eval/pipeline.h"
