// The HTTP provider: encode, POST, retry what is worth retrying, decode, price.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "agent/provider_factory.h"
#include "agent/retry.h"
#include "agent/sse.h"
#include "agent/wire_format.h"
#include "suite/trace.h"

namespace ptxbench::agent {
namespace {

void interruptible_sleep(double seconds, const std::atomic<bool>* cancel) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (cancel && cancel->load()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

class http_provider final : public provider {
 public:
  http_provider(model_spec spec, std::string key, provider_options opts)
      : m_spec(std::move(spec)), m_key(std::move(key)), m_wire(make_wire_format(m_spec.api)), m_opts(std::move(opts)) {
    if (!m_opts.transport) m_opts.transport = make_curl_transport(m_opts.cancel);
    if (!m_opts.sleep) {
      const auto* cancel = m_opts.cancel;
      m_opts.sleep = [cancel](double s) { interruptible_sleep(s, cancel); };
    }
  }

  call_result complete(const completion_request& r) override {
    http_request req = m_wire->encode(m_spec, r, m_key);
    std::vector<attempt_record> attempts;
    const auto& policy = m_spec.retry;
    for (int attempt = 1;; ++attempt) {
      if (cancelled()) return fail(failure_kind::cancelled, 0, "interrupted", attempts);
      stream_state stream;
      http_response resp = m_spec.stream ? post_stream(req, stream) : m_opts.transport->post(req);
      attempt_record rec;
      rec.attempt = attempt;
      rec.http_status = resp.error == transport_error::none ? resp.status : 0;
      rec.elapsed_s = resp.elapsed_s;
      rec.timestamp = utc_timestamp();
      std::optional<double> retry_after;
      if (auto it = resp.headers.find("retry-after"); it != resp.headers.end()) {
        rec.retry_after = it->second;
        retry_after = parse_retry_after(it->second, std::time(nullptr));
      }
      if (!stream.error.empty()) {
        // The provider reported an error inside the stream (overloaded, an internal error ...):
        // the reply is lost, so the attempt is retried like a dropped connection.
        rec.error = stream.error;
      } else if (resp.error != transport_error::none) {
        rec.error = fmt::format("{} error: {}", transport_error_name(resp.error), resp.error_message);
        if (resp.error == transport_error::cancelled) {
          attempts.push_back(rec);
          return fail(failure_kind::cancelled, 0, "interrupted", attempts);
        }
        if (resp.error == transport_error::other) {
          attempts.push_back(rec);
          return fail(failure_kind::bad_request, 0, fmt::format("{}: {}", req.url, rec.error), attempts);
        }
      } else if (resp.status >= 200 && resp.status < 300) {
        auto decoded = m_spec.stream ? finish_stream(stream) : decode_body(resp.body);
        if (decoded) {
          attempts.push_back(rec);
          completion c = std::move(*decoded);
          c.latency_s = resp.elapsed_s;
          c.attempts = std::move(attempts);
          c.cost_usd = call_cost_usd(m_spec, c);
          call_result out;
          out.reply = std::move(c);
          return out;
        }
        rec.error = (m_spec.stream ? "incomplete stream: " : "malformed response: ") + decoded.err().message;
      } else {
        std::string text = provider_error_text(resp.body);
        rec.error = fmt::format("HTTP {}: {}", resp.status, text);
        if (resp.status == 401 || resp.status == 403) {
          attempts.push_back(rec);
          return fail(failure_kind::auth, resp.status, rec.error, attempts);
        }
        if (looks_like_context_overflow(resp.status, resp.body)) {
          attempts.push_back(rec);
          return fail(failure_kind::context_overflow, resp.status, rec.error, attempts);
        }
        if (!is_retryable_status(resp.status)) {
          attempts.push_back(rec);
          return fail(failure_kind::bad_request, resp.status, fmt::format("{} from {}", rec.error, req.url), attempts);
        }
      }
      if (attempt >= policy.max_attempts) {
        attempts.push_back(rec);
        return fail(failure_kind::retries_exhausted, rec.http_status,
                    fmt::format("gave up after {} attempts; last: {}", attempt, rec.error), attempts);
      }
      double wait = retry_after ? std::min(*retry_after, policy.max_retry_after_s)
                                : backoff_delay_s(policy, attempt, random_jitter());
      rec.wait_s = wait;
      attempts.push_back(rec);
      m_opts.sleep(wait);
    }
  }

 private:
  [[nodiscard]] bool cancelled() const { return m_opts.cancel && m_opts.cancel->load(); }

  // One streamed reply: the raw bytes (a server may answer a stream request with plain JSON), the
  // event parser, the assembler, and the first error an event reported.
  struct stream_state {
    std::string raw;
    sse_parser parser;
    std::unique_ptr<stream_assembler> assembler;
    std::string error;
  };

  http_response post_stream(const http_request& req, stream_state& st) {
    st.assembler = m_wire->make_stream_assembler();
    body_sink sink = [&st](std::string_view piece) {
      st.raw.append(piece);
      for (const auto& ev : st.parser.feed(piece))
        if (auto ok_event = st.assembler->on_event(ev); !ok_event) {
          st.error = ok_event.err().message;
          return false;
        }
      return true;
    };
    return m_opts.transport->post_stream(req, sink);
  }

  result<completion> decode_body(const std::string& text) const {
    auto body = parse_json(text, "response");
    return body ? m_wire->decode(*body) : result<completion>(body.err());
  }

  result<completion> finish_stream(stream_state& st) const {
    for (const auto& ev : st.parser.finish())
      if (auto ok_event = st.assembler->on_event(ev); !ok_event) return ok_event.err();
    if (st.parser.bytes() > 0 && st.raw.find("data:") == std::string::npos) return decode_body(st.raw);  // not SSE
    if (!st.assembler->complete())
      return make_error(fmt::format("the stream ended before the reply was complete ({} bytes)", st.parser.bytes()));
    return m_wire->decode(st.assembler->body());
  }

  static call_result fail(failure_kind kind, long status, std::string message, std::vector<attempt_record> attempts) {
    call_result out;
    out.failure = {kind, status, std::move(message), std::move(attempts)};
    return out;
  }

  model_spec m_spec;
  std::string m_key;
  std::unique_ptr<wire_format> m_wire;
  provider_options m_opts;
};

}  // namespace

std::optional<double> call_cost_usd(const model_spec& m, const completion& c) {
  if (c.cost_usd) return c.cost_usd;
  if (!m.price) return std::nullopt;
  const auto& p = *m.price;
  int64_t cached = std::min(c.usage.cached_prompt_tokens, c.usage.prompt_tokens);
  double cached_price = p.cached_input_usd_per_mtok.value_or(p.input_usd_per_mtok);
  return (static_cast<double>(c.usage.prompt_tokens - cached) * p.input_usd_per_mtok +
          static_cast<double>(cached) * cached_price +
          static_cast<double>(c.usage.completion_tokens) * p.output_usd_per_mtok) /
         1e6;
}

result<std::unique_ptr<provider>> make_provider(const model_spec& m, const std::string& api_key,
                                                provider_options options) {
  if (m.api == api_kind::replay) return make_replay_provider(m.replay_file);
  return std::unique_ptr<provider>(std::make_unique<http_provider>(m, api_key, std::move(options)));
}

}  // namespace ptxbench::agent
