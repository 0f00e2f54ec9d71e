"""Bots in any language against one referee (docs/bots.md).

Given a referee (in-process, real gRPC over loopback) and six bots — the
Python random bot (SDK), the Node.js bot (bots/node), the Go bot (bots/go),
the C++ bot (bots/cpp), the Java bot (bots/java) and a stdio bot
(bots/examples/random_bot.py behind ``parterre connect``) — when they play a
round-robin in every registered game (every pair, plus one match with as many
of them as the game seats), then every match finishes ``normal`` for every
seat, and the Node and Go bots also play a game they do not know.

Each example in another language is welcomed without a contract notice (it
names the referee's own contract revision) and sends a debug text with every
decision (docs/bots.md, "Debug text"): the referee must hand back one note per
decision of that seat, at the step the decision made, saying in the example's
own words how many legal actions there were and which it chose. The oracle is
the rules engine, replaying the match: the number of legal actions at that
step and the label of the action the replay records there.

Skips only when Node.js, the Go, C++ or Java toolchain is absent, and fails instead
under ``CI=true`` (``fixtures.toolchains``); ``bash
bots/install-toolchains.sh`` installs both. A present toolchain whose build
fails is a failure, not a skip.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.toolchains import missing as tool_missing
from fixtures.toy_game import register_toy

from bots.reference import RandomBot
from games.registry import game_class, game_names
from games.replay import replay_game
from proto.parterre.v1 import control_pb2 as control_pb
from referee.testing import Harness, replay_of

register_toy()

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "bots" / "node"
GO_DIR = ROOT / "bots" / "go"
GO_BOT = GO_DIR / "build" / "parterre-go-bot"
CPP_DIR = ROOT / "bots" / "cpp"
CPP_BOT = CPP_DIR / "build" / "parterre-cpp-bot"
JAVA_DIR = ROOT / "bots" / "java"
INSTALL = "bash bots/install-toolchains.sh"

REAL_GAMES = [g for g in game_names() if game_class(g).__module__.startswith("games.")]
BOTS = {"python": 1, "node": 2, "go": 3, "cpp": 5, "java": 6, "stdio": 4}
TOKENS = {f"tok-{name}": bot_id for name, bot_id in BOTS.items()}
TC = {"base_ms": 0, "increment_ms": 0, "cap_ms": 3000, "margin_ms": 250}

# The debug text of each example (docs/bots.md, "Debug text"): the Node.js and Go bots say why
# they chose (their heuristic's best score, or why they fell back to a random action), the C++
# and Java bots that they chose at random; every text ends with the chosen action's label.
GREEDY = re.compile(r"greedy: best of (?P<n>\d+) actions, score \d+ \([^()]+\), (?P<tied>\d+) tied; "
                    r"chose (?P<label>.+)")
RANDOM = re.compile(r"random: 1 of (?P<n>\d+) actions(?: \([^()]+\))?; chose (?P<label>.+)")
DEBUG_FORMS = {"node": (GREEDY, RANDOM), "go": (GREEDY, RANDOM), "cpp": (RANDOM,), "java": (RANDOM,)}


def _missing(tools: list[str]) -> list[str]:
    return [t for t in tools if shutil.which(t) is None]


@pytest.fixture(scope="module")
def node_bot() -> list[str]:
    """``node bots/node/bot.js``; runs ``npm ci`` first when node_modules is missing."""
    missing = _missing(["node", "npm"])
    if missing:
        tool_missing(f"Node.js toolchain absent ({', '.join(missing)} not found); install it with `{INSTALL}`")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        run = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, f"npm ci failed:\n{run.stdout}\n{run.stderr}"
    return ["node", str(NODE_DIR / "bot.js")]


@pytest.fixture(scope="module")
def go_bot() -> list[str]:
    """``bots/go/build/parterre-go-bot``, built (or brought up to date) with make."""
    missing = _missing(["go", "make", "protoc", "protoc-gen-go", "protoc-gen-go-grpc"])
    if not Path("/usr/share/gocode/src/google.golang.org/grpc").is_dir():
        missing.append("golang-google-grpc-dev")
    if missing:
        tool_missing(f"Go toolchain absent ({', '.join(missing)} not found); install it with `{INSTALL}`")
    check = subprocess.run(["make", "-s", "-C", str(GO_DIR), "check-tools"], capture_output=True, text=True,
                           timeout=60)
    if check.returncode != 0:  # e.g. the protobuf 1.3 runtime, which would panic at the first message
        pytest.fail(f"bots/go: make check-tools: {check.stderr.strip()}", pytrace=False)
    run = subprocess.run(["make", "-C", str(GO_DIR)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"make -C bots/go failed:\n{run.stdout}\n{run.stderr}"
    return [str(GO_BOT)]


@pytest.fixture(scope="module")
def cpp_bot() -> list[str]:
    """``bots/cpp/build/parterre-cpp-bot``, built (or brought up to date) with make."""
    missing = _missing(["g++", "make", "protoc", "grpc_cpp_plugin", "pkg-config"])
    if not missing and subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        missing.append("libgrpc++-dev")
    if missing:
        tool_missing(f"C++ toolchain absent ({', '.join(missing)} not found); install it with `{INSTALL}`")
    run = subprocess.run(["make", "-C", str(CPP_DIR)], capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, f"make -C bots/cpp failed:\n{run.stdout}\n{run.stderr}"
    return [str(CPP_BOT)]


@pytest.fixture(scope="module")
def java_bot() -> list[str]:
    """``java -cp ... org.parterre.bot.Bot`` (bots/java), built with make from Debian's gRPC-Java."""
    missing = _missing(["java", "javac", "make", "protoc", "grpc_java_plugin"])
    if missing:
        tool_missing(f"Java toolchain absent ({', '.join(missing)} not found); install it with `{INSTALL}`")
    check = subprocess.run(["make", "-s", "-C", str(JAVA_DIR), "check-tools"], capture_output=True, text=True,
                           timeout=60)
    if check.returncode != 0:
        tool_missing(f"bots/java: {check.stderr.strip()}; install it with `{INSTALL}`")
    run = subprocess.run(["make", "-C", str(JAVA_DIR)], capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, f"make -C bots/java failed:\n{run.stdout}\n{run.stderr}"
    classpath = subprocess.run(["make", "-s", "-C", str(JAVA_DIR), "classpath"], capture_output=True, text=True,
                               timeout=60).stdout.strip()
    return ["java", "-cp", classpath, "org.parterre.bot.Bot"]


class Processes:
    """Bot processes started by a test; all stopped at the end."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: dict[str, asyncio.subprocess.Process] = {}

    async def start(self, name: str, argv: list[str]) -> None:
        log = open(self.log_dir / f"{name}.log", "wb")  # noqa: SIM115 - the child holds it
        self.procs[name] = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            env={**os.environ, "PARTERRE_HOME": str(self.log_dir / "home")})
        log.close()

    def log(self, name: str) -> str:
        return (self.log_dir / f"{name}.log").read_text(errors="replace")

    async def wait(self, timeout_s: float) -> dict[str, int | None]:
        """Exit status of every process (None: still running after ``timeout_s``)."""
        async def one(proc: asyncio.subprocess.Process) -> int | None:
            try:
                return await asyncio.wait_for(proc.wait(), timeout_s)
            except TimeoutError:
                return None
        codes = await asyncio.gather(*(one(p) for p in self.procs.values()))
        return dict(zip(self.procs, codes, strict=True))

    def kill(self) -> None:
        for proc in self.procs.values():
            if proc.returncode is None:
                proc.kill()


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    procs = Processes(tmp_path)
    yield procs
    procs.kill()


def _debug_problems(result: control_pb.MatchResult, seat: int, name: str) -> list[str]:
    """What is wrong with the debug notes the referee kept of ``seat``, played by the ``name`` bot.

    An example of :data:`DEBUG_FORMS` must have exactly one note per decision, at the step that
    decision made, in one of its forms, naming as many actions as the engine lists as legal before
    that step and the label of the action the replay records there; any other bot (it sends no
    debug text) must have none.
    """
    notes = {n.step: n.text for n in result.seats[seat].debug_notes}
    where = f"{name} (seat {seat}) in match {result.match_id}"
    if name not in DEBUG_FORMS:
        return [f"{where}: notes {sorted(notes.items())[:3]} from a bot that sends none"] if notes else []
    replay = replay_of(result)
    game = replay_game(replay)
    state = game.new_initial_state()
    problems = []
    for step in replay["steps"]:
        if step["player"] == seat and not step["fallback"]:
            text = notes.pop(step["i"], None)
            m = None if text is None else next(filter(None, (f.fullmatch(text) for f in DEBUG_FORMS[name])), None)
            legal = len(state.legal_actions())
            if text is None:
                problems.append(f"{where}, step {step['i']}: no note beside this decision")
            elif m is None:
                problems.append(f"{where}, step {step['i']}: note {text!r} is not in the example's form")
            elif (int(m["n"]), m["label"]) != (legal, step["label"]) or int(m.groupdict().get("tied") or 1) > legal:
                problems.append(f"{where}, step {step['i']}: note {text!r}, but the engine lists {legal} legal "
                                f"actions and the replay records {step['label']!r}")
        state.apply_action(game.action_from_json(step["action"]))
    if notes:
        problems.append(f"{where}: notes at steps that are not its decisions: {sorted(notes)}")
    return problems


def _welcomed_without_notice(log: str) -> bool:
    """The bot logged its Welcome and no contract notice (each example logs every notice as ``referee: ...``)."""
    return "connected" in log and "referee: " not in log


def _schedule(game: str) -> list[list[str]]:
    """Every pair of bots once, plus one match with all of them (when the game seats that many)."""
    info = game_class(game).INFO
    names = list(BOTS)
    matches = [list(pair) for pair in itertools.combinations(names, 2)] if info.min_players <= 2 else []
    k = min(info.max_players, len(names))
    if k > 2:
        matches.append(names[1:k] + names[:1])  # as many as the game seats, the SDK bot last
    return matches


async def test_round_robin_in_every_game_between_python_node_go_cpp_java_and_stdio_bots_with_their_debug_text(
        node_bot, go_bot, cpp_bot, java_bot, processes):
    schedule = {game: _schedule(game) for game in REAL_GAMES}
    per_bot = {name: sum(name in seats for m in schedule.values() for seats in m) for name in BOTS}
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=1, name="python-random", max_concurrent_matches=4), "tok-python")
        common = ["--address", h.address, "--max-matches", "4"]
        await processes.start("node", [*node_bot, *common, "--token", "tok-node", "--seed", "2",
                                       "--stop-after", str(per_bot["node"])])
        await processes.start("go", [*go_bot, *common, "--token", "tok-go", "--seed", "3",
                                     "--stop-after", str(per_bot["go"])])
        await processes.start("cpp", [*cpp_bot, *common, "--token=tok-cpp", "--seed", "5",
                                      "--stop-after", str(per_bot["cpp"])])
        await processes.start("java", [*java_bot, *common, "--token=tok-java", "--seed", "6",
                                       "--stop-after", str(per_bot["java"])])
        stdio_cmd = shlex.join([sys.executable, str(ROOT / "bots" / "examples" / "random_bot.py")])
        await processes.start("stdio", [sys.executable, "-m", "parterre.cli", "connect", "--exec", stdio_cmd,
                                        "--token", "tok-stdio", *common, "--name", "stdio-python",
                                        "--log-dir", str(processes.log_dir / "stdio-children"),
                                        "--stop-after", str(per_bot["stdio"])])
        for name, bot_id in BOTS.items():
            try:
                await h.wait_sessions(bot_id, timeout_s=30)
            except TimeoutError:
                pytest.fail(f"the {name} bot did not connect:\n{processes.log(name) if name != 'python' else ''}")
        match_id = itertools.count(1)
        results = {}
        for game, matches in schedule.items():
            # A bot is in up to 6 of a game's matches at once and declares 4 (--max-matches): the rest wait
            # for a free slot, longer than the default 3 s no-show window on a loaded machine.
            runs = [(game, seats, h.run_match(next(match_id), f"{game}(players={len(seats)})",
                                              [BOTS[n] for n in seats], no_show_timeout_ms=30000, **TC))
                    for seats in matches]
            for (g, seats, _), result in zip(runs, await asyncio.gather(*(r[2] for r in runs)), strict=True):
                results[(g, tuple(seats))] = result
        codes = await processes.wait(30)
    problems = [f"{game} {seats}: {r.status} {[s.verdict for s in r.seats]} {r.reason}"
                for (game, seats), r in results.items()
                if r.status != "finished" or any(s.verdict != "normal" for s in r.seats)]
    assert not problems, "\n".join(problems) + "".join(f"\n--- {n}.log\n{processes.log(n)[-3000:]}" for n in
                                                       processes.procs)
    assert {g for g, _ in results} == set(REAL_GAMES)
    assert codes == {"node": 0, "go": 0, "cpp": 0, "java": 0, "stdio": 0}, {n: processes.log(n)[-2000:] for n in codes}
    debug = [p for (_, seats), r in results.items() for seat, name in enumerate(seats)
             for p in _debug_problems(r, seat, name)]
    assert not debug, "\n".join(debug[:20]) + f"\n({len(debug)} in all)"
    noticed = [n for n in DEBUG_FORMS if not _welcomed_without_notice(processes.log(n))]
    assert not noticed, {n: processes.log(n)[:2000] for n in noticed}  # its Hello names an older or newer revision


async def test_node_and_go_bots_play_a_game_they_do_not_know(node_bot, go_bot, processes):
    async with Harness(TOKENS) as h:
        for name, argv in (("node", node_bot), ("go", go_bot)):
            await processes.start(name, [*argv, "--address", h.address, "--token", f"tok-{name}",
                                         "--stop-after", "2"])
        await h.wait_sessions(BOTS["node"], timeout_s=30)
        await h.wait_sessions(BOTS["go"], timeout_s=30)
        # "toy" is a test game: no typed messages, JSON only; both bots fall back to a random legal index.
        results = [await h.run_match(50 + i, "toy(players=2,turns=6)", seats, **TC)
                   for i, seats in enumerate(([2, 3], [3, 2]))]
        codes = await processes.wait(30)
    assert all(r.status == "finished" and [s.verdict for s in r.seats] == ["normal"] * 2 for r in results), results
    assert codes == {"node": 0, "go": 0}
    names = {bot_id: name for name, bot_id in BOTS.items()}
    debug = [p for r, seats in zip(results, ([2, 3], [3, 2]), strict=True) for seat, bot_id in enumerate(seats)
             for p in _debug_problems(r, seat, names[bot_id])]
    assert not debug, "\n".join(debug[:20])
    assert all(RANDOM.fullmatch(n.text) for r in results for s in r.seats for n in s.debug_notes)  # no heuristic


def test_node_bot_unit_tests(node_bot):
    run = subprocess.run(["npm", "test", "--silent"], cwd=NODE_DIR, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_go_bot_unit_tests_and_vet(go_bot):
    run = subprocess.run(["make", "-C", str(GO_DIR), "test", "vet"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
