// The Java Parterre bot: one Referee.Connect stream over Debian's gRPC-Java
// (libgrpc-java, Netty transport) and protobuf-java; a uniformly random legal
// action for every DecisionRequest of any game (docs/bots.md section 1), with
// a debug text saying so ("random: 1 of 7 actions; chose take row 3: Pink
// Tulip (Beetle) +1 stone": the bot's own notes, shown only to its owner;
// "Debug text").
//
//   java -cp build/classes:$(make -s classpath) org.parterre.bot.Bot [--address HOST:PORT] [--token=T]
//        [--name N] [--version V] [--max-matches N] [--stop-after N] [--seed S]
//
// Defaults come from PARTERRE_BOT_TOKEN and PARTERRE_REFEREE_ADDRESS (else
// 127.0.0.1:50051). Exit status: 0 after --stop-after matches, 2 for bad
// arguments or a refused token, 1 when the stream failed. Typed access for a
// strategy: req.getLegalActions(i).getFloriferous(), ...
package org.parterre.bot;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.parterre.v1.BotMessage;
import org.parterre.v1.Decision;
import org.parterre.v1.DecisionRequest;
import org.parterre.v1.ErrorCode;
import org.parterre.v1.Hello;
import org.parterre.v1.LegalAction;
import org.parterre.v1.Pong;
import org.parterre.v1.RefereeGrpc;
import org.parterre.v1.RefereeMessage;

public final class Bot {
  /**
   * This process's random id, sent in every Hello (docs/bots.md, "Reconnecting"): a new stream with it
   * takes over the matches of this process's earlier stream at once, even a half-open one.
   */
  private static final String INSTANCE_ID = UUID.randomUUID().toString();
  /** The contract revision this bot was written against (docs/bots.md, "Contract revisions"). */
  private static final int CONTRACT_REVISION = 3;

  private Bot() {}

  public static void main(String[] argv) throws InterruptedException {
    String address = System.getenv().getOrDefault("PARTERRE_REFEREE_ADDRESS", "127.0.0.1:50051");
    if (address.isEmpty()) address = "127.0.0.1:50051";
    String token = System.getenv().getOrDefault("PARTERRE_BOT_TOKEN", "");
    String name = "java-random";
    String version = "1";
    int maxMatches = 1;
    int stopAfter = 0;
    long seed = System.nanoTime();
    try {
      for (int i = 0; i < argv.length; i++) {
        String arg = argv[i];
        String value;
        int eq = arg.indexOf('=');
        if (eq >= 0) {
          value = arg.substring(eq + 1);
          arg = arg.substring(0, eq);
        } else {
          value = i + 1 < argv.length ? argv[++i] : "";
        }
        switch (arg) {
          case "--address": address = value; break;
          case "--token": token = value; break;
          case "--name": name = value; break;
          case "--version": version = value; break;
          case "--max-matches": maxMatches = Math.max(1, Integer.parseInt(value)); break;
          case "--stop-after": stopAfter = Integer.parseInt(value); break;
          case "--seed": seed = Long.parseLong(value); break;
          default:
            System.err.println("unknown option " + arg);
            System.exit(2);
        }
      }
    } catch (NumberFormatException e) {
      System.err.println("bad number: " + e.getMessage());
      System.exit(2);
    }
    if (token.isEmpty()) {
      System.err.println("a bot token is required: --token=T or PARTERRE_BOT_TOKEN");
      System.exit(2);
    }
    System.exit(play(address, token, name, version, maxMatches, stopAfter, new Random(seed)));
  }

  private static int play(String address, String token, String name, String version, int maxMatches,
                          int stopAfter, Random rng) throws InterruptedException {
    ManagedChannel channel = NettyChannelBuilder.forTarget(address).usePlaintext()
        .maxInboundMessageSize(64 << 20).build();
    CountDownLatch done = new CountDownLatch(1);
    AtomicInteger exit = new AtomicInteger(1);
    AtomicInteger ended = new AtomicInteger();
    final StreamObserver<BotMessage>[] out = new StreamObserver[1];
    out[0] = RefereeGrpc.newStub(channel).connect(new StreamObserver<RefereeMessage>() {
      @Override public void onNext(RefereeMessage msg) {
        switch (msg.getKindCase()) {
          case WELCOME:
            System.err.println(name + ": connected as bot " + msg.getWelcome().getBotId() + ", waiting for matches");
            for (String notice : msg.getWelcome().getNoticesList()) System.err.println(name + ": referee: " + notice);
            break;
          case DECISION_REQUEST: {
            DecisionRequest req = msg.getDecisionRequest();
            Decision.Builder d = Decision.newBuilder().setMatchId(req.getMatchId()).setSeq(req.getSeq());
            if (req.getLegalActionsCount() > 0) {
              LegalAction action = req.getLegalActions(rng.nextInt(req.getLegalActionsCount()));
              d.setActionIndex(action.getIndex());
              // This decision's notes, kept beside its step for the bot's owner only (docs/bots.md,
              // "Debug text"); the referee keeps at most 1,000 bytes of UTF-8 of it.
              d.setDebug("random: 1 of " + req.getLegalActionsCount() + " actions; chose " + action.getLabel());
            }
            synchronized (out) {
              out[0].onNext(BotMessage.newBuilder().setDecision(d).build());
            }
            break;
          }
          case PING:
            synchronized (out) {
              out[0].onNext(BotMessage.newBuilder().setPong(Pong.newBuilder().setNonce(msg.getPing().getNonce())).build());
            }
            break;
          case MATCH_ENDED:
            System.err.println(name + ": match " + msg.getMatchEnded().getMatchId() + " ended: "
                + msg.getMatchEnded().getStatus());
            if (stopAfter > 0 && ended.incrementAndGet() >= stopAfter) {
              exit.set(0);
              synchronized (out) {
                out[0].onCompleted();
              }
              done.countDown();
            }
            break;
          case ERROR:
            System.err.println(name + ": referee error: " + msg.getError().getMessage());
            if (msg.getError().getCode() == ErrorCode.ERROR_CODE_UNAUTHENTICATED) exit.set(2);
            break;
          default:
            break;  // MatchStarted, DecisionRejected, or a kind this build does not know
        }
      }

      @Override public void onError(Throwable t) {
        Status s = Status.fromThrowable(t);
        if (s.getCode() == Status.Code.UNAUTHENTICATED || s.getCode() == Status.Code.PERMISSION_DENIED) exit.set(2);
        if (exit.get() != 0) System.err.println(name + ": stream ended: " + s);
        done.countDown();
      }

      @Override public void onCompleted() {
        done.countDown();
      }
    });
    synchronized (out) {
      out[0].onNext(BotMessage.newBuilder().setHello(Hello.newBuilder().setToken(token).setBotName(name)
          .setBotVersion(version).setMaxConcurrentMatches(maxMatches).setInstanceId(INSTANCE_ID)
          .setContractRevision(CONTRACT_REVISION)).build());
    }
    done.await();
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    return exit.get();
  }
}
