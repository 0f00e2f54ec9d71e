// The C++ Parterre bot: one Referee.Connect stream, a uniformly random legal
// action for every DecisionRequest of any game (docs/bots.md section 1), with
// a debug text saying so ("random: 1 of 7 actions; chose take row 3: Pink
// Tulip (Beetle) +1 stone": the bot's own notes, shown only to its owner;
// "Debug text").
//
//   parterre-cpp-bot [--address HOST:PORT] [--token=T] [--name N] [--version V]
//                    [--max-matches N] [--stop-after N] [--seed S] [--no-reconnect]
//
// Defaults come from PARTERRE_BOT_TOKEN and PARTERRE_REFEREE_ADDRESS (else
// 127.0.0.1:50051). Exit status: 0 after --stop-after matches, 2 for bad
// arguments or a refused token, 1 when the stream failed and --no-reconnect
// was given. Typed access for a strategy: req.legal_actions(i).floriferous(),
// req.observation().lafleur().players(0).cards_in_hand(), ...
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "parterre/v1/referee.grpc.pb.h"

namespace pv1 = parterre::v1;

namespace {

struct Options {
  std::string address = "127.0.0.1:50051";
  std::string token;
  std::string name = "cpp-random";
  std::string version = "1";
  int max_matches = 1;
  int stop_after = 0;
  unsigned seed = 0;
  bool reconnect = true;
};

// The contract revision this bot was written against (docs/bots.md, "Contract revisions").
constexpr unsigned kContractRevision = 3;

// This process's random id, sent in every Hello (docs/bots.md, "Reconnecting"): a new stream with it
// takes over the matches of this process's earlier stream at once, even a half-open one.
const std::string& instance_id() {
  static const std::string id = [] {
    std::random_device rd;
    std::string out;
    const char* hex = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) out += hex[rd() % 16];
    return out;
  }();
  return id;
}

void log_line(const Options& o, const std::string& text) { std::cerr << o.name << ": " << text << std::endl; }

bool parse(int argc, char** argv, Options& o) {
  if (const char* t = std::getenv("PARTERRE_BOT_TOKEN")) o.token = t;
  if (const char* a = std::getenv("PARTERRE_REFEREE_ADDRESS"); a && *a) o.address = a;
  o.seed = static_cast<unsigned>(std::random_device{}());
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg != "--no-reconnect" && i + 1 < argc) {
      value = argv[++i];
    }
    try {
      if (arg == "--address") o.address = value;
      else if (arg == "--token") o.token = value;
      else if (arg == "--name") o.name = value;
      else if (arg == "--version") o.version = value;
      else if (arg == "--max-matches") o.max_matches = std::max(1, std::stoi(value));
      else if (arg == "--stop-after") o.stop_after = std::stoi(value);
      else if (arg == "--seed") o.seed = static_cast<unsigned>(std::stoul(value));
      else if (arg == "--no-reconnect") o.reconnect = false;
      else {
        std::cerr << "unknown option " << arg << std::endl;
        return false;
      }
    } catch (const std::exception&) {
      std::cerr << "bad value for " << arg << ": " << value << std::endl;
      return false;
    }
  }
  if (o.token.empty()) {
    std::cerr << "a bot token is required: --token=T or PARTERRE_BOT_TOKEN" << std::endl;
    return false;
  }
  return true;
}

enum class Outcome { kStopped, kRefused, kLost };

// One connection, until the stream ends or --stop-after matches ended.
Outcome play(const Options& o, std::mt19937& rng, int& ended) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  auto channel = grpc::CreateCustomChannel(o.address, grpc::InsecureChannelCredentials(), args);
  auto stub = pv1::Referee::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Connect(&context);

  pv1::BotMessage hello;
  auto* h = hello.mutable_hello();
  h->set_token(o.token);
  h->set_bot_name(o.name);
  h->set_bot_version(o.version);
  h->set_max_concurrent_matches(o.max_matches);
  h->set_instance_id(instance_id());
  h->set_contract_revision(kContractRevision);
  if (!stream->Write(hello)) log_line(o, "could not send Hello");

  bool refused = false;
  pv1::RefereeMessage msg;
  while (stream->Read(&msg)) {
    switch (msg.kind_case()) {
      case pv1::RefereeMessage::kWelcome:
        log_line(o, "connected as bot " + std::to_string(msg.welcome().bot_id()) + ", waiting for matches");
        for (const auto& notice : msg.welcome().notices()) log_line(o, "referee: " + notice);
        break;
      case pv1::RefereeMessage::kDecisionRequest: {
        const auto& req = msg.decision_request();
        pv1::BotMessage answer;
        auto* d = answer.mutable_decision();
        d->set_match_id(req.match_id());
        d->set_seq(req.seq());
        if (req.legal_actions_size() > 0) {
          std::uniform_int_distribution<int> pick(0, req.legal_actions_size() - 1);
          const auto& action = req.legal_actions(pick(rng));
          d->set_action_index(action.index());
          // This decision's notes, kept beside its step for the bot's owner only (docs/bots.md,
          // "Debug text"); the referee keeps at most 1,000 bytes of UTF-8 of it.
          d->set_debug("random: 1 of " + std::to_string(req.legal_actions_size()) + " actions; chose " +
                       action.label());
        }
        stream->Write(answer);
        break;
      }
      case pv1::RefereeMessage::kPing: {
        pv1::BotMessage pong;
        pong.mutable_pong()->set_nonce(msg.ping().nonce());
        stream->Write(pong);
        break;
      }
      case pv1::RefereeMessage::kMatchEnded:
        ++ended;
        log_line(o, "match " + std::to_string(msg.match_ended().match_id()) + " ended: " +
                        msg.match_ended().status());
        if (o.stop_after > 0 && ended >= o.stop_after) {
          stream->WritesDone();
          context.TryCancel();
          stream->Finish();
          return Outcome::kStopped;
        }
        break;
      case pv1::RefereeMessage::kDecisionRejected:
        log_line(o, "decision rejected: " + msg.decision_rejected().reason());
        break;
      case pv1::RefereeMessage::kError:
        log_line(o, "referee error: " + msg.error().message());
        if (msg.error().code() == pv1::ERROR_CODE_UNAUTHENTICATED) refused = true;
        break;
      default:
        break;  // MatchStarted, or a kind this build does not know: nothing to do
    }
  }
  const grpc::Status status = stream->Finish();
  if (refused || status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
      status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    return Outcome::kRefused;
  }
  log_line(o, "stream ended: " + status.error_message());
  return Outcome::kLost;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  std::mt19937 rng(o.seed);
  int ended = 0;
  double backoff_s = 0.2;
  while (true) {
    const int before = ended;
    switch (play(o, rng, ended)) {
      case Outcome::kStopped:
        return 0;
      case Outcome::kRefused:
        log_line(o, "the referee refused the token");
        return 2;
      case Outcome::kLost:
        if (!o.reconnect) return 1;
        break;
    }
    if (ended > before) backoff_s = 0.2;
    log_line(o, "reconnecting in " + std::to_string(backoff_s) + " s");
    std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
    backoff_s = std::min(10.0, backoff_s * 2);
  }
}
