package main

import (
	"math/rand"
	"regexp"
	"testing"

	pb "github.com/parterre/parterre/proto/parterre/v1"
)

func take(stones int32, card string, label string) *pb.LegalAction {
	return &pb.LegalAction{Label: label, Typed: &pb.LegalAction_Floriferous{Floriferous: &pb.FloriferousAction{Kind: "take", Stones: stones, Card: card}}}
}

func TestFloriferousTakesTheMostStonesAndSaysWhy(t *testing.T) {
	req := &pb.DecisionRequest{Game: "floriferous", LegalActions: []*pb.LegalAction{
		take(0, "F01", "take row 1"), take(2, "", "take row 2"), take(2, "F02", "take row 3"), take(1, "F03", "take row 4")}}
	got, debug := Choose(req, rand.New(rand.NewSource(1)))
	if got != 2 {
		t.Fatalf("Choose = %d, want 2 (2 Stones and a face-up card)", got)
	}
	if want := "greedy: best of 4 actions, score 5 (most Stones), 1 tied; chose take row 3"; debug != want {
		t.Fatalf("debug = %q, want %q", debug, want)
	}
}

func TestFlowarWithoutADeliveryIsRandomAndSaysSo(t *testing.T) {
	place := func(label string) *pb.LegalAction {
		return &pb.LegalAction{Label: label, Typed: &pb.LegalAction_Flowar{Flowar: &pb.FlowarAction{Kind: "place"}}}
	}
	req := &pb.DecisionRequest{Game: "flowar", LegalActions: []*pb.LegalAction{place("a"), place("b")}}
	got, debug := Choose(req, rand.New(rand.NewSource(3)))
	if want := "random: 1 of 2 actions (nothing offers deliver a Contract); chose " + []string{"a", "b"}[got]; debug != want {
		t.Fatalf("debug = %q, want %q", debug, want)
	}
}

func TestUnknownGameGetsEveryLegalIndex(t *testing.T) {
	req := &pb.DecisionRequest{Game: "not-a-game-yet", LegalActions: []*pb.LegalAction{{Label: "x"}, {Label: "y"}, {Label: "z"}}}
	rng := rand.New(rand.NewSource(7))
	seen := map[int]bool{}
	says := regexp.MustCompile(`^random: 1 of 3 actions \(not-a-game-yet is a game this bot does not know\); chose [xyz]$`)
	for i := 0; i < 60; i++ {
		got, debug := Choose(req, rng)
		if got < 0 || got > 2 {
			t.Fatalf("Choose = %d, out of range", got)
		}
		if !says.MatchString(debug) {
			t.Fatalf("debug = %q", debug)
		}
		seen[got] = true
	}
	if len(seen) != 3 {
		t.Fatalf("saw %v, want all of 0, 1, 2", seen)
	}
}
