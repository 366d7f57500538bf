//! `bmk report --serve=[HOST:]PORT DIR`: serves the report page of a results directory
//! over HTTP while a sweep writes it (or after), until Ctrl-C.
//!
//! The page is the one `bmk report` writes (`bmk_analysis::page`), rendered again
//! whenever a file of the directory has changed. While `run.json` says the run is going,
//! the page asks the browser to load it again every [`REFRESH_S`] seconds (a `<meta
//! http-equiv="refresh">`: no script, nothing fetched from elsewhere), so the current
//! level's intervals, the finished levels' rows and curves and the checks appear as the
//! sweep writes them. The server renders on its own thread at most once per change, so
//! a browser left open costs the benchmark host one render per change of the files, not
//! one per look.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::Result;
use bmk_results::load::RunData;

use crate::http_answer::{read_request, respond};
use crate::user_error::user_error;

/// Seconds between two loads of a page whose run is still going.
pub const REFRESH_S: u32 = 2;

/// `--serve`'s value.
pub fn parse_addr(raw: &str) -> Result<SocketAddr, String> {
    crate::http_answer::parse_listen_addr("serve", raw)
}

/// What identifies the directory's state: each file's path, length and modification
/// time, in order.
fn fingerprint(dir: &Path) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(path),
                Ok(m) => out.push((path, m.len(), m.modified().ok())),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

/// The page of `dir` as `bmk report` renders it, with the refresh while the run goes.
pub fn render(dir: &Path) -> Result<String, String> {
    let run = RunData::read(dir).map_err(|e| e.to_string())?;
    let going = run.manifest.as_ref().is_some_and(|m| m.status == "running");
    let report = bmk_analysis::report::Report::build(&run).map_err(|e| e.to_string())?;
    let html = bmk_analysis::page::render("report", &report).map_err(|e| e.to_string())?;
    Ok(if going {
        html.replacen(
            "<head>\n",
            &format!("<head>\n<meta http-equiv=\"refresh\" content=\"{REFRESH_S}\">\n"),
            1,
        )
    } else {
        html
    })
}

/// The last page rendered and the state of the directory it was rendered from.
struct Cache {
    dir: PathBuf,
    state: Vec<(PathBuf, u64, Option<SystemTime>)>,
    page: Option<Result<String, String>>,
}

impl Cache {
    fn page(&mut self) -> &Result<String, String> {
        let state = fingerprint(&self.dir);
        if self.page.is_none() || state != self.state {
            self.page = Some(render(&self.dir));
            self.state = state;
        }
        self.page.get_or_insert_with(|| Err(String::new()))
    }
}

fn answer(stream: &mut TcpStream, cache: &mut Cache) -> std::io::Result<()> {
    let (method, path) = read_request(stream)?;
    let text = "text/plain; charset=utf-8";
    match (method.as_str(), path.as_str()) {
        ("GET", "/" | "/report.html") => match cache.page() {
            Ok(html) => respond(stream, "200 OK", "text/html; charset=utf-8", html),
            Err(e) => respond(
                stream,
                "500 Internal Server Error",
                text,
                &format!("cannot render the report: {e}\n"),
            ),
        },
        ("GET", _) => respond(stream, "404 Not Found", text, "the report is at /\n"),
        _ => respond(stream, "405 Method Not Allowed", text, "only GET /\n"),
    }
}

/// Answers requests on `listener` (non-blocking) with the page of `dir` until `stop`
/// says so.
fn serve_on(listener: &TcpListener, dir: &Path, stop: &dyn Fn() -> bool) -> std::io::Result<()> {
    let mut cache = Cache {
        dir: dir.to_path_buf(),
        state: Vec::new(),
        page: None,
    };
    while !stop() {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false)?;
                // A browser that goes away mid-answer is its own problem.
                let _ = answer(&mut stream, &mut cache);
            }
            // Polled, so that a stop ends the loop between two requests.
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    Ok(())
}

/// Listens on `addr`, for the option `option` (named in the error).
fn listen(addr: SocketAddr, option: &str) -> Result<TcpListener, String> {
    let listener = TcpListener::bind(addr)
        .map_err(|e| format!("cannot serve the report on {addr} (--{option}): {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot serve the report on {addr} (--{option}): {e}"))?;
    Ok(listener)
}

/// Serves the report of `dir` at `addr` until a signal lands in `interrupt`; the exit
/// code (0).
pub fn serve(addr: SocketAddr, dir: &Path, interrupt: &AtomicUsize) -> Result<i32> {
    // Refuse a directory the renderer cannot read at all before listening.
    RunData::read(dir).map_err(|e| user_error(format!("bmk report: {e}")))?;
    let listener = listen(addr, "serve").map_err(user_error)?;
    println!(
        "serving the report of {} at http://{}/ (Ctrl-C stops)",
        dir.display(),
        listener.local_addr()?
    );
    serve_on(&listener, dir, &|| interrupt.load(Ordering::Relaxed) != 0)?;
    Ok(0)
}

/// `bmk kit run|sweep --live=ADDR`: listens on ADDR now, and returns what starts
/// serving the results directory's page on a thread of its own, until the process
/// exits (so an interrupted sweep's page shows its final state until then).
pub fn live_page(raw: &str) -> Result<bmk_kit::command::LivePage, String> {
    let addr = crate::http_answer::parse_listen_addr("live", raw)?;
    let listener = listen(addr, "live")?;
    Ok(Box::new(move |dir: &Path| {
        let dir = dir.to_path_buf();
        let shown = listener.local_addr().map_or(addr, |a| a);
        let started = std::thread::Builder::new()
            .name("bmk-live-page".into())
            .spawn(move || serve_on(&listener, &dir, &|| false));
        match started {
            Ok(_) => println!("[kit] live page: http://{shown}/"),
            Err(e) => eprintln!("WARNING: cannot serve the live page: {e}"),
        }
    }))
}
