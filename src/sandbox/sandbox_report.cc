#include "sandbox/sandbox_report.h"

#include <fmt/format.h>

namespace ptxbench::sandbox {
using nlohmann::ordered_json;

ordered_json to_json(const protection& p) {
  ordered_json j = {{"active", p.active}};
  if (!p.detail.empty()) j["detail"] = p.detail;
  if (!p.active || !p.reason.empty()) j["reason"] = p.reason;
  return j;
}

ordered_json to_json(const sandbox_report& r) {
  ordered_json seccomp = to_json(r.seccomp);
  seccomp["rules"] = r.seccomp_rules;
  ordered_json landlock = to_json(r.landlock);
  landlock["abi"] = r.landlock_abi;
  landlock["network"] = r.landlock_network;
  landlock["scoped_signals_and_abstract_sockets"] = r.landlock_scoped;
  landlock["threads_outside"] = r.threads_outside_landlock;
  return {{"mode", r.mode},
          {"tool", r.tool},
          {"no_new_privs", to_json(r.no_new_privs)},
          {"seccomp", seccomp},
          {"landlock", landlock},
          {"network_namespace", to_json(r.network_namespace)},
          {"capabilities", to_json(r.capabilities)},
          {"rlimits", to_json(r.rlimits)},
          {"mount_namespace", to_json(r.mount_namespace)},
          {"user_namespace", to_json(r.user_namespace)},
          {"skipped_paths", r.skipped_paths},
          {"weakened", r.weakened}};
}

std::string summary(const sandbox_report& r) {
  auto state = [](const protection& p) { return p.active ? std::string("on") : "off (" + p.reason + ")"; };
  std::string landlock = r.landlock.active ? fmt::format("on (ABI {})", r.landlock_abi) : state(r.landlock);
  return fmt::format("sandbox [{}{}]: no_new_privs {}, seccomp {}, landlock {}, network namespace {}, "
                     "capabilities {}, rlimits {}",
                     r.mode, r.tool == "none" ? "" : ", under " + r.tool, state(r.no_new_privs), state(r.seccomp),
                     landlock, state(r.network_namespace), state(r.capabilities), state(r.rlimits));
}

}  // namespace ptxbench::sandbox
