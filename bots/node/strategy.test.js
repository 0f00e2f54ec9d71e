// Unit tests of strategy.js: `npm test` (node:test, no extra packages).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { choose, makeRng } from './strategy.js';

const take = (stones, card = 'F01', row = 1) => ({ label: `take row ${row}`, floriferous: { kind: 'take', stones, card } });

test('floriferous: the take with the most Stones, and why', () => {
  const request = {
    game: 'floriferous',
    legal_actions: [take(0), take(2, 'F02', 2), take(1), { label: 'move empty', floriferous: { kind: 'move_empty' } }],
  };
  assert.deepEqual(choose(request, makeRng(1)), {
    index: 1,
    debug: 'greedy: best of 4 actions, score 5 (most Stones), 1 tied; chose take row 2',
  });
});

test('flowar: random when no Contract can be delivered, and it says so', () => {
  const request = { game: 'flowar', legal_actions: [{ label: 'a', flowar: { kind: 'place' } }, { label: 'b', flowar: { kind: 'take_loan' } }] };
  const { index, debug } = choose(request, makeRng(3));
  assert.equal(debug, `random: 1 of 2 actions (nothing offers deliver a Contract); chose ${'ab'[index]}`);
});

test('an unknown game gets a random legal index', () => {
  const request = { game: 'not-a-game-yet', legal_actions: [{ label: 'x' }, { label: 'y' }, { label: 'z' }] };
  const rng = makeRng(7);
  const seen = new Set(Array.from({ length: 60 }, () => choose(request, rng).index));
  assert.deepEqual([...seen].sort(), [0, 1, 2]);
  assert.match(choose(request, rng).debug, /^random: 1 of 3 actions \(not-a-game-yet is a game this bot does not know\); chose [xyz]$/);
});

test('makeRng is seeded and stays in [0, 1)', () => {
  const a = makeRng(42);
  const b = makeRng(42);
  for (let i = 0; i < 100; i += 1) {
    const x = a();
    assert.equal(x, b());
    assert.ok(x >= 0 && x < 1);
  }
});
