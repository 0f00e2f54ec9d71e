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

const SCORES = {
  floriferous: (a) => {
    const f = a.floriferous;
    if (!f || f.kind !== 'take') return -1;
    return 2 * f.stones + (f.card ? 1 : 0);
  },
  lafleur: (a) => (a.lafleur && ['buy_feature', 'invite'].includes(a.lafleur.kind) ? 1 : -1),
  flowar: (a) => (a.flowar && a.flowar.kind === 'deliver' ? 1 : -1),
};

/**
 * The index of the chosen legal action.
 *
 * @param {object} request a DecisionRequest as decoded by proto-loader
 *   (keepCase: `game`, `legal_actions[i].floriferous` ...).
 * @param {() => number} rng floats in [0, 1).
 * @returns {number} an index into request.legal_actions.
 */
export function choose(request, rng = Math.random) {
  const actions = request.legal_actions || [];
  if (actions.length === 0) return 0; // the referee never sends an empty list
  const score = SCORES[request.game];
  if (score) {
    let top = -1;
    let best = [];
    actions.forEach((a, i) => {
      const s = score(a);
      if (s < 0) return;
      if (s > top) {
        top = s;
        best = [];
      }
      if (s === top) best.push(i);
    });
    if (best.length > 0) return best[Math.floor(rng() * best.length)];
  }
  return Math.floor(rng() * actions.length);
}
