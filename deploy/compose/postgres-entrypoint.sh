#!/bin/sh
# First start: a cluster whose superuser password is $POSTGRES_PASSWORD (password logins only
# from the network) and the database $POSTGRES_DB. Then PostgreSQL in the foreground.
set -eu
bin=/usr/lib/postgresql/15/bin
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
  pw="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pw"
  "$bin/initdb" -D "$PGDATA" -U postgres --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pw"
  printf 'host all all 0.0.0.0/0 scram-sha-256\nhost all all ::/0 scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  "$bin/psql" -v ON_ERROR_STOP=1 -U postgres -d postgres -c "create database \"${POSTGRES_DB:-rpcctl}\"" >/dev/null
  "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*'
