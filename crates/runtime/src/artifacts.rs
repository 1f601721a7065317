//! One thread writes result artifacts (`delegate_results/<uuid>.json`),
//! one file after another. Many tasks ending at once would otherwise create
//! files in one folder concurrently, and the kernel serializes that anyway
//! — with busy spinning on the folder's lock.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc;
use tokio::sync::oneshot;

type Job = (PathBuf, Vec<u8>, oneshot::Sender<std::io::Result<()>>);

pub(crate) struct ArtifactWriter {
    jobs: parking_lot::Mutex<mpsc::Sender<Job>>,
}

impl ArtifactWriter {
    pub(crate) fn start() -> Self {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("artifact-writer".into())
            .spawn(move || {
                // Results are read from the run rows; the files may lag.
                crate::process::run_thread_when_idle();
                let mut made: HashSet<PathBuf> = HashSet::new();
                for (path, bytes, done) in rx {
                    let result = (|| {
                        if let Some(dir) = path.parent()
                            && !made.contains(dir)
                        {
                            std::fs::create_dir_all(dir)?;
                            made.insert(dir.to_path_buf());
                        }
                        std::fs::write(&path, &bytes)
                    })();
                    let _ = done.send(result);
                }
            })
            .expect("spawn the artifact writer thread");
        Self {
            jobs: parking_lot::Mutex::new(tx),
        }
    }

    /// Write `bytes` to `path` (creating its folder); resolves when written.
    pub(crate) async fn write(&self, path: PathBuf, bytes: Vec<u8>) -> std::io::Result<()> {
        let (done, wait) = oneshot::channel();
        let sent = self.jobs.lock().send((path, bytes, done));
        if sent.is_err() {
            return Err(std::io::Error::other("the artifact writer stopped"));
        }
        wait.await
            .unwrap_or_else(|_| Err(std::io::Error::other("the artifact writer stopped")))
    }
}
