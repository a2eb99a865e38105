// The control for backward_include.cc: the same compile, with a header of a layer below the
// verdict (suite), must succeed.
#include "suite/task.h"
#include "verdict/verdict.h"
