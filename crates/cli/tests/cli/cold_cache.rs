//! A real warm-up, found: a MariaDB level that starts on a cold buffer pool reads its
//! pages from the disk for its first seconds and runs slower until they are cached, and
//! the steady-state detection (MSER-5) of `bmk report` says where that warm-up ends.
//!
//! The disk must be slow for that, and a virtual machine's disk is not: its reads come
//! from the host's cache in microseconds, so a cold pool warmed within one interval on a
//! quiet machine. The test therefore makes the disk slow for its own server only: a
//! private `mariadbd` (its own data directory, port and socket) runs in a block-I/O
//! cgroup that lets it read at most [`READ_IOPS`] times a second from the disk under its
//! data, with InnoDB's files opened `O_DIRECT` (no OS page cache), its buffer pool
//! neither dumped nor loaded across the restart that empties it. Nothing else on the
//! machine is slowed. It needs root and a cgroup with the block-I/O controller (v1
//! `blkio` or v2 `io`), else it is skipped (a failure under CI).

use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bmk_results::results_dir::read_intervals;

use crate::util::Dir;

/// The server's read budget: a page miss costs about 1/300 s, so a cold level of
/// point selects runs at a few hundred per second and a warm one at thousands.
const READ_IOPS: u32 = 300;

/// The level's arrival rate (events per second): far below what the warm server
/// serves (tens of thousands), far above what the cold one does (hundreds). The
/// level runs open-loop so that its warm throughput is the rate, whatever else the
/// host runs: closed-loop, a CPU-bound server's throughput on a shared virtual
/// machine drifted by 5-15 % within the half minute (other guests, the host's own
/// scheduling), which the trend test rightly calls no steady state.
const RATE: f64 = 4000.0;

/// A block-I/O cgroup made for the test, removed when dropped (after its process
/// ended: a cgroup with members cannot be removed).
struct ReadThrottle {
    dir: PathBuf,
}

impl ReadThrottle {
    /// A cgroup whose members read at most `iops` times a second from `device`
    /// (`major:minor` of a whole disk), or why there can be none here.
    fn new(device: &str, iops: u32) -> Result<ReadThrottle, String> {
        let name = bmk_testkit::unique_name("bmkcold");
        let v1 = Path::new("/sys/fs/cgroup/blkio");
        if v1.join("blkio.throttle.read_iops_device").exists() {
            let dir = v1.join(&name);
            std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let throttle = ReadThrottle { dir };
            std::fs::write(
                throttle.dir.join("blkio.throttle.read_iops_device"),
                format!("{device} {iops}"),
            )
            .map_err(|e| format!("blkio.throttle.read_iops_device: {e}"))?;
            return Ok(throttle);
        }
        let v2 = Path::new("/sys/fs/cgroup");
        let controllers = std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .map_err(|_| "no cgroup v1 blkio and no cgroup v2 hierarchy".to_string())?;
        if !controllers.split_whitespace().any(|c| c == "io") {
            return Err("the cgroup v2 root does not delegate the io controller".into());
        }
        let dir = v2.join(&name);
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let throttle = ReadThrottle { dir };
        std::fs::write(
            throttle.dir.join("io.max"),
            format!("{device} riops={iops}"),
        )
        .map_err(|e| format!("io.max: {e}"))?;
        Ok(throttle)
    }

    fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }
}

impl Drop for ReadThrottle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// `major:minor` of the whole disk that holds `path` (a throttle takes disks, not
/// partitions), or why there is none (a file system with no block device under it).
fn disk_of(path: &Path) -> Result<String, String> {
    let dev = std::fs::metadata(path).map_err(|e| e.to_string())?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if !sys.exists() {
        return Err(format!(
            "{} is on {major}:{minor}, not a block device",
            path.display()
        ));
    }
    let disk = if sys.join("partition").exists() {
        sys.join("..")
    } else {
        sys
    };
    std::fs::read_to_string(disk.join("dev"))
        .map(|s| s.trim().to_string())
        .map_err(|e| e.to_string())
}

/// A private MariaDB server in `dir`, killed when dropped.
struct PrivateMariadb {
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl PrivateMariadb {
    fn install(dir: &Path) -> Result<PrivateMariadb, String> {
        std::fs::create_dir_all(dir.join("tmp")).map_err(|e| e.to_string())?;
        let out = bmk_testkit::mariadb_install_db(
            Path::new("mariadb-install-db"),
            &dir.join("data"),
            &dir.join("tmp"),
        )
        .output()
        .map_err(|e| format!("mariadb-install-db: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mariadb-install-db failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| e.to_string())?;
        Ok(PrivateMariadb {
            dir: dir.to_path_buf(),
            port,
            child: None,
        })
    }

    /// Starts the server, inside `cgroup` when given (the shell puts itself there and
    /// then becomes the server, so no read of the server's escapes the throttle).
    fn start(&mut self, cgroup: Option<&ReadThrottle>) {
        let d = &self.dir;
        let server = format!(
            "exec mariadbd --no-defaults --datadir={data} --port={port} --socket={d}/s.sock \
             --pid-file={d}/s.pid --log-error={d}/error.log --tmpdir={d}/tmp \
             --bind-address=127.0.0.1 --user=root --skip-log-bin --skip-name-resolve \
             --innodb-buffer-pool-size=256M --innodb-flush-method=O_DIRECT \
             --innodb-buffer-pool-load-at-startup=0 --innodb-buffer-pool-dump-at-shutdown=0",
            data = d.join("data").display(),
            port = self.port,
            d = d.display(),
        );
        let script = match cgroup {
            Some(cg) => format!("echo $$ > {} && {server}", cg.procs().display()),
            None => server,
        };
        self.child = Some(
            Command::new("sh")
                .args(["-c", &script])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn mariadbd"),
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(st) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("mariadbd exited ({st}) during start:\n{}", self.error_log());
            }
            let ping = Command::new("mariadb-admin")
                .arg(format!("--socket={}/s.sock", d.display()))
                .args(["--user=root", "ping"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if ping.is_ok_and(|s| s.success()) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "mariadbd not ready in 60 s:\n{}",
                self.error_log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A clean shutdown (SIGTERM), so the restart needs no recovery reads.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: kill(2) on our own child's pid.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
            }
            let _ = child.wait();
        }
    }

    /// Runs one statement as root through the server's socket.
    fn execute(&self, sql: &str) {
        let out = Command::new("mariadb")
            .arg(format!("--socket={}/s.sock", self.dir.display()))
            .args(["--user=root", "-e", sql])
            .stdin(Stdio::null())
            .output()
            .expect("run the mariadb client");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    fn target(&self) -> String {
        format!(
            "[targets.cold]\ndriver = \"mysql\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"root\"\ndatabase = \"sbtest\"\n",
            self.port
        )
    }
}

impl Drop for PrivateMariadb {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn a_level_on_a_cold_buffer_pool_shows_a_warm_up_on_mariadb() {
    if Command::new("mariadb-install-db")
        .arg("--help")
        .output()
        .is_err()
    {
        bmk_testkit::unavailable::<()>("a private MariaDB server", "mariadb-install-db not found");
        return;
    }
    let dir = Dir::new();
    let disk = match disk_of(dir.path()) {
        Ok(disk) => disk,
        Err(why) => {
            bmk_testkit::unavailable::<()>("a disk to throttle", &why);
            return;
        }
    };
    // Declared before the server, so it is removed after the server is killed.
    let throttle = match ReadThrottle::new(&disk, READ_IOPS) {
        Ok(t) => t,
        Err(why) => {
            bmk_testkit::unavailable::<()>("a block-I/O cgroup (root)", &why);
            return;
        }
    };
    let mut server = PrivateMariadb::install(&dir.join("server")).unwrap();
    server.start(None);
    server.execute("CREATE DATABASE sbtest");
    dir.write("bmk.toml", &server.target());
    dir.bmk()
        .args("kit prepare Prepare_150K_1tab-InnoDB 2 --target=cold")
        .run_within(Duration::from_secs(300))
        .code(0);
    // Restarted in the throttled cgroup with an empty buffer pool: every page the
    // level touches first comes from the disk. Arrivals that come while the users wait
    // on the disk queue up and are served once the pages are cached.
    server.stop();
    server.start(Some(&throttle));
    dir.bmk()
        .args(&format!(
            "kit run OLTP_RO_150K_1tab-uniform-p_sel1-notrx 8 40 --target=cold \
             --results-dir=cold --capture-interval=1 --rate={RATE}"
        ))
        .run_within(Duration::from_secs(180))
        .code(0);
    dir.bmk()
        .arg("report")
        .arg(dir.join("cold"))
        .run_within(Duration::from_secs(60))
        .code(0);
    let steady: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cold/steady.json")).unwrap())
            .unwrap();
    let level = &steady[0];
    let lines = read_intervals(&dir.join("cold/level-0001/intervals.jsonl")).unwrap();
    let series: Vec<f64> = lines.iter().map(|l| l.record.tps).collect();
    eprintln!("TPS per interval: {series:.0?}");
    assert_eq!(level["verdict"], "steady", "{level:#}");
    let warmup = level["window"]["warmup_intervals"].as_u64().unwrap() as usize;
    assert!(warmup >= 3, "no warm-up found: {level:#}");
    // The warm-up MSER-5 cut off holds the cold seconds, when the pages came from the
    // throttled disk at a fraction of the rate (most of its intervals), and the one or
    // two after them in which the backlog they left was served at full speed.
    let mut cut: Vec<f64> = series[..warmup].to_vec();
    cut.sort_by(f64::total_cmp);
    let median = cut[warmup / 2];
    assert!(
        median < 0.5 * RATE,
        "warm-up intervals {cut:.0?} against a rate of {RATE}: {level:#}"
    );
    // The window starts after both: none of its intervals is still serving the backlog
    // (those ran at 1.5 to 5 times the rate), and it runs at the rate. A stall of the
    // host moves a second's events into the next and may push one interval of the
    // window a few tens of percent off the rate: only the backlog is looked for.
    for (i, tps) in series.iter().enumerate().skip(warmup) {
        assert!(
            *tps < 1.5 * RATE,
            "interval {i} of the window ran {tps:.0} TPS at a rate of {RATE}: {series:.0?}"
        );
    }
    let window = level["window"]["figures"]["tps"].as_f64().unwrap();
    assert!((window / RATE - 1.0).abs() < 0.05, "{level:#}");
}
