#!/usr/bin/env bash
# Takes the real captures under tests/data: a short load on the local MariaDB and
# PostgreSQL, sampled every 2 s in the results directory's capture format (a TS line,
# then the raw body; result sets as tab-separated tables with a header line).
# Re-run by hand only (it needs both servers on 127.0.0.1 and about a minute).
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)
db=bmk_analysis_capture_$$
samples=${SAMPLES:-6}
step=2

ts() {
  local now; now=$(date +%s.%N)
  printf 'TS %s %s\n' "$now" "$(date -u -d "@${now%.*}" '+%Y-%m-%d %H:%M:%S')"
}
my() { mariadb -uroot -B "$@"; }
pg() { psql -h 127.0.0.1 -U postgres -d "$db" -X -A -F $'\t' -P footer=off -P null=NULL "$@"; }

mkdir -p "$out/mariadb/server" "$out/mariadb/os" "$out/pgsql/server" "$out/pgsql/os"
rm -f "$out"/mariadb/server/*.txt "$out"/mariadb/os/*.txt "$out"/pgsql/server/*.txt "$out"/pgsql/os/*.txt

# --- MariaDB: a table and a procedure that reads and writes it in a loop.
my -e "CREATE DATABASE $db"
my "$db" <<'SQL'
CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, k INT, c CHAR(120), KEY(k)) ENGINE=InnoDB;
DELIMITER //
CREATE PROCEDURE load_it(n INT) BEGIN DECLARE i INT DEFAULT 0;
  WHILE i < n DO START TRANSACTION; INSERT INTO t (k, c) VALUES (i % 1000, REPEAT('x', 120));
  SELECT COUNT(*) INTO @c FROM t WHERE k = i % 1000;
  UPDATE t SET c = REPEAT('y', 120) WHERE k = (i * 7) % 1000 LIMIT 3;
  COMMIT; SET i = i + 1; END WHILE; END //
DELIMITER ;
SQL
{ ts; my -e 'SHOW GLOBAL VARIABLES'; } > "$out/mariadb/server/variables.txt"
mariadb -uroot -B "$db" -e "CALL load_it(40000)" & load=$!
for _ in $(seq "$samples"); do
  { ts; my -e 'SHOW GLOBAL STATUS'; } >> "$out/mariadb/server/global_status.txt"
  { ts; my -r -s -e 'SHOW ENGINE INNODB STATUS' | cut -f3-; } >> "$out/mariadb/server/innodb_status.txt"
  for f in loadavg stat diskstats; do
    { ts; cat /proc/$f; } >> "$out/mariadb/os/$f.txt"
  done
  { ts; cat /proc/$load/stat; } >> "$out/mariadb/os/client_stat.txt"
  sleep $step
done
kill $load 2>/dev/null || true; wait $load 2>/dev/null || true
my -e "DROP DATABASE $db"

# --- PostgreSQL: pgbench in its own database.
createdb -h 127.0.0.1 -U postgres "$db"
pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -n1)
"$pgbench" -h 127.0.0.1 -U postgres -i -s 2 -q "$db" >/dev/null 2>&1
{ ts; pg -c 'SELECT name, setting FROM pg_settings ORDER BY name'; } > "$out/pgsql/server/pg_settings.txt"
"$pgbench" -h 127.0.0.1 -U postgres -c 2 -j 2 -T $((samples * step + 2)) "$db" >/dev/null 2>&1 & load=$!
for i in $(seq "$samples"); do
  { ts; cat /proc/$load/stat; } >> "$out/pgsql/os/client_stat.txt"
  for f in stat diskstats loadavg; do { ts; cat /proc/$f; } >> "$out/pgsql/os/$f.txt"; done
  [ "$i" = 3 ] && psql -h 127.0.0.1 -U postgres -d "$db" -Xqc CHECKPOINT
  { ts; pg -c "SELECT * FROM pg_stat_database WHERE datname = current_database()"; } >> "$out/pgsql/server/pg_stat_database.txt"
  { ts; pg -c 'SELECT * FROM pg_stat_bgwriter'; } >> "$out/pgsql/server/pg_stat_bgwriter.txt"
  sleep $step
done
wait $load || true
dropdb -h 127.0.0.1 -U postgres "$db"
