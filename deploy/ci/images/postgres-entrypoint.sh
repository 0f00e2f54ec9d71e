#!/bin/sh
# First start: initdb with POSTGRES_USER as superuser (password POSTGRES_PASSWORD, scram over TCP,
# trust on the container's own socket), create POSTGRES_DB; then run the server (args passed on).
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ "${1:-postgres}" = postgres ]; then
  [ $# -gt 0 ] && shift
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}" >"$pwfile"
    initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" -E UTF8 --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
    printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
      psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "docker-entrypoint: initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
  fi
  exec postgres -D "$PGDATA" "$@"
fi
exec "$@"
