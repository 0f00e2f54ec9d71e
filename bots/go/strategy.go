package main

import (
	"fmt"
	"math/rand"

	pb "github.com/parterre/parterre/proto/parterre/v1"
)

// Choose returns an index into req.LegalActions and the Decision's debug text
// (why it chose: the bot's own notes, shown only to its owner; docs/bots.md,
// "Debug text"). Simple heuristics on the typed actions, random among equals.
//
//	floriferous: the `take` with the most Stones (a face-up card before a
//	             face-down one), else random.
//	lafleur:     buy a Garden Feature or invite a Visitor when offered, else random.
//	flowar:      deliver a Contract when offered, else random.
//	other games: a uniform random legal index, so a new game on the ladder
//	             never stops the bot.
//
// The text reads, e.g., "greedy: best of 7 actions, score 5 (most Stones), 2
// tied; chose take row 3: Pink Tulip (Beetle) +1 stone" or "random: 1 of 7
// actions (nothing offers deliver a Contract); chose ...".
func Choose(req *pb.DecisionRequest, rng *rand.Rand) (int, string) {
	actions := req.GetLegalActions()
	n := len(actions)
	if n == 0 {
		return 0, "" // the referee never sends an empty list
	}
	rule, known := rules[req.GetGame()]
	if known {
		if best, top := bestIndices(actions, rule.score); len(best) > 0 {
			i := best[rng.Intn(len(best))]
			return i, fmt.Sprintf("greedy: best of %d actions, score %d (%s), %d tied; chose %s",
				n, top, rule.prefers, len(best), actions[i].GetLabel())
		}
	}
	why := req.GetGame() + " is a game this bot does not know"
	if known {
		why = "nothing offers " + rule.prefers
	}
	i := rng.Intn(n)
	return i, fmt.Sprintf("random: 1 of %d actions (%s); chose %s", n, why, actions[i].GetLabel())
}

// rule is one game's heuristic: the score of an action (negative: no
// candidate) and what the score prefers, in words.
type rule struct {
	score   func(*pb.LegalAction) int
	prefers string
}

var rules = map[string]rule{
	"floriferous": {floriferousScore, "most Stones"},
	"lafleur":     {laFleurScore, "a Garden Feature or a Visitor"},
	"flowar":      {flowarScore, "deliver a Contract"},
}

// bestIndices lists the indices with the highest score, and that score (a negative score is no candidate).
func bestIndices(actions []*pb.LegalAction, score func(*pb.LegalAction) int) ([]int, int) {
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
	return best, top
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
