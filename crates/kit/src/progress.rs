//! The line saying where a sweep stands (level k of n, time left), and how the levels'
//! own report lines reach the screen beside it. On a terminal the line is a live
//! `indicatif` bar kept below the scrolling report lines; otherwise nothing moves:
//! the report lines pass through as they are and each level starts with one plain line.

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
            "[kit] {what} {} of {}: {} users{repeat}, {} left",
            self.level,
            self.levels,
            self.users,
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
    /// A live bar when `live` and standard output is a terminal.
    pub fn new(live: bool) -> Screen {
        let bar = (live && std::io::stdout().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stdout());
            bar.set_style(ProgressStyle::with_template("{msg}").expect("a valid template"));
            bar
        });
        Screen {
            bar,
            started: Instant::now(),
        }
    }

    /// Prints a line of a level's output.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
