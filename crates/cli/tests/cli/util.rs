//! The harness: a per-test directory, a command builder, readable diffs, and the
//! "skeleton" view of a report (numbers replaced by `N`) used by the layout tests.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use regex::Regex;

/// The binary under test.
pub const BMK: &str = env!("CARGO_BIN_EXE_bmk");

/// A temporary directory that is the working directory of every command run in it.
pub struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    /// A fresh, empty directory.
    pub fn new() -> Dir {
        Dir {
            tmp: tempfile::Builder::new()
                .prefix("bmk-cli-test-")
                .tempdir()
                .expect("create a temporary directory"),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// `name` inside it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }

    /// Writes a file.
    pub fn write(&self, name: &str, text: &str) {
        std::fs::write(self.join(name), text).expect("write a test file");
    }

    /// The names of the entries in the directory, sorted.
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path())
            .expect("list the test directory")
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// `bmk` with this directory as working directory.
    pub fn bmk(&self) -> Cmd {
        Cmd::new(Path::new(BMK), self.path())
    }

    /// The binary invoked as `sysbench` (strict mode), through a symlink in this directory.
    pub fn sysbench(&self) -> Cmd {
        let link = self.join("sysbench");
        if !link.exists() {
            std::os::unix::fs::symlink(BMK, &link).expect("symlink the binary as sysbench");
        }
        Cmd::new(&link, self.path())
    }
}

/// A command line being assembled.
pub struct Cmd {
    cmd: Command,
    line: String,
}

impl Cmd {
    fn new(program: &Path, cwd: &Path) -> Cmd {
        let mut cmd = Command::new(program);
        cmd.current_dir(cwd).stdin(Stdio::null());
        Cmd {
            cmd,
            line: program.file_name().unwrap().to_string_lossy().into_owned(),
        }
    }

    /// Appends whitespace-separated arguments.
    pub fn args(mut self, args: &str) -> Cmd {
        for a in args.split_whitespace() {
            self = self.arg(a);
        }
        self
    }

    /// Appends one argument (may contain spaces).
    pub fn arg(mut self, arg: impl Into<OsString>) -> Cmd {
        let arg = arg.into();
        self.line.push(' ');
        self.line.push_str(&arg.to_string_lossy());
        self.cmd.arg(arg);
        self
    }

    /// Removes an environment variable from the command's environment.
    pub fn env_remove(mut self, name: &str) -> Cmd {
        self.cmd.env_remove(name);
        self.line = format!("env -u {name} {}", self.line);
        self
    }

    /// Sets an environment variable of the command.
    pub fn env(mut self, name: &str, value: &str) -> Cmd {
        self.cmd.env(name, value);
        self.line = format!("{name}={value} {}", self.line);
        self
    }

    /// Runs the command under a file-size limit (`RLIMIT_FSIZE`, bytes), with `SIGXFSZ`
    /// ignored so that a write past it fails with `EFBIG` instead of killing bmk: a
    /// full disk without a file system to fill.
    pub fn file_size_limit(mut self, bytes: u64) -> Cmd {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only async-signal-safe calls (setrlimit,
        // signal), on values copied in.
        unsafe {
            self.cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: bytes,
                    rlim_max: bytes,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
        self.line = format!("(ulimit -f {}) {}", bytes / 512, self.line);
        self
    }

    /// Feeds the file `path` to the command's standard input.
    pub fn stdin_file(mut self, path: &Path) -> Cmd {
        let file = std::fs::File::open(path).expect("open the stdin file");
        self.cmd.stdin(Stdio::from(file));
        self.line.push_str(&format!(" < {}", path.display()));
        self
    }

    /// Runs to completion.
    pub fn run(mut self) -> Run {
        let output = self
            .cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", self.line));
        Run::new(self.line, output)
    }

    /// Runs to completion, or kills the command and fails the test once `limit` has
    /// passed (for behaviour whose regression would be a hang).
    pub fn run_within(self, limit: std::time::Duration) -> Run {
        let (mut child, line) = self.spawn();
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr = child.stderr.take().expect("piped stderr");
        let read = |pipe: &mut dyn std::io::Read| {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        };
        std::thread::scope(|scope| {
            let out = scope.spawn(|| read(&mut stdout));
            let err = scope.spawn(|| read(&mut stderr));
            let deadline = std::time::Instant::now() + limit;
            let status = loop {
                if let Some(status) = child.try_wait().expect("wait") {
                    break status;
                }
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("`{line}` still ran after {limit:?}");
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            };
            let output = Output {
                status,
                stdout: out.join().expect("stdout reader"),
                stderr: err.join().expect("stderr reader"),
            };
            Run::new(line, output)
        })
    }

    /// Starts without waiting (stdout and stderr piped).
    pub fn spawn(mut self) -> (Child, String) {
        let child = self
            .cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", self.line));
        (child, self.line)
    }
}

/// A finished command.
pub struct Run {
    /// The command line, for messages.
    pub line: String,
    /// Exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// From a child's output.
    pub fn new(line: String, output: Output) -> Run {
        let run = Run {
            line,
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        assert!(
            !run.stderr.contains("panicked"),
            "`{}` panicked:\n{}",
            run.line,
            run.stderr
        );
        run
    }

    pub fn context(&self) -> String {
        format!(
            "command: {}\nexit code: {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.line, self.code, self.stdout, self.stderr
        )
    }

    /// Asserts the exit code.
    pub fn code(self, code: i32) -> Run {
        assert_eq!(self.code, Some(code), "wrong exit code\n{}", self.context());
        self
    }

    /// Asserts success and an empty stderr.
    pub fn ok(self) -> Run {
        let run = self.code(0);
        assert_eq!(run.stderr, "", "unexpected stderr\n{}", run.context());
        run
    }

    /// Asserts exit code 1 with exactly `message` as the one line on stderr.
    pub fn fails_with(self, message: &str) -> Run {
        let run = self.code(1);
        assert_eq!(
            run.stderr,
            format!("{message}\n"),
            "wrong error message\n{}",
            run.context()
        );
        run
    }

    /// Asserts exit code 1 with one stderr line that contains every one of `parts`.
    pub fn fails_mentioning(self, parts: &[&str]) -> Run {
        let run = self.code(1);
        assert_eq!(
            run.stderr.lines().count(),
            1,
            "the error must be one line\n{}",
            run.context()
        );
        for p in parts {
            assert!(
                run.stderr.contains(p),
                "the error does not mention {p:?}\n{}",
                run.context()
            );
        }
        run
    }

    /// Stdout lines.
    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    /// Asserts that some stdout line matches `re` and returns the captures of the first.
    pub fn line_matching(&self, re: &str) -> Vec<String> {
        let re = Regex::new(re).unwrap();
        let caps = self
            .stdout
            .lines()
            .find_map(|l| re.captures(l))
            .unwrap_or_else(|| panic!("no line matches {re}\n{}", self.context()));
        caps.iter()
            .map(|c| c.map(|m| m.as_str().to_string()).unwrap_or_default())
            .collect()
    }

    /// The value after `label` on the last stdout line that starts with it (trimmed):
    /// the final report's, which comes after any checkpoint report.
    pub fn value(&self, label: &str) -> String {
        self.stdout
            .lines()
            .rev()
            .find_map(|l| l.trim_start().strip_prefix(label))
            .unwrap_or_else(|| panic!("no line starting with {label:?}\n{}", self.context()))
            .trim()
            .to_string()
    }

    /// `total number of events:` of the final report.
    pub fn total_events(&self) -> u64 {
        self.value("total number of events:").parse().unwrap()
    }

    /// `time elapsed:` of the final report, in seconds.
    pub fn time_elapsed(&self) -> f64 {
        self.value("time elapsed:")
            .trim_end_matches('s')
            .parse()
            .unwrap()
    }

    /// A latency row of the final report (`max:`, `95th percentile:`...), in ms.
    pub fn latency_ms(&self, label: &str) -> f64 {
        self.value(label).parse().unwrap()
    }
}

/// Asserts `actual == expected`, showing a line diff when they differ.
#[track_caller]
pub fn assert_text_eq(expected: &str, actual: &str, context: &str) {
    if expected == actual {
        return;
    }
    let e: Vec<&str> = expected.split('\n').collect();
    let a: Vec<&str> = actual.split('\n').collect();
    // Longest common subsequence, then walk it to print a unified-style diff.
    let mut lcs = vec![vec![0usize; a.len() + 1]; e.len() + 1];
    for i in (0..e.len()).rev() {
        for j in (0..a.len()).rev() {
            lcs[i][j] = if e[i] == a[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut diff = String::new();
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && e[i] == a[j] {
            diff.push_str(&format!("   {}\n", e[i]));
            i += 1;
            j += 1;
        } else if j < a.len() && (i == e.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            diff.push_str(&format!(" + {}\n", a[j]));
            j += 1;
        } else {
            diff.push_str(&format!(" - {}\n", e[i]));
            i += 1;
        }
    }
    panic!("text differs (- expected, + actual):\n{diff}\n{context}");
}

fn number_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\d+(\.\d+)*").unwrap())
}

fn gap_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r":\s{2,}N").unwrap())
}

/// The layout of a report without its numbers: every number becomes `N`, the padding
/// between a label and its value becomes one space (columns are checked separately by
/// [`check_columns`]), and intermediate `[ Ns ]` lines, whose count depends on timing,
/// are left out.
pub fn skeleton(stdout: &str) -> String {
    let mut out = String::new();
    for line in stdout.split_inclusive('\n') {
        if line.starts_with("[ ") && !line.contains("Checkpoint report:") {
            continue;
        }
        let line = number_re().replace_all(line, "N");
        let line = gap_re().replace_all(&line, ": N");
        out.push_str(&line);
    }
    out
}

/// Where values sit in a final report, measured on the example below.
pub struct Columns {
    /// First column of values in the SQL statistics and Throughput blocks.
    pub value_start: usize,
    /// Last column of the right-aligned latency values.
    pub latency_end: usize,
    /// First column of the Threads fairness values.
    pub fairness_start: usize,
}

/// A final report in the DB layout as sysbench documents it, with its example numbers.
pub const SPEC_EXAMPLE: &str = "\
SQL statistics:
    queries performed:
        read:                            0
        write:                           0
        other:                           31915740
        total:                           31915740
    transactions:                        1595787 (797534.13 per sec.)
    queries:                             31915740 (15950682.50 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Throughput:
    events/s (eps):                      797534.1251
    time elapsed:                        2.0009s
    total number of events:              1595787

Latency (ms):
         min:                                    0.00
         avg:                                    0.00
         max:                                    3.41
         95th percentile:                        0.00
         sum:                                 3556.39

Threads fairness:
    events (avg/stddev):           797893.5000/62053.50
    execution time (avg/stddev):   1.7782/0.00
";

/// The columns of [`SPEC_EXAMPLE`] (0-based byte offsets).
pub fn spec_columns() -> Columns {
    let line = |label: &str| {
        SPEC_EXAMPLE
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap()
    };
    let start_of_value = |l: &str| {
        let colon = l.find(':').unwrap();
        colon + 1 + l[colon + 1..].find(|c: char| c != ' ').unwrap()
    };
    let events = line("events/s (eps):");
    assert_eq!(
        start_of_value(events),
        start_of_value(line("transactions:"))
    );
    assert_eq!(line("min:").len(), line("sum:").len());
    Columns {
        value_start: start_of_value(events),
        latency_end: line("min:").len(),
        fairness_start: start_of_value(line("events (avg/stddev):")),
    }
}

/// Asserts that every labelled value of the final (and checkpoint) reports in `stdout`
/// sits at the example's column: `Throughput:`/`SQL statistics:` values start at
/// `value_start`, `Latency (ms):` values end at `latency_end`, `Threads fairness:`
/// values start at `fairness_start`. Returns how many lines were checked.
pub fn check_columns(stdout: &str) -> usize {
    let cols = spec_columns();
    let mut block = "";
    let mut checked = 0;
    for line in stdout.lines() {
        if !line.starts_with(' ') {
            block = line;
            continue;
        }
        let Some(colon) = line.find(':') else {
            continue;
        };
        let rest = &line[colon + 1..];
        if rest.trim().is_empty() {
            continue; // `queries performed:`
        }
        let value_start = colon + 1 + rest.find(|c: char| c != ' ').unwrap();
        match block {
            "Throughput:" if !line.contains("IOPS=") => {
                assert_eq!(value_start, cols.value_start, "column of {line:?}");
            }
            "SQL statistics:" => {
                assert_eq!(value_start, cols.value_start, "column of {line:?}");
            }
            "Latency (ms):" | "Schedule lag (ms):" => {
                assert_eq!(line.len(), cols.latency_end, "end of {line:?}");
            }
            "Threads fairness:" => {
                assert_eq!(value_start, cols.fairness_start, "column of {line:?}");
            }
            _ => continue,
        }
        checked += 1;
    }
    checked
}

/// Parses a number, with a readable failure.
pub fn num(s: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} is not a number"))
}
