"""``proto/breaking.sh`` can fail: a change that breaks the wire is caught, not waved through.

The oracle is the protobuf wire format itself: changing a field's type from ``int32`` to ``string``
changes its wire type (varint → length-delimited), so every deployed bot would misread it; ``buf
breaking`` (WIRE rules) must report it and the script must exit 1 naming it NOT ACCEPTED. The same
copy without the change passes, so the failure is the change's.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from fixtures.toolchains import missing

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / ".ci" / "buf" / "node_modules" / ".bin" / "buf"


def _contract_copy(tmp: Path) -> Path:
    if not BUF.exists():
        missing("buf is not installed (.ci/run installs it: npm install --prefix .ci/buf @bufbuild/buf)")
    shutil.copy(ROOT / "buf.yaml", tmp / "buf.yaml")
    shutil.copytree(ROOT / "proto", tmp / "proto", ignore=shutil.ignore_patterns("*_pb2*", "__pycache__", "*.py"))
    shutil.copy(ROOT / "proto" / "breaking.sh", tmp / "proto" / "breaking.sh")
    return tmp


def _run(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(tree / "proto" / "breaking.sh"), str(BUF)], capture_output=True, text=True,
                          timeout=120)


def test_the_released_contract_passes(tmp_path: Path) -> None:
    done = _run(_contract_copy(tmp_path))
    assert done.returncode == 0, done.stderr


def test_a_field_whose_wire_type_changes_is_not_accepted(tmp_path: Path) -> None:
    tree = _contract_copy(tmp_path)
    proto = tree / "proto" / "parterre" / "v1" / "referee.proto"
    text = proto.read_text()
    assert text.count("  int32 seat = 1;") == 1
    proto.write_text(text.replace("  int32 seat = 1;", "  string seat = 1;"))
    done = _run(tree)
    assert done.returncode == 1
    assert "NOT ACCEPTED" in done.stderr and "seat" in done.stderr, done.stderr
