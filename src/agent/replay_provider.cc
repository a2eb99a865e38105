// The replay model: a recorded trajectory's assistant replies, turn k giving the k-th one. It makes
// `ptxbench run --model replay:FILE` a full demo of the loop without an API key.
#include <fmt/format.h>

#include "agent/provider_factory.h"
#include "core/file_io.h"
#include "suite/trace.h"

namespace ptxbench::agent {
namespace {

result<std::vector<chat_message>> read_replies(const std::filesystem::path& file) {
  auto text = read_text_file(file, 64u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, file.string());
  if (!j) return j.err();
  if (!j->is_object() || !j->contains("messages") || !(*j)["messages"].is_array())
    return make_error(fmt::format("{}: not a trajectory (expected an object with a \"messages\" array)", file.string()));
  std::vector<chat_message> replies;
  const auto& msgs = (*j)["messages"];
  for (std::size_t i = 0; i < msgs.size(); ++i) {
    const auto& m = msgs[i];
    if (!m.is_object() || m.value("role", "") != "assistant") continue;
    if (!m.contains("content") || !m["content"].is_string())
      return make_error(fmt::format("{}: messages[{}].content: expected a string", file.string(), i));
    chat_message reply{"assistant", m["content"].get<std::string>(), ""};
    if (m.contains("reasoning_content") && m["reasoning_content"].is_string())
      reply.reasoning_content = m["reasoning_content"].get<std::string>();
    replies.push_back(std::move(reply));
  }
  if (replies.empty()) return make_error(fmt::format("{}: no assistant message to replay", file.string()));
  return replies;
}

class replay_provider final : public provider {
 public:
  replay_provider(std::filesystem::path file, std::vector<chat_message> replies)
      : m_file(std::move(file)), m_replies(std::move(replies)) {}

  call_result complete(const completion_request& r) override {
    call_result out;
    if (r.turn < 0 || static_cast<std::size_t>(r.turn) >= m_replies.size()) {
      out.failure = {failure_kind::replay_exhausted, 0,
                     fmt::format("{} holds {} replies; none for turn {}", m_file.string(), m_replies.size(), r.turn),
                     {}};
      return out;
    }
    completion c;
    c.content = m_replies[r.turn].content;
    c.reasoning_content = m_replies[r.turn].reasoning_content;
    c.finish_reason = "stop";
    c.cost_usd = 0.0;
    c.response = {{"replay_file", m_file.string()}, {"reply_index", r.turn}};
    c.attempts.push_back({1, 0, "", 0, 0, "", utc_timestamp()});
    out.reply = std::move(c);
    return out;
  }

 private:
  std::filesystem::path m_file;
  std::vector<chat_message> m_replies;
};

}  // namespace

result<std::unique_ptr<provider>> make_replay_provider(const std::filesystem::path& file) {
  auto replies = read_replies(file);
  if (!replies) return replies.err();
  return std::unique_ptr<provider>(std::make_unique<replay_provider>(file, std::move(*replies)));
}

int replay_reply_count(const std::filesystem::path& file) {
  auto replies = read_replies(file);
  return replies ? static_cast<int>(replies->size()) : 0;
}

}  // namespace ptxbench::agent
