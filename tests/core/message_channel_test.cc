#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "core/message_channel.h"

namespace ptxbench {
namespace {

TEST(MessageChannel, RoundTripAndPeerPid) {
  message_listener listener;
  ASSERT_TRUE(listener.listen(std::filesystem::temp_directory_path()).ok());
  std::thread client([&] {
    auto ch = message_channel::connect(listener.path());
    ASSERT_TRUE(ch.ok());
    ASSERT_TRUE(ch->send({{"type", "hello"}, {"n", 1}}).ok());
    auto reply = ch->receive(5);
    ASSERT_EQ(reply.kind, message_channel::receive_kind::message);
    EXPECT_EQ(reply.message["type"], "ack");
  });
  auto acc = listener.accept(5);
  ASSERT_TRUE(acc.ok()) << acc.err().message;
  EXPECT_EQ(acc->peer_pid, ::getpid());
  auto m = acc->channel.receive(5);
  ASSERT_EQ(m.kind, message_channel::receive_kind::message);
  EXPECT_EQ(m.message["n"], 1);
  ASSERT_TRUE(acc->channel.send({{"type", "ack"}}).ok());
  client.join();
}

TEST(MessageChannel, TimeoutAndClosedAreDistinct) {
  message_listener listener;
  ASSERT_TRUE(listener.listen(std::filesystem::temp_directory_path()).ok());
  auto ch = message_channel::connect(listener.path());
  ASSERT_TRUE(ch.ok());
  auto acc = listener.accept(5);
  ASSERT_TRUE(acc.ok());
  EXPECT_EQ(acc->channel.receive(0.05).kind, message_channel::receive_kind::timeout);
  ch->close();
  EXPECT_EQ(acc->channel.receive(1).kind, message_channel::receive_kind::closed);
}

TEST(MessageChannel, AcceptTimesOut) {
  message_listener listener;
  ASSERT_TRUE(listener.listen(std::filesystem::temp_directory_path()).ok());
  auto acc = listener.accept(0.05);
  ASSERT_FALSE(acc.ok());
}

}  // namespace
}  // namespace ptxbench
