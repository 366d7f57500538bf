//! The report page in a real browser: Debian's headless Chromium renders it to PNG and
//! dumps its DOM, with every network request sent to a proxy that this test listens on
//! (any connection to it is a request the page attempted). Skipped, saying so, when
//! Chromium is not installed, except in CI (`CI=true`), where that is a failure.
mod support;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bmk_analysis::{page, report::Report};
use bmk_results::RunData;
use support::*;

fn browse(browser: &str, proxy_port: u16, page: &Path, action: &[&str]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    bmk_testkit::headless_chromium(browser, profile.path())
        .args([
            "--hide-scrollbars",
            &format!("--proxy-server=http://127.0.0.1:{proxy_port}"),
            // Loopback is proxied too, so nothing bypasses the listener.
            "--proxy-bypass-list=<-loopback>",
            "--window-size=1360,2400",
        ])
        .args(action)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

#[test]
fn the_report_renders_offline_in_chromium() {
    let Some(browser) = bmk_testkit::chromium()
        .or_else(|| bmk_testkit::unavailable("chromium (Debian's package)", "not installed"))
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = sweep(tmp.path(), "sweep", &[1, 2, 4, 8], &[], false, |u, s| {
        if u == 8 && (s == 4 || s == 5) {
            300
        } else {
            400 * u as u64
        }
    });
    let run = RunData::read(&dir).unwrap();
    let html = page::render("report", &Report::build(&run).unwrap()).unwrap();
    let path = dir.join("report.html");
    std::fs::write(&path, &html).unwrap();
    let svgs_in_page = html.matches("<svg").count();

    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    proxy.set_nonblocking(true).unwrap();
    let attempts = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&attempts);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let listener = std::thread::spawn(move || {
        let mut requests = Vec::new();
        while !stopping.load(Ordering::Relaxed) {
            match proxy.accept() {
                Ok((mut s, _)) => {
                    seen.fetch_add(1, Ordering::Relaxed);
                    let mut buf = [0u8; 512];
                    s.set_read_timeout(Some(Duration::from_millis(500))).ok();
                    let n = s.read(&mut buf).unwrap_or(0);
                    requests.push(
                        String::from_utf8_lossy(&buf[..n])
                            .lines()
                            .next()
                            .unwrap_or("")
                            .to_string(),
                    );
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        requests
    });

    let dom = browse(browser, port, &path, &["--dump-dom"]);
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    let png = dir.join("report.png");
    let shot = browse(
        browser,
        port,
        &path,
        &[&format!("--screenshot={}", png.display())],
    );
    stop.store(true, Ordering::Relaxed);
    let requests = listener.join().unwrap();

    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    // Chromium itself calls its vendor's services (clock, updates, accounts) whatever
    // the flags; those requests are the browser's, not the page's. Anything else that
    // reached the proxy was asked for by the page.
    let browser_own = |r: &String| {
        r.split_whitespace().nth(1).is_some_and(|target| {
            let host = target
                .trim_start_matches("http://")
                .split(['/', ':'])
                .next()
                .unwrap_or("");
            ["google.com", "googleapis.com", "gvt1.com", "gstatic.com"]
                .iter()
                .any(|d| host == *d || host.ends_with(&format!(".{d}")))
        })
    };
    let from_page: Vec<&String> = requests.iter().filter(|r| !browser_own(r)).collect();
    assert!(
        attempts.load(Ordering::Relaxed) == requests.len() && from_page.is_empty(),
        "the page made network requests: {from_page:?}"
    );
    // The browser parsed every chart as SVG with its drawing inside.
    assert_eq!(dom_text.matches("<svg").count(), svgs_in_page);
    assert!(dom_text.matches("<polyline").count() >= svgs_in_page);
    assert!(dom_text.contains("Sanity checks"));

    // A non-trivial picture: the window's size and many colours (lines, text, tables).
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1360, 2400));
    let bytes = &buf[..info.buffer_size()];
    let step = info.color_type.samples();
    let colors: std::collections::BTreeSet<&[u8]> = bytes.chunks(step).collect();
    assert!(
        colors.len() > 50,
        "only {} colours: the page did not render",
        colors.len()
    );
    let non_background = bytes
        .chunks(step)
        .filter(|p| p[..3] != [0xfa, 0xfa, 0xfa] && p[..3] != [0xff, 0xff, 0xff])
        .count();
    assert!(
        non_background > bytes.len() / step / 50,
        "the page is nearly empty"
    );
    if let Ok(keep) = std::env::var("BMK_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
}
