#include "agent/retry.h"

#include <gtest/gtest.h>

namespace ptxbench::agent {
namespace {

TEST(Retry, RetryAfterSecondsAndHttpDate) {
  EXPECT_EQ(parse_retry_after("7", 0), 7.0);
  EXPECT_EQ(parse_retry_after(" 1.5 ", 0), 1.5);
  // 1994-11-06T08:49:37Z is 784111777 s after the epoch.
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 30), 30.0);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 30), 0.0);
  EXPECT_FALSE(parse_retry_after("soon", 0));
  EXPECT_FALSE(parse_retry_after("", 0));
}

TEST(Retry, BackoffDoublesIsCappedAndJittered) {
  retry_policy p;
  p.base_delay_s = 2;
  p.max_delay_s = 10;
  EXPECT_DOUBLE_EQ(backoff_delay_s(p, 1, 1.0), 2.0);
  EXPECT_DOUBLE_EQ(backoff_delay_s(p, 2, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(backoff_delay_s(p, 3, 1.0), 8.0);
  EXPECT_DOUBLE_EQ(backoff_delay_s(p, 6, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(backoff_delay_s(p, 2, 0.0), 2.0);  // jitter keeps at least half
  for (int i = 0; i < 100; ++i) {
    double j = random_jitter();
    EXPECT_GE(j, 0.0);
    EXPECT_LT(j, 1.0);
  }
}

TEST(Retry, WhichStatusesAreRetried) {
  for (long s : {408L, 429L, 500L, 502L, 503L, 504L, 529L}) EXPECT_TRUE(is_retryable_status(s)) << s;
  for (long s : {400L, 401L, 403L, 404L, 422L, 501L}) EXPECT_FALSE(is_retryable_status(s)) << s;
}

}  // namespace
}  // namespace ptxbench::agent
