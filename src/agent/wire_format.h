#pragma once
// The three HTTP APIs PTXBench speaks, as pure encode/decode functions (tested without a network):
// OpenAI-compatible chat completions (OpenAI, OpenRouter, vLLM, SGLang, llama.cpp), Anthropic
// Messages (with extended thinking) and Google Gemini generateContent. Each can stream (server-sent
// events, model_spec::stream): the stream is assembled into the body the non-streaming call would
// have returned, so one decode() reads both, usage and reasoning included.

#include <memory>
#include <string>

#include "agent/http_client.h"
#include "agent/model_config.h"
#include "agent/provider.h"
#include "agent/sse.h"
#include "core/result.h"

namespace ptxbench::agent {

/// Builds, event by event, the body the non-streaming API would have returned.
class stream_assembler {
 public:
  virtual ~stream_assembler() = default;
  /// One event; fails (one line) when the provider reports an error inside the stream.
  virtual status on_event(const sse_event& e) = 0;
  /// True once the stream said it is complete: OpenAI's [DONE] (or, when a server leaves it out, a
  /// finish_reason), Anthropic's message_stop, Gemini's finishReason.
  [[nodiscard]] virtual bool complete() const = 0;
  /// The assembled body, plus "stream": {"events", "completed_by"} saying how it ended.
  [[nodiscard]] virtual ordered_json body() const = 0;
};

class wire_format {
 public:
  virtual ~wire_format() = default;
  /// Builds the HTTP request: URL, headers (key included when non-empty) and the JSON body, with
  /// the model's `request` object merged over the defaults.
  virtual http_request encode(const model_spec& m, const completion_request& r, const std::string& api_key) const = 0;
  /// Reads a 2xx body: content, reasoning, finish reason, usage and any provider-reported cost.
  /// Fails (one line) when the body is not a completion, e.g. an error object inside a 200.
  virtual result<completion> decode(const ordered_json& body) const = 0;
  /// A fresh assembler for one streamed reply (encode() asked for a stream when m.stream is set).
  [[nodiscard]] virtual std::unique_ptr<stream_assembler> make_stream_assembler() const = 0;
};

/// Returns the wire format for an HTTP API (not for replay).
std::unique_ptr<wire_format> make_wire_format(api_kind api);

/// Shared by the wire formats: a usage counter (0 when absent or not a number).
int64_t usage_count(const ordered_json& obj, const char* key);

/// Shared by the wire formats: the model's extra headers, the JSON body and the timeouts, after
/// each format has set its URL and its own headers.
void finish_json_request(http_request& req, const model_spec& m, const ordered_json& body);

/// The provider's own error message from an error body ({"error": {"message"}}, {"message"},
/// {"detail"}), else the body's first 300 bytes.
std::string provider_error_text(const std::string& body);

/// True when a rejection says the prompt (plus the requested output) is longer than the context window.
bool looks_like_context_overflow(long status, const std::string& body);

}  // namespace ptxbench::agent
