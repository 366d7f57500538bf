//! `bmk-null-server`: see the `bmk_null_server` library and `--help`. Built in the bmk
//! package so that installing bmk installs the null server too.

use std::io::Write;
use std::sync::Arc;

use bmk_null_server::options::{parse, Command, HELP};
use bmk_null_server::server;

fn main() {
    let config = match parse(std::env::args_os().skip(1)) {
        Ok(Command::Serve(c)) => c,
        Ok(Command::Help) => {
            print!("{HELP}");
            return;
        }
        Err(e) => {
            eprintln!("bmk-null-server: {e}");
            std::process::exit(1);
        }
    };
    let bound = match server::bind(&config) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("bmk-null-server: {e}");
            std::process::exit(1);
        }
    };
    let mut line = String::from("ready");
    if let Some(a) = bound.mysql {
        line.push_str(&format!(" mysql={a}"));
    }
    if let Some(a) = bound.pgsql {
        line.push_str(&format!(" pgsql={a}"));
    }
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
    if let Err(e) = server::serve(bound, Arc::new(config)) {
        eprintln!("bmk-null-server: {e}");
        std::process::exit(1);
    }
}
