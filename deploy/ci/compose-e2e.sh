#!/usr/bin/env bash
# CI stage "compose e2e": build the Parterre image and run the whole compose stack
# in Docker, then play tournaments against it and kill -9 containers under load
# (docs/deploy.md "The compose stage of CI"; README "Run it distributed").
#
#   bash deploy/ci/compose-e2e.sh            # from the repository root, as root
#
# 1. a Docker engine: the running one, or `dockerd --iptables=false --ip6tables=false
#    --storage-driver=overlay2` (vfs where overlay2 fails) started here; host networking only;
# 2. Compose v2 and buildx: Debian's packages (the docker-compose and docker-buildx of trixie;
#    bookworm has only Compose v1), unpacked as CLI plugins under the cache, not installed;
# 3. base images bootstrapped from Debian packages (debootstrap + docker import), cached under
#    $PARTERRE_CI_CACHE keyed by a hash of what goes in; images for Python, PostgreSQL, Redis
#    and Prometheus built on it from deploy/ci/images/ (no image registry is reachable here);
# 4. the Parterre image built from deploy/Dockerfile (unchanged: only its PYTHON_IMAGE argument
#    differs) by `docker compose build`, and the stack brought up with
#    docker-compose.yml + deploy/ci/docker-compose.ci.yml;
# 5. deploy/ci/e2e.py: tournaments, leaderboard, Prometheus, a hosted bot uploaded, validated in a
#    worker container's sandbox and playing a rated match (e2e_hosted.py), kill -9 of a worker and a referee
#    container mid-tournament, exactly-once checks, ratings == `parterre ratings rebuild`;
# 6. a short report, then the stack is taken down (logs kept under $PARTERRE_CI_LOGS).
#
# Exit status: 0 passed, or skipped because no Docker engine can be started at all (the reason is
# printed); 1 anything else failed. With CI=true there is no skip for a failed build or run.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

CACHE=${PARTERRE_CI_CACHE:-/var/cache/parterre-ci}
LOGS=${PARTERRE_CI_LOGS:-/var/log/parterre-ci}
SUITE=bookworm
PROJECT=parterre-ci
STAGE_T0=$(date +%s)
mkdir -p "$CACHE" "$LOGS"

say() { printf 'compose-e2e: %s\n' "$*"; }
skip() { say "SKIPPED: $*"; exit 0; }
fail() { say "FAILED: $*"; exit 1; }
t_since() { echo $(( $(date +%s) - $1 )); }

# The Debian mirror: the one the machine's apt sources name.
mirror() {
  local m
  m=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
      | grep -v -i security | grep -o -E 'https?://[^ ]+/debian/?' | head -1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}
MIRROR=$(mirror)

# -- 1. the engine ---------------------------------------------------------------------------
engine_up() { timeout 10 docker info >/dev/null 2>&1; }

start_engine() {
  if engine_up; then say "Docker engine: already running"; return 0; fi
  if [ "$(id -u)" -ne 0 ]; then skip "no Docker engine runs and this is not root: none can be started"; fi
  if ! command -v dockerd >/dev/null; then
    if command -v apt-get >/dev/null; then
      say "installing Debian's docker.io (engine)"
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        docker.io >"$LOGS/apt-docker.log" 2>&1) || skip "docker.io could not be installed (see $LOGS/apt-docker.log)"
    else
      skip "no dockerd and no apt-get: no Docker engine can be started"
    fi
  fi
  # overlay2 where the kernel and the file system under /var/lib/docker allow it, else vfs (which
  # copies every layer whole: the build and the stack then take several times longer and ~15 GB).
  local driver
  for driver in overlay2 vfs; do
    say "starting dockerd --iptables=false --ip6tables=false --storage-driver=$driver (log $LOGS/dockerd.log)"
    setsid dockerd --iptables=false --ip6tables=false --storage-driver=$driver --pidfile /var/run/docker.pid \
      >>"$LOGS/dockerd.log" 2>&1 < /dev/null &
    local pid=$!
    for _ in $(seq 60); do
      engine_up && return 0
      kill -0 $pid 2>/dev/null || break
      sleep 1
    done
    kill $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    say "dockerd with $driver did not come up"
  done
  tail -20 "$LOGS/dockerd.log" || true
  skip "dockerd did not come up with overlay2 or vfs (tail of its log above)"
}

# -- 2. Compose v2 and buildx from Debian's packages ------------------------------------------
APT_T="$CACHE/apt-trixie"
aptt() {
  apt-get -q -o Dir::Etc::SourceList="$APT_T/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
    -o Dir::State::Lists="$APT_T/lists" -o Dir::Cache="$APT_T" -o Dir::Cache::Archives="$APT_T" \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}
cli_plugins() {
  export DOCKER_CONFIG="$CACHE/docker-config"
  local plugins="$DOCKER_CONFIG/cli-plugins"
  if [ -x "$plugins/docker-compose" ] && [ -x "$plugins/docker-buildx" ]; then return 0; fi
  say "fetching Compose v2 and buildx: Debian packages docker-compose, docker-buildx (trixie)"
  mkdir -p "$APT_T/lists/partial" "$APT_T/partial" "$plugins"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main" >"$APT_T/sources.list"
  (cd "$APT_T" && aptt update >"$LOGS/apt-trixie.log" 2>&1 && aptt download docker-compose docker-buildx >>"$LOGS/apt-trixie.log" 2>&1) \
    || fail "could not fetch docker-compose/docker-buildx from Debian (see $LOGS/apt-trixie.log)"
  rm -rf "$APT_T/x"
  for deb in "$APT_T"/docker-compose_*.deb "$APT_T"/docker-buildx_*.deb; do dpkg-deb -x "$deb" "$APT_T/x"; done
  cp "$APT_T"/x/usr/libexec/docker/cli-plugins/docker-{compose,buildx} "$plugins/"
}

# -- 3. base images ---------------------------------------------------------------------------
HOST_CA=/etc/ssl/certs/ca-certificates.crt
BASE_SPEC="debootstrap --variant=minbase $SUITE $MIRROR; ca=$(sha256sum "$HOST_CA" 2>/dev/null | cut -c1-16); v1"
BASE_KEY=$(printf '%s' "$BASE_SPEC" | sha256sum | cut -c1-12)
BASE_IMAGE="parterre-ci/debian:$SUITE-$BASE_KEY"

base_image() {
  if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then say "base image $BASE_IMAGE: cached in the engine"; return; fi
  local tarball="$CACHE/debian-$SUITE-$BASE_KEY.tar"
  if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends debootstrap >"$LOGS/apt-debootstrap.log" 2>&1) \
      || fail "debootstrap could not be installed"
    local dir="$CACHE/rootfs-$BASE_KEY" t0; t0=$(date +%s)
    rm -rf "$dir"
    say "debootstrap --variant=minbase $SUITE from $MIRROR (log $LOGS/debootstrap.log)"
    nice -n 10 debootstrap --variant=minbase "$SUITE" "$dir" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 \
      || { tail -20 "$LOGS/debootstrap.log"; fail "debootstrap failed"; }
    # The machine's CA bundle (its TLS may be intercepted): pip inside image builds needs it.
    install -D -m 0644 "$HOST_CA" "$dir/usr/local/share/parterre-ci/ca-bundle.crt"
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
    tar -C "$dir" -c . >"$tarball.part" && mv "$tarball.part" "$tarball"
    rm -rf "$dir"
    say "debootstrap: $(t_since "$t0") s"
  fi
  docker import "$tarball" "$BASE_IMAGE" >/dev/null
  say "base image $BASE_IMAGE imported from $tarball"
}

ci_images() {
  local name t0
  for name in python postgres redis prometheus; do
    t0=$(date +%s)
    nice -n 10 docker buildx build --progress=plain --network host --build-arg BASE="$BASE_IMAGE" \
      -f "deploy/ci/images/$name.Dockerfile" -t "parterre-ci/$name:$BASE_KEY" deploy/ci/images \
      >"$LOGS/image-$name.log" 2>&1 || { tail -30 "$LOGS/image-$name.log"; fail "CI image $name did not build"; }
    say "CI image parterre-ci/$name:$BASE_KEY ($(t_since "$t0") s)"
  done
}

# -- main -------------------------------------------------------------------------------------
start_engine
cli_plugins
docker compose version >/dev/null 2>&1 || fail "docker compose (v2) does not run"
say "$(docker version --format 'engine {{.Server.Version}}, client {{.Client.Version}}'), $(docker compose version)"
base_image
ci_images

export PARTERRE_CI_IMAGE_TAG=$BASE_KEY
# The Python driver does the rest; it needs only the standard library.
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
set +e
nice -n 5 "$PY" deploy/ci/e2e.py --project "$PROJECT" --logs "$LOGS" "$@"
rc=$?
set -e
say "stage took $(t_since "$STAGE_T0") s in all"
[ $rc -eq 0 ] || fail "the compose end-to-end run failed (exit $rc); container logs in $LOGS"
say "passed"
