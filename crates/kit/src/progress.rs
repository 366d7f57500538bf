//! The line saying where long work stands — a sweep (level k of n, time left) or a
//! `kit prepare` (rows loaded and indexes built, or units started) — and how the child process's own lines reach
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

fn eprint_line(bar: Option<&ProgressBar>, line: &str) {
    let print = || {
        let mut out = std::io::stderr().lock();
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
    /// Its offered arrivals per second, for an open-loop level.
    pub rate: Option<f64>,
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
        // A search does not know how many levels it will run: 0.
        let of = if self.levels > 0 {
            format!(" of {}", self.levels)
        } else {
            String::new()
        };
        let rate = self
            .rate
            .map(|r| format!(", {} arrivals/s", crate::objective::short_number(r)))
            .unwrap_or_default();
        format!(
            "[kit] {what} {}{of}: {} user{}{rate}{repeat}, {} left",
            self.level,
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

    /// Prints a line of a level's error output (on stderr).
    pub fn eprintln(&self, line: &str) {
        eprint_line(self.bar.as_ref(), line);
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

/// The environment variable through which a `bmk` prepare reports rows loaded and
/// index builds finished (the Lua host's load progress writes the file it names).
pub const LOAD_PROGRESS_ENV: &str = "BMK_LOAD_PROGRESS";

/// The units a `prepare` loads and the line its process prints as it starts one.
#[derive(Debug, Clone, PartialEq)]
pub struct PrepareWork {
    /// What a unit is (`table`, `warehouse`, `set`).
    pub unit: &'static str,
    /// Units to load.
    pub total: u64,
    /// Rows to load in all, when the test loads them through the reporting loader (the
    /// OLTP family); 0 when only units are followed.
    pub rows: u64,
    /// Secondary indexes built after the load (one per table unless
    /// `--create-secondary=off`).
    pub indexes: u64,
    /// The start of the line printed as a unit's load starts.
    marker: &'static str,
}

impl PrepareWork {
    /// The work of `bmk TEST ARGS... prepare`, from its words (`--name=value`, the last
    /// one wins as on the command line); `None` for a test whose load is not followed.
    pub fn of(words: &[String]) -> Option<PrepareWork> {
        let test = words.first()?;
        let value = |name: &str| -> Option<&str> {
            words
                .iter()
                .rev()
                .filter_map(|w| w.strip_prefix("--")?.split_once('='))
                .find(|(n, _)| n.replace('_', "-") == name)
                .map(|(_, v)| v)
        };
        let get = |name: &str, default: u64| -> u64 {
            value(name).and_then(|v| v.parse().ok()).unwrap_or(default)
        };
        let (unit, total, marker) = match test.as_str() {
            "tpcc" => (
                "warehouse",
                get("tables", 1) * get("scale", 1),
                "Loading warehouse ",
            ),
            "dbstress" => ("set", get("obj-tables", 1), "Creating dbSTRESS set #"),
            t if t.starts_with("oltp_") => ("table", get("tables", 1), "Inserting "),
            _ => return None,
        };
        let total = total.max(1);
        let (rows, indexes) = if unit == "table" {
            let secondary = value("create-secondary")
                .is_none_or(|v| !matches!(v, "off" | "false" | "no" | "0"));
            // The OLTP family's default table size.
            (
                total * get("table-size", 10_000),
                if secondary { total } else { 0 },
            )
        } else {
            (0, 0)
        };
        Some(PrepareWork {
            unit,
            total,
            rows,
            indexes,
            marker,
        })
    }

    /// Whether `line` says a unit's load starts.
    pub fn starts_unit(&self, line: &str) -> bool {
        line.starts_with(self.marker)
    }

    /// The bar's length: rows, and each index build weighted as a quarter of its
    /// table's rows (building an index over N rows takes a fraction of their load); or
    /// the units, when rows are not reported.
    pub fn length(&self) -> u64 {
        if self.rows > 0 {
            self.rows + self.indexes * self.index_weight()
        } else {
            self.total
        }
    }

    fn index_weight(&self) -> u64 {
        (self.rows / self.total / 4).max(1)
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

    /// The progress line once rows are reported: rows loaded and indexes built.
    pub fn rows_line(&self, done: &LoadDone, elapsed: Duration) -> String {
        let mut line = format!(
            "[kit] prepare: {} of {} rows",
            short(done.rows.min(self.rows)),
            short(self.rows)
        );
        if self.indexes > 0 {
            line.push_str(&format!(
                ", {} of {} indexes",
                done.indexes.min(self.indexes),
                self.indexes
            ));
        }
        line.push_str(&format!(", {}", clock(elapsed)));
        line
    }

    /// Where the bar stands. With rows reported: rows plus weighted finished indexes.
    /// Otherwise the units whose load has ended (all started but the last ones, one
    /// per loader, are taken as running): a bar is full only when the prepare ends.
    pub fn position(&self, started: u64, done: &LoadDone) -> u64 {
        if self.rows > 0 && done.reported {
            done.rows.min(self.rows) + done.indexes.min(self.indexes) * self.index_weight()
        } else if self.rows > 0 {
            started.saturating_sub(1).min(self.total) * (self.rows / self.total)
        } else {
            started.saturating_sub(1).min(self.total)
        }
    }
}

/// `12.3M`, `450k`, `999`: row counts short enough for the bar's line.
fn short(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 10_000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// What the prepare reported done through its progress file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadDone {
    /// Whether any row was reported (else the loader does not report).
    pub reported: bool,
    /// Rows loaded.
    pub rows: u64,
    /// Index builds finished.
    pub indexes: u64,
}

impl LoadDone {
    /// Adds the complete lines of `text` (`rows N`, `index`); returns what is left of
    /// an incomplete last line.
    pub fn add(&mut self, text: &str) -> String {
        let (complete, rest) = match text.rfind('\n') {
            Some(i) => (&text[..=i], &text[i + 1..]),
            None => ("", text),
        };
        for line in complete.lines() {
            if let Some(n) = line.strip_prefix("rows ") {
                if let Ok(n) = n.trim().parse::<u64>() {
                    self.rows += n;
                    self.reported = true;
                }
            } else if line == "index" {
                self.indexes += 1;
            }
        }
        rest.to_string()
    }
}

/// A prepare's screen: the loading process's lines, and on a terminal a bar of the
/// rows loaded and indexes built (or of the units, for a test that reports no rows).
pub struct PrepareScreen {
    work: PrepareWork,
    started: u64,
    done: LoadDone,
    /// The progress file the prepare appends to, and an incomplete line read from it.
    progress: Option<(std::fs::File, String)>,
    bar: ProgressBar,
    since: Instant,
}

impl PrepareScreen {
    /// A screen whose bar is drawn to `target` ([`ProgressDrawTarget::stderr`] on a
    /// terminal); `progress` is the file named to the prepare by [`LOAD_PROGRESS_ENV`].
    pub fn new(
        work: PrepareWork,
        target: ProgressDrawTarget,
        progress: Option<std::fs::File>,
    ) -> PrepareScreen {
        // Message and bar fit in 80 columns: a wrapped bar cannot be redrawn in place.
        let bar = bar(Some(work.length()), "{msg} [{bar:20}]");
        bar.set_draw_target(target);
        let screen = PrepareScreen {
            work,
            started: 0,
            done: LoadDone::default(),
            progress: progress.map(|f| (f, String::new())),
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

    /// Reads what the prepare reported since and refreshes the bar (the elapsed time
    /// moves even when nothing else does).
    pub fn tick(&mut self) {
        if let Some((file, pending)) = &mut self.progress {
            use std::io::Read as _;
            let mut text = std::mem::take(pending);
            let _ = file.read_to_string(&mut text);
            *pending = self.done.add(&text);
        }
        let elapsed = self.since.elapsed();
        self.bar
            .set_position(self.work.position(self.started, &self.done));
        self.bar.set_message(if self.done.reported {
            self.work.rows_line(&self.done, elapsed)
        } else {
            self.work.line(self.started, elapsed)
        });
    }

    /// Units started so far.
    pub fn started(&self) -> u64 {
        self.started
    }

    /// The bar's position, length and message as drawn last.
    pub fn state(&self) -> (u64, u64, String) {
        (
            self.bar.position(),
            self.bar.length().unwrap_or(0),
            self.bar.message(),
        )
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
        let off = PrepareWork::of(&words(
            "oltp_read_only --tables=3 --create-secondary=off prepare",
        ))
        .unwrap();
        assert_eq!((off.rows, off.indexes), (30_000, 0));
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
    fn without_reported_rows_the_bar_counts_finished_units_and_is_never_full_early() {
        let work = PrepareWork::of(&words("tpcc --tables=1 --scale=2 prepare")).unwrap();
        let mut screen = PrepareScreen::new(work, ProgressDrawTarget::hidden(), None);
        assert_eq!(screen.state().0, 0);
        screen.line("Loading warehouse 1, table set 1");
        assert_eq!(screen.state().0, 0, "the first warehouse is loading");
        screen.line("Loading warehouse 2, table set 1");
        let (pos, len, msg) = screen.state();
        assert_eq!((pos, len), (1, 2), "the last warehouse is still loading");
        assert!(
            msg.starts_with("[kit] prepare: warehouse 2 of 2 started"),
            "{msg}"
        );
        screen.finish();
    }

    #[test]
    fn the_prepare_bar_follows_rows_and_index_builds_to_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress");
        std::fs::write(&path, "").unwrap();
        let work = PrepareWork::of(&words(
            "oltp_read_write --tables=2 --table-size=1000 prepare",
        ))
        .unwrap();
        assert_eq!((work.rows, work.indexes), (2000, 2));
        let reader = std::fs::File::open(&path).unwrap();
        let mut screen = PrepareScreen::new(work, ProgressDrawTarget::hidden(), Some(reader));
        let append = |text: &str| {
            use std::io::Write as _;
            let mut f = std::fs::File::options().append(true).open(&path).unwrap();
            f.write_all(text.as_bytes()).unwrap();
        };
        screen.line("Creating table 'sbtest1'...");
        screen.line("Inserting 1000 records into 'sbtest1'");
        append("rows 1000\n");
        screen.line("Creating a secondary index on 'sbtest1'...");
        let (pos, len, msg) = screen.state();
        assert_eq!((pos, len), (1000, 2500));
        assert!(
            msg.starts_with("[kit] prepare: 1000 of 2000 rows, 0 of 2 indexes, 0:0"),
            "{msg}"
        );
        append("index\nrows 600\nrows 4");
        screen.tick();
        assert_eq!(
            screen.state().0,
            1850,
            "an incomplete line waits for its end"
        );
        append("00\n");
        screen.line("Creating a secondary index on 'sbtest2'...");
        let (pos, _, msg) = screen.state();
        assert_eq!(
            pos, 2250,
            "both tables loaded, the second index still building"
        );
        assert!(
            msg.starts_with("[kit] prepare: 2000 of 2000 rows, 1 of 2 indexes"),
            "{msg}"
        );
        append("index\n");
        screen.tick();
        assert_eq!(screen.state().0, 2500, "full when the last index is built");
        screen.finish();
    }

    #[test]
    fn progress_lines() {
        let p = Position {
            level: 2,
            levels: 6,
            users: 4,
            rate: None,
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
