// The HTTP provider against the scripted server: retries with Retry-After, dropped connections,
// a refused key, exhausted retries, context overflow.
#include <gtest/gtest.h>

#include "agent/fake_llm_server.h"
#include "agent/provider_factory.h"

namespace ptxbench::agent {
namespace {

using ptxbench::testing::fake_llm_server;
using ptxbench::testing::scripted_fault;

struct recorder {
  std::vector<double> waits;
  sleeper fn() {
    return [this](double s) { waits.push_back(s); };
  }
};

model_spec spec_for(const fake_llm_server& server) {
  model_spec m;
  m.name = "fake";
  m.api = api_kind::openai;
  m.model_id = "fake-model";
  m.base_url = server.base_url();
  m.timeout_s = 10;
  m.connect_timeout_s = 5;
  m.retry.max_attempts = 4;
  m.price = price_table{1.0, 2.0, std::nullopt};
  return m;
}

completion_request hello() { return {{{"system", "s", ""}, {"user", "u", ""}}, 0, std::nullopt}; }

TEST(ProviderHttp, RetriesA429HonouringRetryAfterAndRecordsIt) {
  fake_llm_server server;
  server.set_reply(0, "done");
  server.inject({scripted_fault::kind::status, 429, "3", R"({"error":{"message":"rate limited"}})"});
  recorder rec;
  auto p = make_provider(spec_for(server), "sk", {nullptr, nullptr, rec.fn()});
  ASSERT_TRUE(p);
  auto r = (*p)->complete(hello());
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, "done");
  ASSERT_EQ(r.reply->attempts.size(), 2u);
  EXPECT_EQ(r.reply->attempts[0].http_status, 429);
  EXPECT_EQ(r.reply->attempts[0].retry_after, "3");
  EXPECT_DOUBLE_EQ(r.reply->attempts[0].wait_s, 3.0);
  EXPECT_NE(r.reply->attempts[0].error.find("rate limited"), std::string::npos);
  EXPECT_EQ(r.reply->attempts[1].http_status, 200);
  ASSERT_EQ(rec.waits.size(), 1u);
  EXPECT_DOUBLE_EQ(rec.waits[0], 3.0);
  EXPECT_EQ(server.last_authorization(), "Bearer sk");
  // Cost from the price table: prompt at $1/M, completion at $2/M.
  double expected = (r.reply->usage.prompt_tokens * 1.0 + r.reply->usage.completion_tokens * 2.0) / 1e6;
  EXPECT_DOUBLE_EQ(r.reply->cost_usd.value(), expected);
}

TEST(ProviderHttp, RetriesADroppedConnection) {
  fake_llm_server server;
  server.set_reply(0, "after the drop");
  server.inject({scripted_fault::kind::drop_connection});
  recorder rec;
  auto p = make_provider(spec_for(server), "", {nullptr, nullptr, rec.fn()});
  auto r = (*p)->complete(hello());
  ASSERT_TRUE(r.ok()) << r.failure.message;
  EXPECT_EQ(r.reply->content, "after the drop");
  ASSERT_EQ(r.reply->attempts.size(), 2u);
  EXPECT_EQ(r.reply->attempts[0].http_status, 0);
  EXPECT_NE(r.reply->attempts[0].error.find("connection error"), std::string::npos) << r.reply->attempts[0].error;
  ASSERT_EQ(rec.waits.size(), 1u);
  EXPECT_GE(rec.waits[0], 1.0);  // back-off: base 2 s with at most 50% jitter off
  EXPECT_EQ(server.requests(), 2);
}

TEST(ProviderHttp, A401IsNotRetried) {
  fake_llm_server server;
  server.always({scripted_fault::kind::status, 401, "", R"({"error":{"message":"Incorrect API key provided"}})"});
  recorder rec;
  auto p = make_provider(spec_for(server), "bad", {nullptr, nullptr, rec.fn()});
  auto r = (*p)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure.kind, failure_kind::auth);
  EXPECT_EQ(r.failure.http_status, 401);
  EXPECT_NE(r.failure.message.find("Incorrect API key"), std::string::npos);
  EXPECT_EQ(server.requests(), 1);
  EXPECT_TRUE(rec.waits.empty());
}

TEST(ProviderHttp, ServerErrorsExhaustTheRetries) {
  fake_llm_server server;
  server.always({scripted_fault::kind::status, 503, "", ""});
  recorder rec;
  auto p = make_provider(spec_for(server), "", {nullptr, nullptr, rec.fn()});
  auto r = (*p)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure.kind, failure_kind::retries_exhausted);
  EXPECT_EQ(r.failure.attempts.size(), 4u);
  EXPECT_EQ(rec.waits.size(), 3u);
  EXPECT_LE(rec.waits[0], rec.waits[2] + 1e-9);
  EXPECT_NE(r.failure.message.find("gave up after 4 attempts"), std::string::npos);
}

TEST(ProviderHttp, ContextOverflowAndBadRequestsAreTheirOwnKinds) {
  fake_llm_server server;
  server.inject({scripted_fault::kind::status, 400, "",
                 R"({"error":{"message":"This model's maximum context length is 32768 tokens."}})"});
  server.inject({scripted_fault::kind::status, 404, "", R"({"error":{"message":"model not found"}})"});
  auto p = make_provider(spec_for(server), "", {nullptr, nullptr, [](double) {}});
  EXPECT_EQ((*p)->complete(hello()).failure.kind, failure_kind::context_overflow);
  auto r = (*p)->complete(hello());
  EXPECT_EQ(r.failure.kind, failure_kind::bad_request);
  EXPECT_NE(r.failure.message.find("model not found"), std::string::npos);
}

TEST(ProviderHttp, UnreachableServerIsRetriedThenReported) {
  model_spec m;
  m.name = "nowhere";
  m.api = api_kind::openai;
  m.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
  m.retry.max_attempts = 2;
  m.connect_timeout_s = 2;
  auto p = make_provider(m, "", {nullptr, nullptr, [](double) {}});
  auto r = (*p)->complete(hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.failure.kind, failure_kind::retries_exhausted);
  EXPECT_EQ(r.failure.attempts.size(), 2u);
}

}  // namespace
}  // namespace ptxbench::agent
