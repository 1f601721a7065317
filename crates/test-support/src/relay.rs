//! A TCP relay in front of a server (the test PostgreSQL) that a test can
//! take away and bring back, as a database restart or a network cut looks
//! to its clients: while cut, every relayed connection is closed and new
//! ones are closed as soon as they are accepted; restored, connections are
//! relayed again. The server itself, shared by other tests, is untouched.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The relay: its address, and whether the server is taken away.
pub struct Relay {
    addr: SocketAddr,
    cut: Arc<AtomicBool>,
    /// Bumped at each cut: every relayed connection ends.
    generation: watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
        self.generation.send_modify(|g| *g += 1);
    }
}

impl Relay {
    /// Relay a free loopback port to `upstream` (`host:port`).
    pub async fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let cut = Arc::new(AtomicBool::new(false));
        let (generation, _) = watch::channel(0u64);
        let (flag, gen_tx, upstream) = (cut.clone(), generation.clone(), upstream.to_string());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if flag.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let (upstream, ended) = (upstream.clone(), gen_tx.subscribe());
                tokio::spawn(relay(client, upstream, ended));
            }
        });
        Self {
            addr,
            cut,
            generation,
            task,
        }
    }

    /// `host:port` to give clients instead of the server's.
    pub fn addr(&self) -> String {
        self.addr.to_string()
    }

    /// Take the server away: close every connection, refuse new ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    /// Bring it back.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

async fn relay(mut client: TcpStream, upstream: String, mut ended: watch::Receiver<u64>) {
    let Ok(mut server) = TcpStream::connect(&upstream).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        _ = ended.changed() => {}
    }
}
