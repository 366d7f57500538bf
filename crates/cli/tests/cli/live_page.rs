//! `bmk kit sweep --live=PORT` and `bmk report --serve=PORT DIR`: the report page served
//! while a sweep writes its directory, loaded by Debian's headless Chromium (skipped when
//! it is missing, failed under `CI=true`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::util::*;

pub(crate) use bmk_testkit::chromium;

/// The page's DOM after Chromium has loaded `url`.
pub(crate) fn dump_dom(browser: &str, url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = bmk_testkit::headless_chromium(browser, profile.path())
        .args(["--dump-dom", url])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The points of every line of the page's charts: each interval of each series is one.
fn chart_points(dom: &str) -> usize {
    dom.split("points=\"")
        .skip(1)
        .map(|rest| {
            rest.split('"')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .sum()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

/// `GET path` over HTTP/1.0: (status code, body).
fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\n\r\n").ok()?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).ok()?;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let code = answer.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, answer.split_once("\r\n\r\n")?.1.to_string()))
}

#[test]
fn the_live_page_of_a_sweep_grows_in_chromium_and_ends_as_bmk_report_s_page() {
    let Some(browser) = chromium()
        .or_else(|| bmk_testkit::unavailable("chromium (Debian's package)", "not installed"))
    else {
        return;
    };
    let dir = Dir::new();
    dir.bmk()
        .args("oltp_read_write --db-driver=sqlite --tables=2 --table-size=500 prepare")
        .run()
        .code(0);
    let port = free_port();
    let (mut sweep, line) = dir
        .bmk()
        .args(&format!(
            "kit sweep OLTP_RW_500_2tab-uniform-trx --users=1,2 --time=8 --pause=0 --capture-interval=1 --db-driver=sqlite --results-dir=run --live={port}"
        ))
        .spawn();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let url = format!("http://{addr}/");
    // The first level's first intervals are on the page.
    let deadline = Instant::now() + Duration::from_secs(60);
    let first = loop {
        assert!(Instant::now() < deadline, "`{line}`: no live page");
        if get(addr, "/").is_some_and(|(code, _)| code == 200) {
            let dom = dump_dom(browser, &url);
            if chart_points(&dom) > 0 {
                break dom;
            }
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    std::thread::sleep(Duration::from_secs(3));
    let second = dump_dom(browser, &url);
    assert!(
        first.contains("http-equiv=\"refresh\""),
        "a running sweep's page reloads itself"
    );
    assert!(
        chart_points(&second) > chart_points(&first),
        "3 s later the page shows more intervals: {} then {}",
        chart_points(&first),
        chart_points(&second)
    );
    assert!(!second.contains("<script"), "no script on the page");
    let status = sweep.wait().unwrap();
    assert!(status.success(), "`{line}`: {status}");

    // After the sweep, the page served is bmk report's, byte for byte, and no longer
    // reloads itself.
    dir.bmk()
        .args("report run --output=final.html")
        .run()
        .code(0);
    let written = std::fs::read_to_string(dir.join("final.html")).unwrap();
    let port = free_port();
    let (mut server, line) = dir
        .bmk()
        .args(&format!("report run --serve={port}"))
        .spawn();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let served = loop {
        if let Some((200, body)) = get(addr, "/") {
            break body;
        }
        assert!(Instant::now() < deadline, "`{line}` serves nothing");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(get(addr, "/nothing").map(|(c, _)| c), Some(404));
    let _ = server.kill();
    let _ = server.wait();
    assert!(!served.contains("http-equiv=\"refresh\""));
    assert!(
        served == written,
        "the served page differs from bmk report's"
    );
}
