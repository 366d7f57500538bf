//! `bmk-null-client`: the round-trip floor client (see `bmk_null_server::floor`).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use bmk_null_server::floor::workload::Workload;
use bmk_null_server::floor::{run, FloorConfig};
use bmk_null_server::server::Kind;

const HELP: &str = "\
bmk-null-client: the round-trip floor of a benchmark client

Sends the requests of an OLTP event (prepared statements; BEGIN/COMMIT as text) over N
connections, one request in flight per connection, all on one thread, reading each
reply only as far as finding its end. Meant against bmk-null-server: what it reaches
is the most events per second the kernel's round trips allow on this machine.

Usage: bmk-null-client (--mysql-port P | --pgsql-port Q) [options]

  --mysql-port P     MySQL server on 127.0.0.1:P
  --pgsql-port Q     PostgreSQL server on 127.0.0.1:Q
  --connections N    connections (default 8)
  --time S           seconds to run (default 10)
  --workload W       oltp_point_select (default), oltp_read_only, oltp_read_write, or
                     connect: each event opens a connection, logs in as sbtest with
                     password sbtest into database sbtest, and closes it cleanly
                     (COM_QUIT or Terminate); N connections in flight
  --range-size R     ids per range select (default 100)
  --report-interval S  print `[ Ns ] tps: R` (events/s of the last S seconds) every
                     S seconds, as bmk and sysbench do

Prints `events: E`, `queries: Q` (0 for connect), `time: T` and `events/s: R`.
";

fn main() {
    if let Err(e) = client() {
        eprintln!("bmk-null-client: {e:#}");
        std::process::exit(1);
    }
}

fn client() -> anyhow::Result<()> {
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_env();
    let (mut port, mut protocol) = (None, Kind::Mysql);
    let (mut connections, mut time, mut workload, mut range) =
        (8usize, 10f64, Workload::PointSelect, 100i32);
    let mut report_interval: Option<f64> = None;
    while let Some(arg) = p.next()? {
        match arg {
            Short('h') | Long("help") => {
                print!("{HELP}");
                return Ok(());
            }
            Long("mysql-port") => port = Some(p.value()?.parse::<u16>()?),
            Long("pgsql-port") => {
                port = Some(p.value()?.parse::<u16>()?);
                protocol = Kind::Pgsql;
            }
            Long("connections") => connections = p.value()?.parse()?,
            Long("time") => time = p.value()?.parse()?,
            Long("range-size") => range = p.value()?.parse()?,
            Long("report-interval") => report_interval = Some(p.value()?.parse()?),
            Long("workload") => {
                let v = p.value()?.string()?;
                workload =
                    Workload::from_name(&v).with_context(|| format!("unknown workload '{v}'"))?;
            }
            _ => return Err(arg.unexpected().into()),
        }
    }
    let Some(port) = port else {
        bail!("give --mysql-port or --pgsql-port (see --help)");
    };
    if connections == 0 || time.is_nan() || time <= 0.0 {
        bail!("--connections and --time must be positive");
    }
    let cfg = FloorConfig {
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        protocol,
        connections,
        time: Duration::from_secs_f64(time),
        workload,
        range,
        report_interval: report_interval
            .filter(|s| *s > 0.0)
            .map(Duration::from_secs_f64),
    };
    let mut print = |at: f64, rate: f64| println!("[ {at:.0}s ] tps: {rate:.2}");
    let out =
        run(&cfg, &mut print).with_context(|| format!("floor client against 127.0.0.1:{port}"))?;
    let secs = out.elapsed.as_secs_f64();
    println!("events: {}", out.events);
    println!("queries: {}", out.queries);
    println!("time: {secs:.4}");
    println!("events/s: {:.2}", out.events as f64 / secs);
    Ok(())
}
