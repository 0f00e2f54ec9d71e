"""A bot generated from the previous release's contract, in Node.js and in C++, plays a whole match
against today's referee (docs/bots.md, "Contract changes and releases"); the Python case is in
``test_contract_revision.py``.

Each bot (``tests/fixtures/released_contract/``) knows the contract only from the image
``proto/released/parterre-v1.binpb``: the Node.js bot loads it with
``protoLoader.loadFileDescriptorSetFromBuffer``, the C++ bot is compiled against stubs that
``protoc --descriptor_set_in`` generates from it (no .proto file on disk). The released
contract does not compile as C++ unchanged: ``LaFleurObservation.Player.hand_size`` clashes with
the ``hand_size()`` accessor of ``repeated hand`` (docs/bots.md, "Renames to the buf lint style");
a C++ author of that release had to rename it in their copy, so the test does the same, in the
image, and changes nothing else (the name is not on the wire: number and type stay). Its Hello names no
revision (the released Hello has no such field), and it answers each DecisionRequest with the
index of one of the legal actions listed (not always the first).

Oracles: the image itself (the bot prints the Hello fields it knows: the five of the released
contract), and the Floriferous engine's replay of the match, which must record, at each
of the old bot's turns, the very action the old bot says it chose, with no fallback — so a field of
Decision or DecisionRequest that today's referee reads at another number or type than the
release fails the test, as does a message the old bot cannot decode.

Skips when Node.js or the C++ toolchain is absent, and fails instead under ``CI=true``
(``fixtures.toolchains``); ``bash bots/install-toolchains.sh`` installs both. The C++ build
(about half a minute) is kept in the system's temporary folder, keyed by the image, the bot's source
and the compiler, and reused by later runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from fixtures.toolchains import missing as tool_missing
from google.protobuf import descriptor_pb2

from bots.reference import RandomBot
from proto.parterre.v1 import control_pb2 as control_pb
from referee.testing import Harness, replay_of

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "proto" / "released" / "parterre-v1.binpb"
BOTS = ROOT / "tests" / "fixtures" / "released_contract"
NODE_DIR = ROOT / "bots" / "node"
INSTALL = "bash bots/install-toolchains.sh"
TOKENS = {"tok-old": 1, "tok-today": 2}
# The released contract's files, named as in the image (it was built with the repository root as the include root).
FILES = ["proto/parterre/v1/referee.proto", "proto/parterre/v1/floriferous.proto",
         "proto/parterre/v1/lafleur.proto", "proto/parterre/v1/flowar.proto"]
RELEASED_HELLO = "hello token,bot_name,bot_version,games,max_concurrent_matches"


def _absent(tools: list[str]) -> list[str]:
    return [t for t in tools if shutil.which(t) is None]


@pytest.fixture(scope="module")
def node_old_bot() -> list[str]:
    """``node old_bot.cjs IMAGE bots/node/package.json``; runs ``npm ci`` in bots/node first when
    its node_modules is missing."""
    absent = _absent(["node", "npm"])
    if absent:
        tool_missing(f"Node.js toolchain absent ({', '.join(absent)} not found); install it with `{INSTALL}`")
    if not (NODE_DIR / "node_modules" / "@grpc" / "proto-loader").is_dir():
        run = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, f"npm ci failed:\n{run.stdout}\n{run.stderr}"
    return ["node", str(BOTS / "old_bot.cjs"), str(IMAGE), str(NODE_DIR / "package.json")]


def cpp_buildable(image: bytes) -> tuple[bytes, list[str]]:
    """``image`` with each field ``X_size`` renamed ``X_size_field`` where the same message has a
    ``repeated X`` (C++ generates ``X_size()`` for the latter), and what was renamed."""
    files = descriptor_pb2.FileDescriptorSet.FromString(image)
    renamed = []

    def visit(message: descriptor_pb2.DescriptorProto, scope: str) -> None:
        repeated = {f.name for f in message.field if f.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED}
        for field in message.field:
            if field.name.endswith("_size") and field.name[:-len("_size")] in repeated:
                renamed.append(f"{scope}.{message.name}.{field.name}")
                field.name += "_field"
                field.ClearField("json_name")
        for nested in message.nested_type:
            visit(nested, f"{scope}.{message.name}")

    for file in files.file:
        for message in file.message_type:
            visit(message, file.package)
    return files.SerializeToString(), renamed


def _cpp_flags() -> tuple[list[str], list[str]]:
    def pkg(*args: str) -> list[str]:
        return subprocess.run(["pkg-config", *args, "grpc++", "protobuf"], capture_output=True, text=True,
                              check=True).stdout.split()
    return pkg("--cflags"), pkg("--libs")


@pytest.fixture(scope="module")
def cpp_old_bot() -> list[str]:
    """The C++ bot built against stubs generated from the image (cached in the temporary folder)."""
    absent = _absent(["g++", "protoc", "grpc_cpp_plugin", "pkg-config"])
    if not absent and subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"]).returncode != 0:
        absent.append("libgrpc++-dev")
    if absent:
        tool_missing(f"C++ toolchain absent ({', '.join(absent)} not found); install it with `{INSTALL}`")
    cflags, libs = _cpp_flags()
    versions = [subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
                for tool in ("g++", "protoc")]
    key = hashlib.sha256(b"\0".join([IMAGE.read_bytes(), (BOTS / "old_bot.cc").read_bytes(),
                                     *(v.encode() for v in versions), " ".join(cflags + libs).encode()]))
    build = Path(tempfile.gettempdir()) / f"parterre-released-cpp-bot-{key.hexdigest()[:16]}"
    binary = build / "old_bot"
    if binary.is_file():
        return [str(binary)]
    work = Path(tempfile.mkdtemp(prefix=build.name + ".", dir=build.parent))
    try:
        patched, renamed = cpp_buildable(IMAGE.read_bytes())
        assert renamed in ([], ["parterre.v1.LaFleurObservation.Player.hand_size"]), renamed  # the clash of release 1
        (work / "released-for-cpp.binpb").write_bytes(patched)
        gen = subprocess.run(["protoc", "--descriptor_set_in=released-for-cpp.binpb",
                              f"--cpp_out={work}", f"--grpc_out={work}",
                              f"--plugin=protoc-gen-grpc={shutil.which('grpc_cpp_plugin')}", *FILES],
                             capture_output=True, text=True, timeout=60, cwd=work)  # no .proto file on disk here
        assert gen.returncode == 0, gen.stderr
        sources = [work / f.replace(".proto", ".pb.cc") for f in FILES]
        sources += [work / "proto/parterre/v1/referee.grpc.pb.cc", BOTS / "old_bot.cc"]
        compiled = subprocess.run(["g++", "-std=c++17", "-O0", "-w", f"-I{work}", *cflags, *map(str, sources),
                                   "-o", str(work / "old_bot"), *libs], capture_output=True, text=True, timeout=600)
        assert compiled.returncode == 0, compiled.stderr[-4000:]
        try:
            work.rename(build)
        except OSError:  # another run built it first
            assert binary.is_file()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [str(binary)]


async def _play(argv: list[str], cwd: Path) -> tuple[control_pb.MatchResult, list[str], str]:
    """The old bot (seat 1) against the SDK's random bot (seat 2) in one Floriferous match: the
    result, the old bot's output lines and the end of its stderr."""
    async with Harness(TOKENS) as h:
        h.start_bot(RandomBot(seed=2), "tok-today")
        proc = await asyncio.create_subprocess_exec(*argv, h.address, "tok-old", cwd=cwd,
                                                    env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            await h.wait_sessions(1, timeout_s=20)
            await h.wait_sessions(2, timeout_s=20)
            result = await h.run_match(901, "floriferous(players=2)", [1, 2], cap_ms=5000)
            stdout, stderr = await asyncio.wait_for(proc.communicate(), 30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    assert proc.returncode == 0, (stdout.decode()[-2000:], stderr.decode()[-2000:])
    return result, stdout.decode().splitlines(), stderr.decode()[-2000:]


def _check(result: control_pb.MatchResult, lines: list[str], stderr: str) -> None:
    assert result.status == "finished", result
    assert [s.verdict for s in result.seats] == ["normal", "normal"], result
    assert lines[0] == RELEASED_HELLO, lines  # the released Hello: no contract_revision, so the bot names none
    assert lines[1] == "welcome 1" and lines[-1] == "ended finished normal,normal", (lines, stderr)
    chosen = [line.split(" ", 2)[2] for line in lines if line.startswith("chose ")]
    mine = [step for step in replay_of(result)["steps"] if step["player"] == 0]
    assert chosen and not any(step["fallback"] for step in mine), mine
    assert [step["label"] for step in mine] == chosen
    assert len(set(chosen)) > 1  # not always the first action


async def test_a_node_bot_loading_only_the_previous_release_plays_a_match_against_todays_referee(node_old_bot,
                                                                                                  tmp_path):
    _check(*await _play(node_old_bot, tmp_path))


async def test_a_cpp_bot_generated_from_the_previous_release_plays_a_match_against_todays_referee(cpp_old_bot,
                                                                                                   tmp_path):
    _check(*await _play(cpp_old_bot, tmp_path))
