//! What a run's end status means for the user, decided apart from printing it: the
//! lines said, the exit code, and whether the run ends before its report. The runner
//! prints what this returns; tests pin every status's wording and code.

use bmk_engine::{RunOutcome, RunStatus};

/// The facts of the run the wording depends on.
#[derive(Debug, Clone, Copy, Default)]
pub struct VerdictContext {
    /// Whether `--verbosity` shows informational lines (`Done.`).
    pub info: bool,
    /// Whether the time limit ended the run (then no event-limit line).
    pub time_limit_reached: bool,
    /// Invoked as `sysbench`: a failed run prints no report.
    pub as_sysbench: bool,
    /// Whether `--forced-shutdown` was given.
    pub forced_shutdown: bool,
    /// Seconds workers get to stop after the time limit.
    pub stop_grace_s: u64,
    /// sysbench 1.0's wording.
    pub sysbench_1_0: bool,
    /// `--thread-init-timeout` in seconds.
    pub init_timeout_s: u64,
}

/// How a run's status ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict<'a> {
    /// The workers' failure messages, printed first (as sysbench words them).
    pub failures: &'a [String],
    /// Lines for stdout after them.
    pub lines: Vec<String>,
    /// A line for stderr after stdout is flushed (bmk's own failure).
    pub error: Option<String>,
    /// The exit code.
    pub code: i32,
    /// The run ends here: nothing was measured, so no report, hook or `done()`
    /// follows (the level is still recorded).
    pub ends_now: bool,
    /// The report is left out (sysbench prints none after these failures).
    pub no_report: bool,
}

impl Verdict<'_> {
    fn new(code: i32) -> Verdict<'static> {
        Verdict {
            failures: &[],
            lines: Vec::new(),
            error: None,
            code,
            ends_now: false,
            no_report: false,
        }
    }
}

/// The verdict on `outcome`.
pub fn verdict<'a>(outcome: &'a RunOutcome, ctx: &VerdictContext) -> Verdict<'a> {
    let mut v = match &outcome.status {
        RunStatus::Completed => {
            let mut v = Verdict::new(0);
            if ctx.info {
                if !ctx.time_limit_reached && outcome.event_limit_reached {
                    v.lines.push("Event limit exceeded, exiting...".into());
                }
                v.lines.push("Done.\n".into());
            }
            v
        }
        RunStatus::Interrupted(sig) => Verdict::new(crate::signals::exit_code(*sig)),
        RunStatus::Fatal(messages) => Verdict {
            failures: messages,
            // sysbench ends a run a worker failed in with its FATAL line: no
            // statistics, no histogram, no report hook (the script's done() still
            // runs). bmk reports what was measured up to the failure.
            no_report: ctx.as_sysbench,
            ..Verdict::new(1)
        },
        RunStatus::ForcedShutdown if ctx.forced_shutdown => Verdict {
            lines: vec!["The --max-time limit has expired, forcing shutdown...".into()],
            ..Verdict::new(2)
        },
        RunStatus::ForcedShutdown => Verdict {
            lines: vec![format!(
                "FATAL: {} worker(s) still busy {} s after the time limit (a server that \
                 stopped answering?): abandoned; the report covers what was measured",
                outcome.abandoned, ctx.stop_grace_s
            )],
            ..Verdict::new(2)
        },
        RunStatus::InitFailed(messages) => Verdict {
            failures: messages,
            // 1.1 reworded the message.
            lines: vec![format!(
                "FATAL: {} initialization failed!",
                if ctx.sysbench_1_0 { "Thread" } else { "Threads" }
            )],
            ends_now: true,
            ..Verdict::new(1)
        },
        // bmk's own failure, not a sysbench one: on stderr, where scripts that start
        // many clients look for why one did not run.
        RunStatus::StartRefused(message) => Verdict {
            error: Some(format!("FATAL: {message}")),
            ends_now: true,
            ..Verdict::new(1)
        },
        RunStatus::InitTimeout => Verdict {
            lines: vec![format!(
                "Worker threads failed to initialize within {} seconds!",
                ctx.init_timeout_s
            )],
            ends_now: true,
            ..Verdict::new(2)
        },
        // Only sysbench's strict queue limit ends a run this way; as in sysbench the
        // message is a log line on stdout and a failed run has no report.
        RunStatus::QueueFull => Verdict {
            lines: vec![
                "FATAL: The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate".into(),
            ],
            no_report: true,
            ..Verdict::new(1)
        },
    };
    if !v.ends_now && outcome.abandoned > 0 && !matches!(outcome.status, RunStatus::ForcedShutdown)
    {
        v.lines.push(format!(
            "WARNING: {} worker(s) did not stop in time and were abandoned; the report \
             covers what was measured",
            outcome.abandoned
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: RunStatus) -> RunOutcome {
        RunOutcome {
            status,
            stats: bmk_engine::CumulativeStats {
                time_total: 0.0,
                events: 0,
                counters: Default::default(),
                histogram: bmk_engine::latency::new_histogram(),
                min_ns: 0,
                max_ns: 0,
                sum_ns: 0,
                threads: Vec::new(),
                lag: None,
            },
            event_limit_reached: false,
            abandoned: 0,
        }
    }

    fn ctx() -> VerdictContext {
        VerdictContext {
            info: true,
            stop_grace_s: 3,
            init_timeout_s: 30,
            ..VerdictContext::default()
        }
    }

    #[test]
    fn a_completed_run_says_done_and_why_it_stopped() {
        let mut o = outcome(RunStatus::Completed);
        let v = verdict(&o, &ctx());
        assert_eq!(
            (v.lines, v.code, v.ends_now),
            (vec!["Done.\n".to_string()], 0, false)
        );
        o.event_limit_reached = true;
        assert_eq!(
            verdict(&o, &ctx()).lines,
            ["Event limit exceeded, exiting...", "Done.\n"]
        );
        let timed = VerdictContext {
            time_limit_reached: true,
            ..ctx()
        };
        assert_eq!(verdict(&o, &timed).lines, ["Done.\n"]);
        let quiet = VerdictContext {
            info: false,
            ..ctx()
        };
        assert!(verdict(&o, &quiet).lines.is_empty());
    }

    #[test]
    fn an_interrupted_run_exits_with_its_signal() {
        let o = outcome(RunStatus::Interrupted(libc::SIGINT));
        let v = verdict(&o, &ctx());
        assert_eq!(v.code, crate::signals::exit_code(libc::SIGINT));
        assert!(v.lines.is_empty() && !v.ends_now && !v.no_report);
    }

    #[test]
    fn a_worker_failure_reports_except_as_sysbench() {
        let o = outcome(RunStatus::Fatal(vec!["boom".into()]));
        let v = verdict(&o, &ctx());
        assert_eq!(
            (v.failures, v.code, v.no_report),
            (&["boom".to_string()][..], 1, false)
        );
        let sysbench = VerdictContext {
            as_sysbench: true,
            ..ctx()
        };
        assert!(verdict(&o, &sysbench).no_report);
    }

    #[test]
    fn a_forced_shutdown_exits_with_2() {
        let mut o = outcome(RunStatus::ForcedShutdown);
        o.abandoned = 2;
        let forced = VerdictContext {
            forced_shutdown: true,
            ..ctx()
        };
        assert_eq!(
            verdict(&o, &forced).lines,
            ["The --max-time limit has expired, forcing shutdown..."]
        );
        let v = verdict(&o, &ctx());
        assert_eq!(v.code, 2);
        assert_eq!(
            v.lines,
            ["FATAL: 2 worker(s) still busy 3 s after the time limit (a server that stopped answering?): abandoned; the report covers what was measured"]
        );
    }

    #[test]
    fn runs_that_never_started_end_before_the_report() {
        let o = outcome(RunStatus::InitFailed(vec!["no connection".into()]));
        let v = verdict(&o, &ctx());
        assert_eq!(
            (v.lines.as_slice(), v.code, v.ends_now),
            (
                &["FATAL: Threads initialization failed!".to_string()][..],
                1,
                true
            )
        );
        let old = VerdictContext {
            sysbench_1_0: true,
            ..ctx()
        };
        assert_eq!(
            verdict(&o, &old).lines,
            ["FATAL: Thread initialization failed!"]
        );
        let o = outcome(RunStatus::StartRefused("barrier gone".into()));
        let v = verdict(&o, &ctx());
        assert_eq!(
            (v.error.as_deref(), v.code, v.ends_now),
            (Some("FATAL: barrier gone"), 1, true)
        );
        let o = outcome(RunStatus::InitTimeout);
        let v = verdict(&o, &ctx());
        assert_eq!(
            (v.lines.as_slice(), v.code, v.ends_now),
            (
                &["Worker threads failed to initialize within 30 seconds!".to_string()][..],
                2,
                true
            )
        );
    }

    #[test]
    fn a_full_queue_fails_without_a_report() {
        let o = outcome(RunStatus::QueueFull);
        let v = verdict(&o, &ctx());
        assert_eq!((v.code, v.no_report), (1, true));
        assert!(v.lines[0].starts_with("FATAL: The event queue is full."));
    }

    #[test]
    fn abandoned_workers_are_said_after_the_status() {
        let mut o = outcome(RunStatus::Completed);
        o.abandoned = 1;
        assert_eq!(
            verdict(&o, &ctx()).lines,
            [
                "Done.\n",
                "WARNING: 1 worker(s) did not stop in time and were abandoned; the report covers what was measured"
            ]
        );
    }
}
