#pragma once
// Builds the provider a model_spec describes: an HTTP provider (with retries, back-off and cost)
// over a transport, or the replay model.

#include <atomic>
#include <functional>
#include <memory>

#include "agent/http_client.h"
#include "agent/model_config.h"
#include "agent/provider.h"
#include "core/result.h"

namespace ptxbench::agent {

/// Sleeps for a number of seconds (tests pass one that only records).
using sleeper = std::function<void(double seconds)>;

struct provider_options {
  std::shared_ptr<http_transport> transport;  ///< null: a libcurl transport
  const std::atomic<bool>* cancel = nullptr;  ///< stops retries and transfers when true
  sleeper sleep;                              ///< null: an interruptible real sleep
};

/// Returns the provider for `m`; fails for an unreadable replay file.
result<std::unique_ptr<provider>> make_provider(const model_spec& m, const std::string& api_key,
                                                provider_options options = {});

/// Returns a provider that replays the assistant messages of a trajectory file, turn k giving the
/// k-th reply. Fails when the file is not a trajectory or has no assistant message.
result<std::unique_ptr<provider>> make_replay_provider(const std::filesystem::path& file);

/// Number of assistant replies a replay file holds (0 when unreadable).
int replay_reply_count(const std::filesystem::path& file);

/// The cost of a call: the provider's own figure if it gave one, else from the price table,
/// else nullopt (unknown).
std::optional<double> call_cost_usd(const model_spec& m, const completion& c);

}  // namespace ptxbench::agent
