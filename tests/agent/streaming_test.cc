// Streaming (server-sent events) for the three APIs: the SSE parser, the assemblers, and the HTTP
// provider against the scripted server streaming for real, with a mid-stream disconnect, a missing
// [DONE], a stream cut short and an error event inside a stream.
#include <chrono>

#include <gtest/gtest.h>

#include "agent/fake_llm_server.h"
#include "agent/provider_factory.h"
#include "agent/sse.h"
#include "agent/wire_format.h"

namespace ptxbench::agent {
namespace {

using ptxbench::testing::fake_llm_server;
using ptxbench::testing::scripted_fault;

TEST(Sse, EventsSurviveSplitReadsCrlfCommentsAndMultiLineData) {
  sse_parser p;
  std::string stream = ": hello\r\nevent: delta\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: two\n\nid: 3\ndata:three\n\n";
  std::vector<sse_event> got;
  for (char c : stream)  // one byte at a time: every line and event is split across reads
    for (auto& e : p.feed(std::string_view(&c, 1))) got.push_back(e);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].event, "delta");
  EXPECT_EQ(got[0].data, "{\"a\":\n1}");
  EXPECT_EQ(got[1].event, "");
  EXPECT_EQ(got[1].data, "two");
  EXPECT_EQ(got[2].data, "three");
  EXPECT_TRUE(p.finish().empty());
  EXPECT_EQ(p.bytes(), stream.size());
  sse_parser q;
  EXPECT_TRUE(q.feed("data: last without a blank line").empty());
  auto tail = q.finish();
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0].data, "last without a blank line");
}

TEST(StreamAssembler, OpenAiChunksBecomeTheBodyDecodeReads) {
  auto wire = make_wire_format(api_kind::openai);
  auto a = wire->make_stream_assembler();
  for (const char* d : {R"({"id":"x","model":"m","choices":[{"delta":{"role":"assistant","content":""}}]})",
                        R"({"choices":[{"delta":{"reasoning_content":"thin"}}]})",
                        R"({"choices":[{"delta":{"reasoning":"king"}}]})",
                        R"({"choices":[{"delta":{"content":"hel"}}]})", R"({"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]})"})
    ASSERT_TRUE(a->on_event({"", d}));
  EXPECT_TRUE(a->complete());  // a finish_reason, even before [DONE]
  ASSERT_TRUE(a->on_event({"", R"({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"completion_tokens_details":{"reasoning_tokens":2}}})"}));
  ASSERT_TRUE(a->on_event({"", "[DONE]"}));
  auto c = wire->decode(a->body());
  ASSERT_TRUE(c) << c.err().message;
  EXPECT_EQ(c->content, "hello");
  EXPECT_EQ(c->reasoning_content, "thinking");
  EXPECT_EQ(c->finish_reason, "stop");
  EXPECT_EQ(c->usage.prompt_tokens, 10);
  EXPECT_EQ(c->usage.reasoning_tokens, 2);
  EXPECT_EQ(c->response["stream"]["completed_by"], "[DONE]");
  auto err = wire->make_stream_assembler()->on_event({"", R"({"error":{"message":"upstream overloaded"}})"});
  ASSERT_FALSE(err);
  EXPECT_NE(err.err().message.find("upstream overloaded"), std::string::npos);
  EXPECT_FALSE(wire->make_stream_assembler()->on_event({"", "not json"}));
}

TEST(StreamAssembler, AnthropicAndGeminiEventsBecomeTheirBodies) {
  auto aw = make_wire_format(api_kind::anthropic);
  auto a = aw->make_stream_assembler();
  for (const char* d : {R"({"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":7,"cache_read_input_tokens":3}}})",
                        R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})",
                        R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}})",
                        R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}})",
                        R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})",
                        R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ok"}})",
                        R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}})"})
    ASSERT_TRUE(a->on_event({"", d}));
  EXPECT_FALSE(a->complete());
  ASSERT_TRUE(a->on_event({"message_stop", R"({"type":"message_stop"})"}));
  auto c = aw->decode(a->body());
  ASSERT_TRUE(c) << c.err().message;
  EXPECT_EQ(c->content, "ok");
  EXPECT_EQ(c->reasoning_content, "hmm");
  EXPECT_EQ(c->finish_reason, "end_turn");
  EXPECT_EQ(c->usage.prompt_tokens, 10);
  EXPECT_EQ(c->usage.completion_tokens, 5);
  EXPECT_FALSE(aw->make_stream_assembler()->on_event({"error", R"({"type":"error","error":{"message":"Overloaded"}})"}));

  auto gw = make_wire_format(api_kind::gemini);
  auto g = gw->make_stream_assembler();
  ASSERT_TRUE(g->on_event({"", R"({"candidates":[{"content":{"parts":[{"text":"pla","thought":true}]}}],"usageMetadata":{"promptTokenCount":9}})"}));
  ASSERT_TRUE(g->on_event({"", R"({"candidates":[{"content":{"parts":[{"text":"n","thought":true},{"text":"an"}]}}]})"}));
  EXPECT_FALSE(g->complete());
  ASSERT_TRUE(g->on_event({"", R"({"candidates":[{"content":{"parts":[{"text":"swer"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3,"thoughtsTokenCount":2}})"}));
  auto gc = gw->decode(g->body());
  ASSERT_TRUE(gc) << gc.err().message;
  EXPECT_EQ(gc->content, "answer");
  EXPECT_EQ(gc->reasoning_content, "plan");
  EXPECT_EQ(gc->usage.completion_tokens, 5);
  EXPECT_EQ(gc->usage.reasoning_tokens, 2);
}

model_spec streaming_spec(const fake_llm_server& server, api_kind api) {
  model_spec m;
  m.name = "fake";
  m.api = api;
  m.model_id = "fake-model";
  m.base_url = api == api_kind::openai ? server.base_url() : server.root_url();
  m.timeout_s = 10;
  m.connect_timeout_s = 5;
  m.retry.max_attempts = 3;
  m.stream = true;
  m.stream_idle_timeout_s = 5;
  if (api == api_kind::anthropic) m.request["max_tokens"] = 1000;
  return m;
}

completion_request streaming_hello() { return {{{"system", "s", ""}, {"user", "u", ""}}, 0, std::nullopt}; }

class StreamingProvider : public ::testing::TestWithParam<api_kind> {
 protected:
  std::vector<double> waits;
  call_result call(fake_llm_server& server) {
    auto p = make_provider(streaming_spec(server, GetParam()), "k", {nullptr, nullptr, [this](double s) { waits.push_back(s); }});
    EXPECT_TRUE(p);
    return (*p)->complete(streaming_hello());
  }
};

TEST_P(StreamingProvider, ContentReasoningAndUsageArriveThroughTheStream) {
  fake_llm_server server;
  std::string content(500, 'x');
  content += " end of the kernel";
  server.set_reply(0, content, "first I think, then I write");
  auto r = call(server);
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(server.streamed_requests(), 1);
  EXPECT_EQ(r.reply->content, content);
  EXPECT_EQ(r.reply->reasoning_content, "first I think, then I write");
  EXPECT_GT(r.reply->usage.prompt_tokens, 0);
  EXPECT_GT(r.reply->usage.completion_tokens, 0);
  if (GetParam() == api_kind::anthropic) {
    EXPECT_FALSE(r.reply->usage.reasoning_tokens.has_value());  // the Messages API does not report them apart
  } else {
    ASSERT_TRUE(r.reply->usage.reasoning_tokens.has_value());
    EXPECT_EQ(*r.reply->usage.reasoning_tokens, 6);
  }
  EXPECT_GT(r.reply->response["stream"]["events"].get<int>(), 70);  // 7-character pieces
  EXPECT_NE(r.reply->response["stream"]["completed_by"], "nothing");
  ASSERT_EQ(r.reply->attempts.size(), 1u);
  auto sent = server.request_bodies().back();
  if (GetParam() == api_kind::openai) {
    EXPECT_EQ(sent["stream"], true);
    EXPECT_EQ(sent["stream_options"]["include_usage"], true);
  } else if (GetParam() == api_kind::anthropic) {
    EXPECT_EQ(sent["stream"], true);
  }
}

TEST_P(StreamingProvider, AConnectionLostMidStreamIsRetried) {
  fake_llm_server server;
  server.set_reply(0, std::string(300, 'y'));
  server.inject({scripted_fault::kind::drop_mid_stream});
  auto r = call(server);
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, std::string(300, 'y'));  // the retry's reply, not half of the first
  ASSERT_EQ(r.reply->attempts.size(), 2u);
  EXPECT_NE(r.reply->attempts[0].error.find("connection"), std::string::npos) << r.reply->attempts[0].error;
  EXPECT_EQ(waits.size(), 1u);
}

TEST_P(StreamingProvider, AStreamCutShortWithoutItsEndIsRetried) {
  fake_llm_server server;
  server.set_reply(0, std::string(300, 'z'));
  server.inject({scripted_fault::kind::stream_truncated});
  auto r = call(server);
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, std::string(300, 'z'));
  ASSERT_EQ(r.reply->attempts.size(), 2u);
  EXPECT_NE(r.reply->attempts[0].error.find("incomplete stream: the stream ended before the reply was complete"),
            std::string::npos) << r.reply->attempts[0].error;
}

TEST_P(StreamingProvider, AnErrorEventInsideTheStreamIsRetried) {
  fake_llm_server server;
  server.set_reply(0, std::string(100, 'w'));
  server.inject({scripted_fault::kind::error_in_stream});
  auto r = call(server);
  ASSERT_TRUE(r.ok()) << r.failure.message;
  ASSERT_EQ(r.reply->attempts.size(), 2u);
  EXPECT_NE(r.reply->attempts[0].error.find("Overloaded"), std::string::npos) << r.reply->attempts[0].error;
}

// Long teacher calls: a generation that keeps sending outlives the idle limit; one that goes silent
// with the connection open is cut after it and asked again.
TEST(StreamingProviderIdle, ASteadyStreamLongerThanTheIdleLimitSucceeds) {
  fake_llm_server server;
  server.set_reply(0, std::string(140, 's'));  // 20 content events
  server.set_stream_event_delay_ms(100);       // about 2.3 s in all, never 1 s silent
  auto m = streaming_spec(server, api_kind::openai);
  m.stream_idle_timeout_s = 1;
  auto p = make_provider(m, "k", {nullptr, nullptr, [](double) {}});
  ASSERT_TRUE(p);
  auto r = (*p)->complete(streaming_hello());
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, std::string(140, 's'));
  EXPECT_EQ(r.reply->attempts.size(), 1u);
  EXPECT_GT(r.reply->latency_s, 1.5);
}

TEST(StreamingProviderIdle, AStreamSilentForTheIdleLimitIsCutAndRetried) {
  fake_llm_server server;
  server.set_reply(0, std::string(140, 'q'));
  scripted_fault stall{scripted_fault::kind::stall_mid_stream};
  stall.stall_ms = 4000;
  server.inject(stall);
  auto m = streaming_spec(server, api_kind::openai);
  m.stream_idle_timeout_s = 1;
  auto p = make_provider(m, "k", {nullptr, nullptr, [](double) {}});
  ASSERT_TRUE(p);
  auto start = std::chrono::steady_clock::now();
  auto r = (*p)->complete(streaming_hello());
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, std::string(140, 'q'));
  ASSERT_EQ(r.reply->attempts.size(), 2u);
  EXPECT_NE(r.reply->attempts[0].error.find("timeout"), std::string::npos) << r.reply->attempts[0].error;
  EXPECT_LT(took, 3.9);  // cut by the idle limit, not by the server giving up after 4 s
}

INSTANTIATE_TEST_SUITE_P(Apis, StreamingProvider,
                         ::testing::Values(api_kind::openai, api_kind::anthropic, api_kind::gemini),
                         [](const auto& info) { return api_kind_name(info.param); });

TEST(StreamingProviderOpenAi, AMissingDoneAfterAFinishReasonIsAcceptedAndRecorded) {
  fake_llm_server server;
  server.set_reply(0, "complete reply");
  server.inject({scripted_fault::kind::stream_without_done});
  auto p = make_provider(streaming_spec(server, api_kind::openai), "", {nullptr, nullptr, [](double) {}});
  ASSERT_TRUE(p);
  auto r = (*p)->complete(streaming_hello());
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, "complete reply");
  EXPECT_EQ(r.reply->attempts.size(), 1u);
  EXPECT_EQ(r.reply->response["stream"]["completed_by"], "finish_reason (no [DONE])");
}

TEST(StreamingProviderOthers, AMissingTerminatorIsAnIncompleteStreamForAnthropicAndGemini) {
  for (auto api : {api_kind::anthropic, api_kind::gemini}) {
    fake_llm_server server;
    server.set_reply(0, "complete reply");
    server.inject({scripted_fault::kind::stream_without_done});
    auto p = make_provider(streaming_spec(server, api), "", {nullptr, nullptr, [](double) {}});
    ASSERT_TRUE(p);
    auto r = (*p)->complete(streaming_hello());
    ASSERT_TRUE(r.ok()) << r.failure.message;
    EXPECT_EQ(r.reply->attempts.size(), 2u) << api_kind_name(api);  // message_stop / finishReason missing: retried
  }
}

TEST(StreamingProviderOpenAi, AServerThatIgnoresStreamAndAnswersWithJsonStillWorks) {
  fake_llm_server server;
  server.set_reply(0, "plain");
  auto spec = streaming_spec(server, api_kind::openai);
  spec.request["stream"] = false;  // the request's own settings win: the server answers with one JSON body
  auto p = make_provider(spec, "", {nullptr, nullptr, [](double) {}});
  ASSERT_TRUE(p);
  auto r = (*p)->complete(streaming_hello());
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, "plain");
}

}  // namespace
}  // namespace ptxbench::agent
