# CI stand-in for prom/prometheus (deploy/ci/compose-e2e.sh): Debian's Prometheus 2.42 and
# promtool, with wget for docker-compose.yml's health check; data in /prometheus.
ARG BASE
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends prometheus wget \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o prometheus -g prometheus /prometheus
WORKDIR /prometheus
USER prometheus
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
