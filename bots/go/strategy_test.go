package main

import (
	"math/rand"
	"testing"

	pb "github.com/parterre/parterre/proto/parterre/v1"
)

func take(stones int32, card string) *pb.LegalAction {
	return &pb.LegalAction{Typed: &pb.LegalAction_Floriferous{Floriferous: &pb.FloriferousAction{Kind: "take", Stones: stones, Card: card}}}
}

func TestFloriferousTakesTheMostStones(t *testing.T) {
	req := &pb.DecisionRequest{Game: "floriferous", LegalActions: []*pb.LegalAction{take(0, "F01"), take(2, ""), take(2, "F02"), take(1, "F03")}}
	if got := Choose(req, rand.New(rand.NewSource(1))); got != 2 {
		t.Fatalf("Choose = %d, want 2 (2 Stones and a face-up card)", got)
	}
}

func TestUnknownGameGetsEveryLegalIndex(t *testing.T) {
	req := &pb.DecisionRequest{Game: "not-a-game-yet", LegalActions: []*pb.LegalAction{{}, {}, {}}}
	rng := rand.New(rand.NewSource(7))
	seen := map[int]bool{}
	for i := 0; i < 60; i++ {
		got := Choose(req, rng)
		if got < 0 || got > 2 {
			t.Fatalf("Choose = %d, out of range", got)
		}
		seen[got] = true
	}
	if len(seen) != 3 {
		t.Fatalf("saw %v, want all of 0, 1, 2", seen)
	}
}
