//! A TCP proxy in front of a real server that forwards, then on request freezes (holds
//! every byte, keeps every socket open: a link that stopped carrying traffic) or cuts
//! every open connection (what a client sees when the server restarts). The kernel of
//! the test machine has no `netem`, and a proxy needs no privileges.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Default)]
struct State {
    frozen: AtomicBool,
    open: Mutex<Vec<TcpStream>>,
}

/// The running proxy; its threads end with the test process.
pub struct FaultProxy {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    state: Arc<State>,
}

impl FaultProxy {
    /// Starts forwarding 127.0.0.1:`port` to `upstream`.
    pub fn start(upstream: &str) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        let upstream = upstream.to_string();
        let st = Arc::clone(&state);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                {
                    let mut open = st.open.lock().unwrap();
                    open.push(client.try_clone().unwrap());
                    open.push(server.try_clone().unwrap());
                }
                pump(
                    Arc::clone(&st),
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                );
                pump(Arc::clone(&st), server, client);
            }
        });
        FaultProxy { port, state }
    }

    /// From now on no byte passes in either direction; connections stay open.
    pub fn freeze(&self) {
        self.state.frozen.store(true, Ordering::SeqCst);
    }

    /// Closes every connection open now (both sides); later connections are forwarded.
    pub fn cut_all(&self) {
        for s in self.state.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// Copies `from` to `to` until either closes; while frozen, holds what it read.
fn pump(state: Arc<State>, mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            while state.frozen.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}
