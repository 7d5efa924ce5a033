// The victim of tests/faults/impersonation.sh: a 2-rank job over the tcp transport (bootstrap +
// transport, no runtime, as tests/tcp/TcpJobProgram.cpp), run as two virtual nodes.
//   impersonation_job GO_FILE
// Rank 1 prints "impersonation_job: rank 1 pid P listening on ADDR" and then records every
// message that reaches it, until rank 0's own one arrives (90 s deadline). Rank 0 sends that
// message only once GO_FILE exists: the test creates it when its impostor, a process of another
// user claiming to be rank 0, has done its worst. Rank 1 must have delivered nothing but rank
// 0's message, and no failure of rank 0 (an impostor's refused call is no failure of the real
// rank). Prints "impersonation_job: OK" from rank 0; exits 1 with "FAILED: <why>" otherwise.
#include <xmsg/bootstrap/bootstrap.hpp>
#include <xmsg/transport/tcp.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

using namespace xmsg;
using transport::MessageKind;
using transport::WireHeader;

namespace {

// What rank 1 may and may not deliver as "from rank 0" (tests/faults/impersonator.cpp sends the
// forged one, same tag).
constexpr std::string_view kGenuine = "impersonation test: from the real rank 0";
constexpr int32_t kTag = 1;
constexpr auto kDeadline = std::chrono::seconds(90);

int g_rank = -1;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "impersonation_job: rank %d: FAILED: %s\n", g_rank, why.c_str());
  std::exit(1);
}

struct RecordingSink final : transport::MessageSink {
  std::vector<std::pair<WireHeader, std::string>> messages;
  std::vector<std::pair<int, std::string>> failures;
  void on_message(const WireHeader& h, std::span<const std::byte> payload) override {
    messages.emplace_back(h, std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
  }
  void on_peer_failure(int peer, const std::string& reason) override { failures.emplace_back(peer, reason); }
};

void send_text(transport::Transport& tcp, RecordingSink& sink, int rank, int peer, std::string_view text) {
  const WireHeader h{static_cast<uint32_t>(rank), 0, kTag, MessageKind::kEager, 0, 0, text.size()};
  while (!tcp.try_send(peer, h, std::as_bytes(std::span(text.data(), text.size())))) tcp.progress(sink);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: impersonation_job GO_FILE\n");
    return 2;
  }
  const std::string go_file = argv[1];
  try {
    auto boot = bootstrap::make_bootstrap();
    auto tcp = transport::make_tcp_transport(*boot);
    g_rank = boot->rank();
    if (boot->size() != 2) die("needs exactly 2 ranks");
    const int other = 1 - g_rank;
    tcp->connect(std::vector<int>{other});
    RecordingSink sink;
    const auto deadline = std::chrono::steady_clock::now() + kDeadline;
    auto from_rank0 = [&] {
      std::vector<std::string> out;
      for (auto& [h, text] : sink.messages)
        if (h.source == 0) out.push_back(text);
      return out;
    };

    if (g_rank == 1) {
      std::printf("impersonation_job: rank 1 pid %d listening on %s\n", static_cast<int>(::getpid()),
                  boot->get_string(1, "xmsg.tcp.addr").c_str());
      std::fflush(stdout);
      // Progressing all along: the impostor's calls are judged in here.
      while (from_rank0().empty() && sink.failures.empty()) {
        if (std::chrono::steady_clock::now() > deadline) die("no message from rank 0 within 90 s");
        tcp->progress(sink);
      }
      if (!sink.failures.empty()) die("rank 0 failed: " + sink.failures.front().second);
      for (const auto& text : from_rank0())
        if (text != kGenuine) die("delivered a message from \"rank 0\" that rank 0 never sent: '" + text + "'");
      std::printf("impersonation_job: rank 1 delivered %zu message(s), all rank 0's own\n", sink.messages.size());
      std::fflush(stdout);
      send_text(*tcp, sink, 1, 0, "ack");
    } else {
      while (::access(go_file.c_str(), F_OK) != 0) {
        if (std::chrono::steady_clock::now() > deadline) die("no " + go_file + " within 90 s");
        tcp->progress(sink);
        ::usleep(10000);
      }
      send_text(*tcp, sink, 0, 1, kGenuine);
      while (sink.messages.empty() && sink.failures.empty()) {
        if (std::chrono::steady_clock::now() > deadline) die("no answer from rank 1 within 90 s");
        tcp->progress(sink);
      }
      if (!sink.failures.empty()) die("rank 1 failed: " + sink.failures.front().second);
    }
    while (!transport::tcp_output_flushed(*tcp)) tcp->progress(sink);
    tcp->disconnect();
    boot->fence(false);
    boot->finalize();
  } catch (const std::exception& e) {
    die(e.what());
  }
  if (g_rank == 0) std::printf("impersonation_job: OK\n");
  return 0;
}
