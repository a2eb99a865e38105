#pragma once
// A tuned choice remembered on disk, per host: what a vendor baseline's autotuning picked (the
// cuBLASLt algorithm, the cuDNN graph variant and plan), kept in <cache_dir>/baselines/<key>.json so
// that every process on the host that builds the same baseline uses the same choice.
//
// Why (issue 24, "one honest verdict whichever way you ask"): autotuning times a few candidates a
// handful of times each, and candidates within a few percent of each other win by noise. When every
// process tuned on its own, a solo `ptxbench eval` and the service's workers picked different cuDNN
// attention plans for one problem (unified_fwd engine 9 at 2.40 ms in some verdicts, composite_fwd
// engine 2 at 2.47 ms in others), so one kernel's speedup moved with the process that measured it.
// Remembering the first tuning's choice makes the reference one plan for all of them.
//
// Tuning happens under an exclusive lock per key (<cache_dir>/locks/baseline-<name>.lock, the tree's
// file_lock), with the file read again once the lock is held: two processes starting together tune
// once and agree, and they do not time candidates against each other's tuning. A holder killed with
// kill -9 releases the lock (flock). An entry that cannot be used — unreadable, another key, or one
// the caller's `use` rejects (another library build, a plan that no longer finalizes or fails to
// run) — is tuned again now and overwritten. To force re-tuning, delete the file (or use a fresh
// cache folder).

#include <filesystem>
#include <functional>
#include <string>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench {

/// What remember_tuned_choice settled on.
struct tuned_choice {
  ordered_json choice;            ///< the remembered object (with its "key") or what `tune` returned
  bool from_cache = false;        ///< true: taken from the file (and accepted by `use`)
  std::string why_tuned;          ///< when tuned now: "no cache folder", "nothing remembered yet", "the
                                  ///< remembered choice is unusable: ...", ... (empty when from_cache)
  bool stale = false;             ///< tuned now although an entry was there (unreadable, another
                                  ///< key, or refused by `use`): why_tuned says why
  std::filesystem::path path;     ///< the file (empty without a cache folder)
};

/// <cache_dir>/baselines/<key>.json, every character of key outside [A-Za-z0-9._-] written as '_'.
std::filesystem::path tuned_choice_path(const std::filesystem::path& cache_dir, const std::string& key);

/// The lock tuning for `key` holds: <cache_dir>/locks/baseline-<same name>.lock.
std::filesystem::path tuned_choice_lock_path(const std::filesystem::path& cache_dir, const std::string& key);

/// Takes the remembered choice for `key` when `use` accepts it, else tunes now and remembers that.
///  - use(choice): rebuilds the caller's state from a remembered object (it still holds "key");
///    returns an error saying why it cannot (then the entry counts as stale). An exception counts as
///    such an error.
///  - tune(): tunes now; returns the object to remember (its fields must not include "key", which is
///    written first) or an error, which is returned as is (nothing is stored). An exception becomes
///    such an error.
/// Without a cache folder it only tunes. The remembered file is read once without the lock (the
/// common case: taken at once, in parallel with other readers); otherwise the lock is taken (waiting
/// at most lock_wait_s; past that this process tunes on its own, which is still safe: the file is
/// written atomically) and the file is read again, used when another process wrote it meanwhile.
/// A file that cannot be written only loses the memory, never the tuned choice.
result<tuned_choice> remember_tuned_choice(const std::filesystem::path& cache_dir, const std::string& key,
                                           const std::function<status(const ordered_json&)>& use,
                                           const std::function<result<ordered_json>()>& tune,
                                           double lock_wait_s = 600);

}  // namespace ptxbench
