"""Regenerate the Python stubs of every ``.proto`` file in ``proto/parterre/v1``.

Usage::

    python -m proto.generate            # rewrite the committed stubs in place
    python -m proto.generate --out DIR  # write them under DIR instead (tests)

The repository root is the include path, so ``referee.proto`` imports
``"proto/parterre/v1/floriferous.proto"`` and the generated modules are
``proto.parterre.v1.referee_pb2``, ``referee_pb2_grpc``, ``floriferous_pb2``, ...
(DESIGN §3). For each ``X.proto`` this writes ``X_pb2.py``, ``X_pb2.pyi`` and
``X_pb2_grpc.py`` with the ``protoc`` bundled in ``grpcio-tools`` (a dev
dependency), so the output depends only on that package's version.
``tests/test_proto_stubs.py`` regenerates into a temporary directory and fails
when the committed stubs differ.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""Repository root: the include path for ``protoc``."""
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
    # a dev dependency without type information; imported here on purpose
    from grpc_tools import protoc  # type: ignore[import-untyped]

    out = ROOT if out is None else Path(out)
    files = proto_files()
    (out / "proto" / "parterre" / "v1").mkdir(parents=True, exist_ok=True)
    well_known = str(resources.files("grpc_tools") / "_proto")
    args = [
        "grpc_tools.protoc",
        f"-I{ROOT}",
        f"-I{well_known}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        *[str(f) for f in files],
    ]
    status = protoc.main(args)
    if status != 0:
        raise GenerateError(f"protoc exited with status {status}")
    return [out / f.parent / name for f in files for name in stub_names(f)]


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
