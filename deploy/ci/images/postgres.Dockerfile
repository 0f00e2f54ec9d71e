# CI stand-in for postgres:17-bookworm (deploy/ci/compose-e2e.sh): Debian's PostgreSQL 15 with an
# entrypoint that honours the official image's POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB
# and data directory, so docker-compose.yml's postgres service runs unchanged but for the image.
ARG BASE
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
USER postgres
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
