package main

import (
	"math/rand"

	pb "github.com/parterre/parterre/proto/parterre/v1"
)

// Choose returns an index into req.LegalActions: simple heuristics on the typed
// actions, random among equals.
//
//	floriferous: the `take` with the most Stones (a face-up card before a
//	             face-down one), else random.
//	lafleur:     buy a Garden Feature or invite a Visitor when offered, else random.
//	flowar:      deliver a Contract when offered, else random.
//	other games: a uniform random legal index, so a new game on the ladder
//	             never stops the bot.
func Choose(req *pb.DecisionRequest, rng *rand.Rand) int {
	n := len(req.GetLegalActions())
	if n == 0 {
		return 0 // the referee never sends an empty list
	}
	var score func(*pb.LegalAction) int
	switch req.GetGame() {
	case "floriferous":
		score = floriferousScore
	case "lafleur":
		score = laFleurScore
	case "flowar":
		score = flowarScore
	}
	if score != nil {
		if best := bestIndices(req.GetLegalActions(), score); len(best) > 0 {
			return best[rng.Intn(len(best))]
		}
	}
	return rng.Intn(n)
}

// bestIndices lists the indices with the highest score (a negative score is no candidate).
func bestIndices(actions []*pb.LegalAction, score func(*pb.LegalAction) int) []int {
	var best []int
	top := -1
	for i, a := range actions {
		s := score(a)
		if s < 0 {
			continue
		}
		if s > top {
			top, best = s, best[:0]
		}
		if s == top {
			best = append(best, i)
		}
	}
	return best
}

func floriferousScore(a *pb.LegalAction) int {
	f := a.GetFloriferous()
	if f == nil || f.GetKind() != "take" {
		return -1
	}
	s := 2 * int(f.GetStones())
	if f.GetCard() != "" {
		s++
	}
	return s
}

func laFleurScore(a *pb.LegalAction) int {
	if k := a.GetLafleur().GetKind(); k == "buy_feature" || k == "invite" {
		return 1
	}
	return -1
}

func flowarScore(a *pb.LegalAction) int {
	if a.GetFlowar().GetKind() == "deliver" {
		return 1
	}
	return -1
}
