// Unit tests of strategy.js: `npm test` (node:test, no extra packages).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { choose, makeRng } from './strategy.js';

const take = (stones, card = 'F01') => ({ floriferous: { kind: 'take', stones, card } });

test('floriferous: the take with the most Stones', () => {
  const request = { game: 'floriferous', legal_actions: [take(0), take(2), take(1), { floriferous: { kind: 'move_empty' } }] };
  assert.equal(choose(request, makeRng(1)), 1);
});

test('an unknown game gets a random legal index', () => {
  const request = { game: 'not-a-game-yet', legal_actions: [{}, {}, {}] };
  const rng = makeRng(7);
  const seen = new Set(Array.from({ length: 60 }, () => choose(request, rng)));
  assert.deepEqual([...seen].sort(), [0, 1, 2]);
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
