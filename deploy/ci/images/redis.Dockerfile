# CI stand-in for redis:7.4-alpine (deploy/ci/compose-e2e.sh): Debian's Redis 7.0, data in /data.
ARG BASE
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o redis -g redis /data
WORKDIR /data
USER redis
CMD ["redis-server"]
