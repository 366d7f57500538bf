//! The line saying where long work stands — a sweep (level k of n, time left) or a
//! `kit prepare` (table k of n started) — and how the child process's own lines reach
//! the screen beside it. On a terminal (standard output and standard error both one)
//! the line is a live `indicatif` bar on standard error kept below the scrolling lines,
//! which stay on standard output; otherwise nothing moves: the lines pass through as
//! they are, a sweep adds one plain line per level and a prepare adds nothing.
//! (Strict sysbench mode has no kit and so no bar.)

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// `1:02:03`, or `2:03` under an hour.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// Whether a live bar may be drawn: standard output, where the lines go, and standard
/// error, where the bar goes, are both terminals. Output sent to a file or a pipe
/// then holds exactly the child's lines.
pub fn live_terminal() -> bool {
    std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

/// A bar on standard error whose template is `template`.
fn bar(len: Option<u64>, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    bar
}

/// Prints one line on standard output, above the bar if there is one.
fn print_line(bar: Option<&ProgressBar>, line: &str) {
    let print = || {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    match bar {
        Some(bar) => bar.suspend(print),
        None => print(),
    }
}

/// Where the sweep stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    /// 1-based level now running (or next, during a pause).
    pub level: usize,
    /// Levels in the sweep.
    pub levels: usize,
    /// Users of that level.
    pub users: u32,
    /// Its repeat number.
    pub repeat: u32,
    /// Time left in the whole sweep.
    pub left: Duration,
    /// Pausing before the level.
    pub pausing: bool,
}

impl Position {
    /// The progress line.
    pub fn line(&self) -> String {
        let what = if self.pausing {
            "pause before level"
        } else {
            "level"
        };
        let repeat = if self.repeat > 1 {
            format!(", repeat {}", self.repeat)
        } else {
            String::new()
        };
        format!(
            "[kit] {what} {} of {}: {} user{}{repeat}, {} left",
            self.level,
            self.levels,
            self.users,
            if self.users == 1 { "" } else { "s" },
            clock(self.left)
        )
    }
}

/// The screen of a sweep.
pub struct Screen {
    bar: Option<ProgressBar>,
    started: Instant,
}

impl Screen {
    /// A live bar when `live` and [`live_terminal`].
    pub fn new(live: bool) -> Screen {
        let bar = (live && live_terminal()).then(|| bar(None, "{msg}"));
        Screen {
            bar,
            started: Instant::now(),
        }
    }

    /// Prints a line of a level's output.
    pub fn println(&self, line: &str) {
        print_line(self.bar.as_ref(), line);
    }

    /// A level (or a pause) begins: one plain line, and the live line.
    pub fn begin(&self, pos: &Position) {
        self.println(&pos.line());
        self.update(pos);
    }

    /// Refreshes the live line.
    pub fn update(&self, pos: &Position) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{}  (elapsed {})",
                pos.line(),
                clock(self.started.elapsed())
            ));
        }
    }

    /// Removes the live line.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The units a `prepare` loads and the line its process prints as it starts one.
#[derive(Debug, Clone, PartialEq)]
pub struct PrepareWork {
    /// What a unit is (`table`, `warehouse`, `set`).
    pub unit: &'static str,
    /// Units to load.
    pub total: u64,
    /// The start of the line printed as a unit's load starts.
    marker: &'static str,
}

impl PrepareWork {
    /// The work of `bmk TEST ARGS... prepare`, from its words (`--name=value`, the last
    /// one wins as on the command line); `None` for a test whose load is not followed.
    pub fn of(words: &[String]) -> Option<PrepareWork> {
        let test = words.first()?;
        let get = |name: &str| -> u64 {
            words
                .iter()
                .rev()
                .filter_map(|w| w.strip_prefix("--")?.split_once('='))
                .find(|(n, _)| n.replace('_', "-") == name)
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(1)
        };
        let (unit, total, marker) = match test.as_str() {
            "tpcc" => (
                "warehouse",
                get("tables") * get("scale"),
                "Loading warehouse ",
            ),
            "dbstress" => ("set", get("obj-tables"), "Creating dbSTRESS set #"),
            t if t.starts_with("oltp_") => ("table", get("tables"), "Inserting "),
            _ => return None,
        };
        Some(PrepareWork {
            unit,
            total: total.max(1),
            marker,
        })
    }

    /// Whether `line` says a unit's load starts.
    pub fn starts_unit(&self, line: &str) -> bool {
        line.starts_with(self.marker)
    }

    /// The progress line after `started` units started, `elapsed` into the prepare.
    pub fn line(&self, started: u64, elapsed: Duration) -> String {
        format!(
            "[kit] prepare: {} {} of {} started, {} elapsed",
            self.unit,
            started.min(self.total),
            self.total,
            clock(elapsed)
        )
    }
}

/// A prepare's screen: the loading process's lines, and on a terminal a bar of the
/// units started.
pub struct PrepareScreen {
    work: PrepareWork,
    started: u64,
    bar: ProgressBar,
    since: Instant,
}

impl PrepareScreen {
    /// A screen whose bar is drawn to `target` ([`ProgressDrawTarget::stderr`] on a
    /// terminal).
    pub fn new(work: PrepareWork, target: ProgressDrawTarget) -> PrepareScreen {
        // Message and bar fit in 80 columns: a wrapped bar cannot be redrawn in place.
        let bar = bar(Some(work.total), "{msg} [{bar:20}]");
        bar.set_draw_target(target);
        let screen = PrepareScreen {
            work,
            started: 0,
            bar,
            since: Instant::now(),
        };
        screen.bar.set_message(screen.work.line(0, Duration::ZERO));
        screen
    }

    /// One line of the loading process: printed, and counted when a unit starts.
    pub fn line(&mut self, line: &str) {
        print_line(Some(&self.bar), line);
        if self.work.starts_unit(line) {
            self.started += 1;
        }
        self.tick();
    }

    /// Refreshes the bar (the elapsed time moves even when no line comes).
    pub fn tick(&self) {
        self.bar.set_position(self.started.min(self.work.total));
        self.bar
            .set_message(self.work.line(self.started, self.since.elapsed()));
    }

    /// Units started so far.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// The bar's position and message as drawn last.
    pub fn state(&self) -> (u64, String) {
        (self.bar.position(), self.bar.message())
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn prepare_work_follows_the_tests_load_lines() {
        let w = PrepareWork::of(&words(
            "oltp_read_write --tables=8 --table-size=10000 --threads=4 --tables=3 prepare",
        ))
        .unwrap();
        assert_eq!((w.unit, w.total), ("table", 3), "the last --tables wins");
        assert!(w.starts_unit("Inserting 10000 records into 'sbtest2'"));
        assert!(!w.starts_unit("Creating a secondary index on 'sbtest2'..."));
        let t = PrepareWork::of(&words("tpcc --tables=2 --scale=10 --threads=8 prepare")).unwrap();
        assert_eq!((t.unit, t.total), ("warehouse", 20));
        assert!(t.starts_unit("Loading warehouse 3, table set 1"));
        let d = PrepareWork::of(&words(
            "dbstress --obj-tables=4 --obj-table-size=1000 prepare",
        ))
        .unwrap();
        assert_eq!((d.unit, d.total), ("set", 4));
        assert!(d.starts_unit("Creating dbSTRESS set #2 ..."));
        assert_eq!(PrepareWork::of(&words("cpu prepare")), None);
        assert_eq!(
            w.line(2, Duration::from_secs(83)),
            "[kit] prepare: table 2 of 3 started, 1:23 elapsed"
        );
        assert_eq!(
            w.line(7, Duration::from_secs(3)),
            "[kit] prepare: table 3 of 3 started, 0:03 elapsed",
            "never past the end"
        );
    }

    #[test]
    fn the_prepare_bar_counts_the_units_as_their_lines_pass() {
        let work = PrepareWork::of(&words("oltp_read_write --tables=2 prepare")).unwrap();
        let mut screen = PrepareScreen::new(work, ProgressDrawTarget::hidden());
        assert_eq!(screen.state().0, 0);
        for line in [
            "Creating table 'sbtest1'...",
            "Inserting 500 records into 'sbtest1'",
            "Creating a secondary index on 'sbtest1'...",
            "Creating table 'sbtest2'...",
        ] {
            screen.line(line);
        }
        assert_eq!(screen.started(), 1);
        let (pos, msg) = screen.state();
        assert_eq!(pos, 1);
        assert!(
            msg.starts_with("[kit] prepare: table 1 of 2 started, 0:0"),
            "{msg}"
        );
        screen.line("Inserting 500 records into 'sbtest2'");
        assert_eq!(screen.state().0, 2);
        screen.finish();
    }

    #[test]
    fn progress_lines() {
        let p = Position {
            level: 2,
            levels: 6,
            users: 4,
            repeat: 1,
            left: Duration::from_secs(3725),
            pausing: false,
        };
        assert_eq!(p.line(), "[kit] level 2 of 6: 4 users, 1:02:05 left");
        let p = Position {
            pausing: true,
            repeat: 2,
            left: Duration::from_secs(75),
            ..p
        };
        assert_eq!(
            p.line(),
            "[kit] pause before level 2 of 6: 4 users, repeat 2, 1:15 left"
        );
    }
}
