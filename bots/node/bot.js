#!/usr/bin/env node
// parterre-node-bot: a Parterre bot in Node.js (docs/bots.md, "Node.js").
//
// Loads the repository's .proto files at run time (@grpc/proto-loader), keeps
// one Referee.Connect stream open: Hello, then an index and a debug text (why
// it chose: docs/bots.md, "Debug text") for every DecisionRequest, a Pong for
// every Ping, and a reconnect with backoff when the stream ends.
//
//   node bot.js --token T [--address HOST:PORT] [--name NAME] [--version V]
//               [--max-matches N] [--stop-after N] [--seed S] [--no-reconnect]
//               [--proto-root DIR]
//
// Defaults come from PARTERRE_BOT_TOKEN and PARTERRE_REFEREE_ADDRESS (else
// 127.0.0.1:50051); --proto-root (or PARTERRE_PROTO_ROOT) is the folder that
// holds parterre/v1/ (the include root of the .proto files), by default
// the repository's proto/ folder.
// Exit status: 0 after --stop-after matches, 2 for bad arguments or a refused
// token, 1 when the stream failed and --no-reconnect was given.
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import { choose, makeRng } from './strategy.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
// One random id for this process, sent in every Hello (docs/bots.md, "Reconnecting"): a new stream
// with it takes over the matches of this process's earlier stream at once, even a half-open one.
const INSTANCE_ID = randomBytes(8).toString('hex');
// The contract revision this bot was written against (docs/bots.md, "Contract revisions").
const CONTRACT_REVISION = 3;

function fail(message) {
  process.stderr.write(`parterre-node-bot: ${message}\n`);
  process.exit(2);
}

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        address: { type: 'string', default: process.env.PARTERRE_REFEREE_ADDRESS || '127.0.0.1:50051' },
        token: { type: 'string', default: process.env.PARTERRE_BOT_TOKEN || '' },
        name: { type: 'string', default: 'node-bot' },
        version: { type: 'string', default: '1' },
        'max-matches': { type: 'string', default: '1' },
        'stop-after': { type: 'string', default: '0' },
        seed: { type: 'string' },
        'no-reconnect': { type: 'boolean', default: false },
        'proto-root': { type: 'string', default: process.env.PARTERRE_PROTO_ROOT || path.resolve(HERE, '..', '..', 'proto') },
      },
    }));
  } catch (err) {
    fail(err.message);
  }
  const int = (flag) => {
    const v = Number(values[flag]);
    if (!Number.isInteger(v) || v < 0) fail(`--${flag} expects a non-negative integer, got ${values[flag]}`);
    return v;
  };
  if (!values.token) fail('a token is required: --token T or PARTERRE_BOT_TOKEN');
  return {
    address: values.address,
    token: values.token,
    name: values.name,
    version: values.version,
    maxMatches: Math.max(1, int('max-matches')),
    stopAfter: int('stop-after'),
    seed: values.seed === undefined ? (Date.now() ^ process.pid) >>> 0 : int('seed'),
    reconnect: !values['no-reconnect'],
    protoRoot: values['proto-root'],
  };
}

/** The parterre.v1 package, from referee.proto and the game files it imports. */
function loadProtos(root) {
  const definition = protoLoader.loadSync('parterre/v1/referee.proto', {
    includeDirs: [root],
    keepCase: true, // field names as in the .proto: match_id, legal_actions
    longs: Number, // int64 ids and milliseconds fit in a double
    enums: String,
    defaults: true, // unset scalars read as 0 / "" / false
    oneofs: true, // msg.kind names the field that is set
  });
  return grpc.loadPackageDefinition(definition).parterre.v1;
}

const log = (name, text) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${name}: ${text}\n`);

/** One connection: resolves with 'stopped', 'refused' or 'lost'. */
function play(pb, opts, state) {
  return new Promise((resolve) => {
    const client = new pb.Referee(opts.address, grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 10000,
      'grpc.keepalive_timeout_ms': 5000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.max_receive_message_length': 64 << 20,
    });
    const call = client.Connect();
    let stopping = false;
    let done = false;
    const finish = (how) => {
      if (done) return;
      done = true;
      client.close();
      resolve(how);
    };
    call.write({
      hello: {
        token: opts.token,
        bot_name: opts.name,
        bot_version: opts.version,
        games: ['floriferous', 'lafleur', 'flowar'],
        max_concurrent_matches: opts.maxMatches,
        instance_id: INSTANCE_ID,
        contract_revision: CONTRACT_REVISION,
      },
    });
    call.on('data', (msg) => {
      switch (msg.kind) {
        case 'decision_request': {
          const req = msg.decision_request;
          const { index, debug } = choose(req, state.rng);
          // debug: this decision's notes, kept beside its step for the bot's owner only (docs/bots.md,
          // "Debug text"); the referee keeps at most 1,000 bytes of UTF-8 of it.
          call.write({ decision: { match_id: req.match_id, seq: req.seq, action_index: index, debug } });
          break;
        }
        case 'ping':
          call.write({ pong: { nonce: msg.ping.nonce } });
          break;
        case 'welcome':
          state.welcomed = true;
          log(opts.name, `connected to ${opts.address} as bot ${msg.welcome.bot_id}`);
          for (const notice of msg.welcome.notices || []) log(opts.name, `referee: ${notice}`);
          break;
        case 'match_started':
          log(opts.name, `match ${msg.match_started.match_id} started: ${msg.match_started.game_string}, seat ${msg.match_started.seat}`);
          break;
        case 'match_ended':
          log(opts.name, `match ${msg.match_ended.match_id} ended (${msg.match_ended.status}, ${msg.match_ended.reason})`);
          state.ended += 1;
          if (opts.stopAfter > 0 && state.ended >= opts.stopAfter && !stopping) {
            stopping = true;
            call.end(); // the referee ends the stream when it reads the end
          }
          break;
        case 'decision_rejected':
          log(opts.name, `decision rejected: ${msg.decision_rejected.reason}`);
          break;
        case 'error':
          log(opts.name, `referee error: ${msg.error.message}`);
          break;
        default:
          break; // a message kind added after this bot was written
      }
    });
    call.on('error', (err) => {
      if (stopping) return finish('stopped');
      if (err.code === grpc.status.UNAUTHENTICATED || err.code === grpc.status.PERMISSION_DENIED) {
        log(opts.name, `token refused: ${err.details}`);
        return finish('refused');
      }
      log(opts.name, `stream ended: ${err.details || err.message}`);
      return finish('lost');
    });
    call.on('end', () => finish(stopping ? 'stopped' : 'lost'));
  });
}

async function main() {
  const opts = options();
  const pb = loadProtos(opts.protoRoot);
  const state = { rng: makeRng(opts.seed), ended: 0, welcomed: false };
  let backoffMs = 200;
  for (;;) {
    state.welcomed = false;
    const how = await play(pb, opts, state);
    if (how === 'stopped') return 0;
    if (how === 'refused') return 2;
    if (!opts.reconnect) return 1;
    if (state.welcomed) backoffMs = 200;
    await new Promise((r) => setTimeout(r, backoffMs));
    backoffMs = Math.min(10000, backoffMs * 2);
  }
}

main().then((code) => process.exit(code));
