// The control for harness_backward_include.cc: the same compile, with the analysis the harness does
// link (measure) and its own headers below CUDA's, must succeed.
#include "measure/timing_stats.h"
#include "gpu/harness/device_lease.h"
