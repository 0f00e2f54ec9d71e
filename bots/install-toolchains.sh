#!/usr/bin/env bash
# Installs and builds what the bots in other languages need, so that
# tests/bots/test_polyglot.py runs instead of skipping (docs/bots.md):
#
#   * Node.js and npm (Debian's nodejs/npm, only when `node`/`npm` is missing),
#     then `npm ci` in bots/node from the committed package-lock.json;
#   * Go with Debian's packaged gRPC and protobuf (GOPATH mode, no module
#     downloads), protoc and its Go plugins, then `make` in bots/go;
#   * C++: g++, Debian's libgrpc++-dev, libprotobuf-dev and grpc_cpp_plugin,
#     then `make` in bots/cpp;
#   * Java: a JDK, Debian's libgrpc-java (with Netty and PerfMark, which it
#     does not pull in itself), libprotobuf-java and grpc_java_plugin, then
#     `make` in bots/java.
#
# Idempotent: installed packages are skipped, `npm ci` reinstalls the locked
# versions, `make` rebuilds only what changed. Needs root (or sudo) when a
# package is missing. Usage: bash bots/install-toolchains.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Go: golang-github-golang-protobuf-1-5-dev (not golang-goprotobuf-dev, whose
# 1.3 runtime cannot marshal the messages protoc-gen-go 1.28 generates).
packages=(make protobuf-compiler golang-go golang-google-grpc-dev golang-google-protobuf-dev
          golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc
          g++ pkg-config libprotobuf-dev libgrpc++-dev protobuf-compiler-grpc
          libprotobuf-java libgrpc-java protobuf-compiler-grpc-java-plugin libnetty-java libperfmark-java
          libguava-java)
command -v javac >/dev/null || packages+=(default-jdk-headless)
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-toolchains: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "install-toolchains: npm ci in bots/node"
(cd bots/node && npm ci --no-audit --no-fund --loglevel=error)

echo "install-toolchains: building the Go bot"
make -C bots/go --no-print-directory

echo "install-toolchains: building the C++ bot"
make -C bots/cpp --no-print-directory

echo "install-toolchains: building the Java bot"
make -C bots/java --no-print-directory

echo "install-toolchains: node $(node --version), $(go version | cut -d' ' -f3), bots/go/build/parterre-go-bot, bots/cpp/build/parterre-cpp-bot and bots/java/build/classes ready"
