#include "sandbox/seccomp_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "sandbox/syscall_rules.h"
#include "sandbox/violation_reporter.h"

namespace ptxbench::sandbox {
namespace {

constexpr uint64_t k_clone_namespace_flags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                             CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP;
constexpr uint64_t k_low32 = 0xffffffffu;

struct filter_deleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

uint32_t action_for(rule_action a, int error, enforcement mode) {
  if (a == rule_action::enosys) return SCMP_ACT_ERRNO(ENOSYS);
  if (mode == enforcement::audit) return SCMP_ACT_LOG;
  return a == rule_action::trap ? SCMP_ACT_TRAP : SCMP_ACT_ERRNO(static_cast<uint16_t>(error));
}

// Adds one table row; a row may expand to several libseccomp rules (OR-ed by the kernel).
int add_rule(scmp_filter_ctx ctx, uint32_t action, int nr, rule_condition c, pid_t self) {
  switch (c) {
    case rule_condition::always: return seccomp_rule_add(ctx, action, nr, 0);
    case rule_condition::arg0_not_self:
      // Whole-register comparison: garbage in the high half makes it "not self", which only traps more.
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_NE, static_cast<uint64_t>(self)));
    case rule_condition::socket_not_unix:
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_NE, static_cast<uint64_t>(AF_UNIX)));
    case rule_condition::socket_unix:
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_EQ, static_cast<uint64_t>(AF_UNIX)));
    case rule_condition::clone_new_process:
      // The kernel reads the low 32 bits of clone's flags; the mask looks only at CLONE_THREAD.
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, uint64_t{CLONE_THREAD}, uint64_t{0}));
    case rule_condition::clone_new_namespace: {
      for (uint64_t bit = 1; bit <= k_low32; bit <<= 1) {
        if (!(k_clone_namespace_flags & bit)) continue;
        if (int rc = seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit)); rc < 0) return rc;
      }
      return 0;
    }
    case rule_condition::sigaction_sigsys:
      // The kernel reads the signal number as an int: compare the low 32 bits only.
      return seccomp_rule_add(ctx, action, nr, 2, SCMP_A0(SCMP_CMP_MASKED_EQ, k_low32, uint64_t{SIGSYS}),
                              SCMP_A1(SCMP_CMP_NE, uint64_t{0}));
    case rule_condition::personality_change:
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_NE, uint64_t{0xffffffffu}));
    case rule_condition::prlimit_set:
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A2(SCMP_CMP_NE, uint64_t{0}));
    case rule_condition::prctl_set_seccomp:
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, k_low32, uint64_t{PR_SET_SECCOMP}));
    case rule_condition::prctl_set_mm:
      return seccomp_rule_add(ctx, action, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, k_low32, uint64_t{PR_SET_MM}));
  }
  return -EINVAL;
}

}  // namespace

seccomp_outcome load_seccomp_filter(const sandbox_policy& p) {
  seccomp_outcome out;
  std::unique_ptr<void, filter_deleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) {
    out.status.reason = "libseccomp could not create a filter";
    return out;
  }
  // Every thread (the CUDA driver's already run); calls made with another architecture's numbers
  // (int 0x80 on x86_64) end the process: a classic way around native-only rules.
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_TSYNC, 1);
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  const pid_t self = ::getpid();
  for (const auto& r : syscall_rules()) {
    if (!rule_applies(r, p)) continue;
    int nr = seccomp_syscall_resolve_name(r.syscall);
    if (nr == __NR_SCMP_ERROR || nr < 0) {  // negative: a pseudo-number for a call this arch lacks
      out.not_on_arch.push_back(r.syscall);
      continue;
    }
    int error = 0;
    rule_action a = effective_action(r, p, &error);
    if (a == rule_action::trap) register_trapped_syscall(nr, r.syscall);
    if (int rc = add_rule(ctx.get(), action_for(a, error, p.mode), nr, r.condition, self); rc < 0) {
      out.status.reason = fmt::format("libseccomp refused the rule for {} ({})", r.syscall, std::strerror(-rc));
      return out;
    }
    ++out.rules;
  }
  if (int rc = seccomp_load(ctx.get()); rc != 0) {
    out.status.reason = rc > 0 ? fmt::format("thread {} could not be synchronised to the filter", rc)
                               : fmt::format("the kernel refused the filter ({})", std::strerror(-rc));
    return out;
  }
  out.status.active = true;
  out.status.detail = p.mode == enforcement::audit
                          ? "audit: every rule logs (dmesg: audit type=1326) and lets the call through"
                          : "all threads; forbidden calls trap (reported, process ends) or fail with an errno";
  return out;
}

}  // namespace ptxbench::sandbox
