//! A TCP proxy in front of the machine's MariaDB that answers `COM_STMT_BULK_EXECUTE`
//! the way a MySQL server does (error 1047, unknown command) and passes everything
//! else through: it makes the driver's path for servers without bulk execute testable
//! here, where there is no MySQL server.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

/// The command byte of `COM_STMT_BULK_EXECUTE`.
const COM_STMT_BULK_EXECUTE: u8 = 0xfa;

/// The proxy: listens on a free loopback port until the test process ends.
pub struct NoBulkProxy {
    port: u16,
    refused: Arc<AtomicUsize>,
}

impl NoBulkProxy {
    /// Starts the proxy in front of MariaDB at `127.0.0.1:server_port`.
    pub fn start(server_port: u16) -> NoBulkProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let refused = Arc::new(AtomicUsize::new(0));
        let counter = refused.clone();
        thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)) else {
                    continue;
                };
                let counter = counter.clone();
                thread::spawn(move || relay(client, server, &counter));
            }
        });
        NoBulkProxy { port, refused }
    }

    /// The port to connect to.
    pub fn port(&self) -> String {
        self.port.to_string()
    }

    /// Bulk execute commands answered with an error so far.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }
}

/// Copies the server's bytes to the client as they come, and the client's packet by
/// packet, answering bulk execute commands itself. The server stays silent while a
/// command of the client is unanswered, so the two directions never write to the
/// client at the same time.
fn relay(client: TcpStream, server: TcpStream, refused: &AtomicUsize) {
    let (Ok(mut to_client), Ok(mut from_server)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let downstream = thread::spawn(move || {
        let _ = io::copy(&mut from_server, &mut to_client);
        let _ = to_client.shutdown(Shutdown::Both);
    });
    let _ = forward_commands(client, server, refused);
    let _ = downstream.join();
}

fn forward_commands(
    mut client: TcpStream,
    mut server: TcpStream,
    refused: &AtomicUsize,
) -> io::Result<()> {
    let mut header = [0u8; 4];
    loop {
        if client.read_exact(&mut header).is_err() {
            return server.shutdown(Shutdown::Both);
        }
        let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        let mut payload = vec![0u8; len];
        client.read_exact(&mut payload)?;
        // A command starts a new sequence (number 0); its first byte says which.
        if header[3] == 0 && payload.first() == Some(&COM_STMT_BULK_EXECUTE) {
            refused.fetch_add(1, Ordering::SeqCst);
            client.write_all(&unknown_command())?;
            continue;
        }
        server.write_all(&header)?;
        server.write_all(&payload)?;
    }
}

/// MySQL's answer to a command it does not know: ERR packet 1047, SQLSTATE 08S01.
fn unknown_command() -> Vec<u8> {
    let mut payload = vec![0xff];
    payload.extend_from_slice(&1047u16.to_le_bytes());
    payload.extend_from_slice(b"#08S01Unknown command");
    let mut packet = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    packet.push(1);
    packet.extend_from_slice(&payload);
    packet
}
