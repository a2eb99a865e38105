#include "prompts/chat_template.h"

namespace ptxbench::prompts {
namespace {

std::string strip(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string lstrip_newlines(const std::string& s) {
  auto b = s.find_first_not_of('\n');
  return b == std::string::npos ? "" : s.substr(b);
}

std::string strip_newlines(const std::string& s) {
  auto b = s.find_first_not_of('\n');
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of('\n');
  return s.substr(b, e - b + 1);
}

// Qwen3's assistant content: reasoning is what lies between <think> and the last </think>, the
// answer what follows it.
std::string qwen3_assistant(const std::string& content, bool after_last_user) {
  auto close = content.rfind("</think>");
  if (close == std::string::npos) return content;
  std::string answer = lstrip_newlines(content.substr(close + 8));
  if (!after_last_user) return answer;
  std::string before = content.substr(0, close);
  while (!before.empty() && before.back() == '\n') before.pop_back();
  auto open = before.rfind("<think>");
  std::string reasoning = lstrip_newlines(open == std::string::npos ? before : before.substr(open + 7));
  return "<think>\n" + strip_newlines(reasoning) + "\n</think>\n\n" + answer;
}

}  // namespace

std::string chat_template_name(chat_template t) {
  switch (t) {
    case chat_template::chatml: return "chatml";
    case chat_template::qwen3: return "qwen3";
    case chat_template::llama3: return "llama3";
  }
  return "chatml";
}

std::optional<chat_template> parse_chat_template(const std::string& name) {
  for (auto t : {chat_template::chatml, chat_template::qwen3, chat_template::llama3})
    if (chat_template_name(t) == name) return t;
  return std::nullopt;
}

std::vector<chat_turn> template_contents(chat_template t, const std::vector<chat_turn>& messages) {
  std::vector<chat_turn> out = messages;
  if (t == chat_template::llama3) {
    for (auto& m : out) m.content = strip(m.content);
    return out;
  }
  if (t != chat_template::qwen3) return out;
  std::size_t last_user = messages.size();
  for (std::size_t i = messages.size(); i-- > 0;)
    if (messages[i].role == "user") {
      last_user = i;
      break;
    }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i].role == "assistant")
      out[i].content = qwen3_assistant(messages[i].content, last_user == messages.size() || i > last_user);
  return out;
}

std::string render_chat(chat_template t, const std::vector<chat_turn>& messages, bool add_generation_prompt) {
  std::string out;
  auto contents = template_contents(t, messages);
  if (t == chat_template::llama3) {
    out = "<|begin_of_text|>";
    for (const auto& m : contents) out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
    if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
  }
  for (const auto& m : contents) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

std::optional<chat_template> guess_chat_template(const std::string& jinja) {
  if (jinja.find("<|im_start|>") != std::string::npos)
    return jinja.find("</think>") != std::string::npos ? chat_template::qwen3 : chat_template::chatml;
  if (jinja.find("<|start_header_id|>") != std::string::npos) return chat_template::llama3;
  return std::nullopt;
}

std::vector<std::string> chat_template_markers(chat_template t) {
  if (t == chat_template::llama3) return {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
  return {"<|im_start|>", "<|im_end|>"};
}

}  // namespace ptxbench::prompts
