"""Regenerate the Python stubs of every ``.proto`` file in ``proto/parterre/v1``.

Usage::

    python -m proto.generate            # rewrite the committed stubs in place
    python -m proto.generate --out DIR  # write them under DIR instead (tests)

``proto/`` is the include path (the root of the buf module, ``buf.yaml``), so
``referee.proto`` imports ``"parterre/v1/floriferous.proto"`` as in every
other language. Python imports the stubs as ``proto.parterre.v1.referee_pb2``,
``referee_pb2_grpc``, ``floriferous_pb2``, ... because a top-level
``parterre`` package is the CLI: protoc's ``from parterre.v1 import ...`` lines
are rewritten to ``from proto.parterre.v1 import ...`` (the descriptors keep
the file names ``parterre/v1/X.proto``). For each ``X.proto`` this writes ``X_pb2.py``, ``X_pb2.pyi`` and
``X_pb2_grpc.py`` with the ``protoc`` bundled in ``grpcio-tools`` (a dev
dependency), so the output depends only on that package's version.
``tests/proto/test_proto_stubs.py`` regenerates into a temporary directory and fails
when the committed stubs differ.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""Repository root: stubs are written under ``ROOT/proto/parterre/v1``."""
INCLUDE = ROOT / "proto"
"""The include path for ``protoc`` (``import "parterre/v1/X.proto"``)."""
PROTO_DIR = ROOT / "proto" / "parterre" / "v1"
"""Folder holding the ``.proto`` files and, beside them, their stubs."""


class GenerateError(RuntimeError):
    """``protoc`` failed; the message carries its exit status."""


def proto_files() -> list[Path]:
    """The ``.proto`` files to compile, sorted, as paths relative to :data:`ROOT`."""
    return sorted(p.relative_to(ROOT) for p in PROTO_DIR.glob("*.proto"))


def stub_names(proto: Path) -> list[str]:
    """File names of the stubs generated for ``proto`` (``X_pb2.py`` ...)."""
    stem = proto.stem
    return [f"{stem}_pb2.py", f"{stem}_pb2.pyi", f"{stem}_pb2_grpc.py"]


def generate(out: Path | None = None) -> list[Path]:
    """Compile every ``.proto`` in ``proto/parterre/v1``.

    Args:
        out: output root (the package path ``proto/parterre/v1`` is created
            under it); default :data:`ROOT`, i.e. in place.

    Returns:
        Paths of the generated stub files.

    Raises:
        GenerateError: ``protoc`` reported an error (printed on stderr).
    """
    # the type: ignore below: a dev dependency without type information; imported here on purpose
    from grpc_tools import protoc  # type: ignore[import-untyped]

    out = ROOT if out is None else Path(out)
    files = proto_files()
    target = out / "proto" / "parterre" / "v1"
    target.mkdir(parents=True, exist_ok=True)
    well_known = str(resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{INCLUDE}",
            f"-I{well_known}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *[str(ROOT / f) for f in files],
        ]
        status = protoc.main(args)
        if status != 0:
            raise GenerateError(f"protoc exited with status {status}")
        written = []
        for f in files:
            for name in stub_names(f):
                text = (Path(tmp) / "parterre" / "v1" / name).read_text(encoding="utf-8")
                text = text.replace("from parterre.v1 import ", "from proto.parterre.v1 import ")
                (target / name).write_text(text, encoding="utf-8")
                written.append(target / name)
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m proto.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="output root (default: in place)")
    ns = parser.parse_args(argv)
    try:
        written = generate(ns.out)
    except GenerateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
