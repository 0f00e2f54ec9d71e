// Simple heuristics on the typed actions; random among equals (docs/bots.md).
//
//   floriferous: the `take` with the most Stones (a face-up card before a
//                face-down one), else random.
//   lafleur:     buy a Garden Feature or invite a Visitor when offered, else random.
//   flowar:      deliver a Contract when offered, else random.
//   other games: a uniform random legal index, so a new game on the ladder
//                never stops the bot.

/** A seeded PRNG (mulberry32): returns floats in [0, 1). */
export function makeRng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Per game: the score of an action (negative: not a candidate) and what the score prefers.
const SCORES = {
  floriferous: {
    prefers: 'most Stones',
    score: (a) => {
      const f = a.floriferous;
      if (!f || f.kind !== 'take') return -1;
      return 2 * f.stones + (f.card ? 1 : 0);
    },
  },
  lafleur: {
    prefers: 'a Garden Feature or a Visitor',
    score: (a) => (a.lafleur && ['buy_feature', 'invite'].includes(a.lafleur.kind) ? 1 : -1),
  },
  flowar: {
    prefers: 'deliver a Contract',
    score: (a) => (a.flowar && a.flowar.kind === 'deliver' ? 1 : -1),
  },
};

/**
 * The chosen legal action and why.
 *
 * @param {object} request a DecisionRequest as decoded by proto-loader
 *   (keepCase: `game`, `legal_actions[i].floriferous` ...).
 * @param {() => number} rng floats in [0, 1).
 * @returns {{index: number, debug: string}} an index into request.legal_actions, and the
 *   Decision's debug text: the bot's own notes on this decision, shown only to its owner
 *   (docs/bots.md, "Debug text"), e.g. "greedy: best of 7 actions, score 5 (most Stones),
 *   2 tied; chose take row 3: Pink Tulip (Beetle) +1 stone".
 */
export function choose(request, rng = Math.random) {
  const actions = request.legal_actions || [];
  if (actions.length === 0) return { index: 0, debug: '' }; // the referee never sends an empty list
  const n = actions.length;
  const label = (i) => actions[i].label;
  const rule = SCORES[request.game];
  if (rule) {
    let top = -1;
    let best = [];
    actions.forEach((a, i) => {
      const s = rule.score(a);
      if (s < 0) return;
      if (s > top) {
        top = s;
        best = [];
      }
      if (s === top) best.push(i);
    });
    if (best.length > 0) {
      const index = best[Math.floor(rng() * best.length)];
      const debug = `greedy: best of ${n} actions, score ${top} (${rule.prefers}), ${best.length} tied; chose ${label(index)}`;
      return { index, debug };
    }
  }
  const index = Math.floor(rng() * n);
  const why = rule ? `nothing offers ${rule.prefers}` : `${request.game} is a game this bot does not know`;
  return { index, debug: `random: 1 of ${n} actions (${why}); chose ${label(index)}` };
}
