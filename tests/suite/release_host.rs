//! A fake release host for the install tests (`install_script`, `self_update`): a plain HTTP/1.0
//! server on 127.0.0.1 that serves files laid out as dist/build.sh lays out `dist/out/`, and can
//! cut a download short. The archives hold a tiny shell script named `pith`, not the real binary.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// The platform install.sh and `pith update` ask for on this machine.
pub fn target() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

/// How a path is served.
#[derive(Clone)]
pub enum Serve {
    Body(Vec<u8>),
    /// The first half of the body, with the whole length announced, then the connection closes.
    CutShort(Vec<u8>),
}

#[derive(Clone, Default)]
pub struct Host {
    files: Arc<Mutex<HashMap<String, Serve>>>,
    requests: Arc<Mutex<Vec<String>>>,
    pub base: String,
}

impl Host {
    pub async fn start() -> Host {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let host = Host {
            base,
            ..Host::default()
        };
        let served = host.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let host = served.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let n = socket.read(&mut buf).await.unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]).to_string();
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                    host.requests.lock().unwrap().push(path.clone());
                    let serve = host.files.lock().unwrap().get(&path).cloned();
                    let (status, body, cut) = match serve {
                        Some(Serve::Body(b)) => ("200 OK", b, false),
                        Some(Serve::CutShort(b)) => ("200 OK", b, true),
                        None => ("404 Not Found", b"not found".to_vec(), false),
                    };
                    let header = format!(
                        "HTTP/1.0 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let sent = if cut {
                        &body[..body.len() / 2]
                    } else {
                        &body[..]
                    };
                    let _ = socket.write_all(header.as_bytes()).await;
                    let _ = socket.write_all(sent).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        host
    }

    pub fn put(&self, path: &str, serve: Serve) {
        self.files.lock().unwrap().insert(path.to_string(), serve);
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// Serves `latest/download/VERSION` as `version`.
    pub fn latest(&self, version: &str) {
        self.put(
            "/latest/download/VERSION",
            Serve::Body(format!("{version}\n").into_bytes()),
        );
    }

    /// Serves the archive of `version` (its `pith` prints `pith ANSWER`) and its `.sha256`;
    /// `corrupt` flips a byte of the archive after the checksum was taken.
    pub fn release(&self, version: &str, answer: &str, corrupt: bool) -> Vec<u8> {
        let name = format!("pith-{version}-{}", target());
        let archive = fake_archive(&name, answer);
        let sum = format!("{}  {name}.tar.gz\n", sha256_hex(&archive));
        let mut served = archive.clone();
        if corrupt {
            let mid = served.len() / 2;
            served[mid] ^= 0xff;
        }
        let dir = format!("/download/v{version}");
        self.put(&format!("{dir}/{name}.tar.gz"), Serve::Body(served));
        self.put(
            &format!("{dir}/{name}.tar.gz.sha256"),
            Serve::Body(sum.into_bytes()),
        );
        archive
    }
}

/// `NAME.tar.gz` holding `NAME/pith`: a shell script that answers `--version` with
/// `pith ANSWER`, and `NAME/README.md`.
pub fn fake_archive(name: &str, answer: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join(name);
    std::fs::create_dir(&inner).unwrap();
    write_script(&inner.join("pith"), &format!("echo 'pith {answer}'"));
    std::fs::write(inner.join("README.md"), "# pith\n").unwrap();
    let out = Command::new("tar")
        .arg("-czf")
        .arg("a.tar.gz")
        .arg(name)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "tar: {out:?}");
    std::fs::read(dir.path().join("a.tar.gz")).unwrap()
}

/// An executable `#!/bin/sh` script.
pub fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    let out = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// The files of `dir`, sorted (to show nothing was left behind).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
