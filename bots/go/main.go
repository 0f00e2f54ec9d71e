// Command parterre-go-bot is a Parterre bot in Go (docs/bots.md, "Go").
//
// One Referee.Connect stream: Hello, then an index and a debug text (why it
// chose: docs/bots.md, "Debug text") for every DecisionRequest, a Pong for
// every Ping, and a reconnect with backoff when the stream ends.
// Matches interleave on the one stream; a decision takes microseconds, so one
// goroutine serves them all.
//
//	parterre-go-bot --token T [--address HOST:PORT] [--name NAME] [--version V]
//	                [--max-matches N] [--stop-after N] [--seed S] [--no-reconnect]
//
// Defaults come from PARTERRE_BOT_TOKEN and PARTERRE_REFEREE_ADDRESS (else
// 127.0.0.1:50051). Exit status: 0 after --stop-after matches, 2 for bad
// arguments or a refused token, 1 when the stream failed and --no-reconnect
// was given.
package main

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	pb "github.com/parterre/parterre/proto/parterre/v1"
)

type options struct {
	address, token, name, version string
	maxMatches, stopAfter         int
	seed                          int64
	reconnect                     bool
}

// instanceID is this process's random id, sent in every Hello (docs/bots.md, "Reconnecting"): a new
// stream with it takes over the matches of this process's earlier stream at once, even a half-open one.
var instanceID = newInstanceID()

// The contract revision this bot was written against (docs/bots.md, "Contract revisions").
const contractRevision = 3

func newInstanceID() string {
	b := make([]byte, 8)
	if _, err := crand.Read(b); err != nil {
		return fmt.Sprintf("%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b)
}

type outcome int

const (
	stopped outcome = iota // --stop-after reached
	refused                // token refused: never retried
	lost                   // stream ended or failed: reconnect
)

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func parseFlags() options {
	var o options
	noReconnect := false
	flag.StringVar(&o.address, "address", env("PARTERRE_REFEREE_ADDRESS", "127.0.0.1:50051"), "referee host:port")
	flag.StringVar(&o.token, "token", env("PARTERRE_BOT_TOKEN", ""), "the bot's token")
	flag.StringVar(&o.name, "name", "go-bot", "name shown on the ladder")
	flag.StringVar(&o.version, "version", "1", "version shown on the ladder")
	flag.IntVar(&o.maxMatches, "max-matches", 1, "matches played at once")
	flag.IntVar(&o.stopAfter, "stop-after", 0, "exit after this many finished matches (0: never)")
	flag.Int64Var(&o.seed, "seed", time.Now().UnixNano(), "seed of the random choices")
	flag.BoolVar(&noReconnect, "no-reconnect", false, "exit when the stream ends instead of reconnecting")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "parterre-go-bot: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	if o.token == "" {
		fmt.Fprintln(os.Stderr, "parterre-go-bot: a token is required: --token T or PARTERRE_BOT_TOKEN")
		os.Exit(2)
	}
	if o.maxMatches < 1 {
		o.maxMatches = 1
	}
	o.reconnect = !noReconnect
	return o
}

// play runs one connection until the stream ends or --stop-after is reached.
func play(o options, rng *rand.Rand, ended *int, welcomed *bool) outcome {
	conn, err := grpc.Dial(o.address, grpc.WithInsecure(),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 5 * time.Second, PermitWithoutStream: true}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		log.Printf("%s: cannot dial %s: %v", o.name, o.address, err)
		return lost
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := pb.NewRefereeClient(conn).Connect(ctx)
	if err != nil {
		log.Printf("%s: cannot open the stream: %v", o.name, err)
		return lost
	}
	hello := &pb.Hello{Token: o.token, BotName: o.name, BotVersion: o.version,
		Games: []string{"floriferous", "lafleur", "flowar"}, MaxConcurrentMatches: int32(o.maxMatches),
		InstanceId: instanceID, ContractRevision: contractRevision}
	if err := stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Hello{Hello: hello}}); err != nil {
		log.Printf("%s: cannot send Hello: %v", o.name, err)
	}
	stopping := false
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			if stopping {
				return stopped
			}
			log.Printf("%s: the referee closed the stream", o.name)
			return lost
		}
		if err != nil {
			if stopping {
				return stopped
			}
			if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
				log.Printf("%s: token refused: %v", o.name, status.Convert(err).Message())
				return refused
			}
			log.Printf("%s: stream ended: %v", o.name, err)
			return lost
		}
		switch k := msg.GetKind().(type) {
		case *pb.RefereeMessage_DecisionRequest:
			req := k.DecisionRequest
			i, debug := Choose(req, rng)
			index := int32(i)
			// Debug: this decision's notes, kept beside its step for the bot's owner only
			// (docs/bots.md, "Debug text"); the referee keeps at most 1,000 bytes of UTF-8 of it.
			d := &pb.Decision{MatchId: req.GetMatchId(), Seq: req.GetSeq(), ActionIndex: &index, Debug: debug}
			_ = stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Decision{Decision: d}}) // a broken stream shows in Recv
		case *pb.RefereeMessage_Ping:
			_ = stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Pong{Pong: &pb.Pong{Nonce: k.Ping.GetNonce()}}})
		case *pb.RefereeMessage_Welcome:
			*welcomed = true
			log.Printf("%s: connected to %s as bot %d", o.name, o.address, k.Welcome.GetBotId())
			for _, notice := range k.Welcome.GetNotices() {
				log.Printf("%s: referee: %s", o.name, notice)
			}
		case *pb.RefereeMessage_MatchStarted:
			m := k.MatchStarted
			log.Printf("%s: match %d started: %s, seat %d", o.name, m.GetMatchId(), m.GetGameString(), m.GetSeat())
		case *pb.RefereeMessage_MatchEnded:
			m := k.MatchEnded
			log.Printf("%s: match %d ended (%s, %s)", o.name, m.GetMatchId(), m.GetStatus(), m.GetReason())
			*ended++
			if o.stopAfter > 0 && *ended >= o.stopAfter && !stopping {
				stopping = true
				_ = stream.CloseSend() // the referee ends the stream when it reads the end
			}
		case *pb.RefereeMessage_DecisionRejected:
			log.Printf("%s: decision rejected: %s", o.name, k.DecisionRejected.GetReason())
		case *pb.RefereeMessage_Error:
			log.Printf("%s: referee error: %s", o.name, k.Error.GetMessage())
		default:
			// a message kind added after this bot was built
		}
	}
}

func main() {
	log.SetFlags(log.Ltime)
	o := parseFlags()
	rng := rand.New(rand.NewSource(o.seed))
	ended := 0
	backoff := 200 * time.Millisecond
	for {
		welcomed := false
		switch play(o, rng, &ended, &welcomed) {
		case stopped:
			return
		case refused:
			os.Exit(2)
		}
		if !o.reconnect {
			os.Exit(1)
		}
		if welcomed {
			backoff = 200 * time.Millisecond
		}
		time.Sleep(backoff)
		if backoff *= 2; backoff > 10*time.Second {
			backoff = 10 * time.Second
		}
	}
}
