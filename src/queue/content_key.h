#pragma once
// The content key: one sha256 that names "this evaluation of this code", so a resubmission finds the
// job already queued or the verdict already measured, whoever sends it and whatever they call it.
//
// key = sha256("ptxbench-job-key/1", canonical_job_text(spec)) with sha256_builder's length-prefixed
// parts. canonical_job_text is compact JSON with object keys sorted (bytewise), no whitespace, UTF-8
// left unescaped:
//   {"kind":K, "protocol":P, "solution":{"sources":[{"content":C,"path":F}...], "spec":S},
//    "target":T, "task":D, "workloads":[W...]}
// where
//   - sources are sorted by path: a solution is a set of files, the order they were listed in
//     changes nothing that is built; contents are taken byte for byte (CRLF ≠ LF: line numbers in
//     compiler logs and the bytes nvcc reads differ);
//   - S is the whole spec object with upstream's defaults filled in (destination_passing_style true,
//     binding null, dependencies []), so leaving a default out and writing it give the same key;
//   - the solution's name, author and description are not part of it: they change no result (the
//     service reports results under the submitted name);
//   - P is the protocol options object without null members (null means "the server's default",
//     exactly as if the option were absent);
//   - W is the sorted, de-duplicated list of workload uuids ([] = every workload of the task);
//   - numbers with an integral value are written as integers everywhere (30 and 30.0 are one timeout);
//   - K is part of the key because an evaluate and a sanitize of the same code are different results.
// Changing any rule changes the version string, so old keys never collide with new ones.

#include <string>

#include "core/result.h"
#include "queue/job.h"

namespace ptxbench::queue {

/// Checks the spec (solution JSON shape, unique source paths, solution.definition = task, protocol is
/// an object) and returns its canonical text. Errors are one line naming the field.
result<std::string> canonical_job_text(const job_spec& spec);

/// sha256 of the canonical text (64 lowercase hex digits).
result<std::string> content_key(const job_spec& spec);

}  // namespace ptxbench::queue
