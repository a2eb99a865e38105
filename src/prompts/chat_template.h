#pragma once
// The chat templates the SFT export's length filter renders conversations with, so a row is
// measured the way the target model will see it (the same rendering train/ measures). Jinja is not
// run here: the templates are the fixed text layouts below, written out in code.
//
//   chatml  <|im_start|>{role}\n{content}<|im_end|>\n per message; generation prompt
//           <|im_start|>assistant\n (Qwen2/2.5 and other ChatML models)
//   qwen3   ChatML with Qwen3's reasoning handling: an assistant message before the last user
//           message keeps only what follows its last </think> (leading newlines dropped); one after
//           it with a <think>…</think> block is written <think>\n{reasoning}\n</think>\n\n{answer}
//   llama3  <|begin_of_text|>, then <|start_header_id|>{role}<|end_header_id|>\n\n{content, trimmed}
//           <|eot_id|> per message (Llama 3.0; 3.1's date preamble is not reproduced)

#include <optional>
#include <string>
#include <vector>

namespace ptxbench::prompts {

enum class chat_template { chatml, qwen3, llama3 };

struct chat_turn {
  std::string role;     ///< system, user, assistant
  std::string content;
};

std::string chat_template_name(chat_template t);
std::optional<chat_template> parse_chat_template(const std::string& name);

/// The conversation as the template renders it.
std::string render_chat(chat_template t, const std::vector<chat_turn>& messages, bool add_generation_prompt);

/// Each message's content as the template writes it between its markers (qwen3: earlier assistant
/// turns lose their reasoning, later ones get the canonical <think> block; llama3: trimmed; chatml:
/// verbatim). Rendering a conversation and parsing it back gives exactly these, which is what
/// upstream's SFT builders did to every row before writing it ("chat-template normalization").
std::vector<chat_turn> template_contents(chat_template t, const std::vector<chat_turn>& messages);

/// The template a Hugging Face chat_template (Jinja text from tokenizer_config.json) most likely is:
/// qwen3 when it writes <|im_start|> and handles </think>, chatml when it writes <|im_start|>,
/// llama3 when it writes <|start_header_id|>; nullopt otherwise.
std::optional<chat_template> guess_chat_template(const std::string& jinja);

/// The template's special markers (they must not occur inside message contents).
std::vector<std::string> chat_template_markers(chat_template t);

}  // namespace ptxbench::prompts
