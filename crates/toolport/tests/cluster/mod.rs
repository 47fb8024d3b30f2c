//! A cluster on loopback for the replica tests: a redis-server of its own,
//! `toolport serve` replicas sharing it, and nginx (round-robin, no
//! stickiness) in front, each on a free port, each stopped when dropped.
//! nginx runs as one process (`master_process off`) with a generated
//! configuration and every path in a temporary folder, so the packaged
//! default site is never touched.

#![allow(dead_code, unreachable_pub)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Served, spawn_serve};

/// The seal key every replica of a test cluster shares (base64 of 32 bytes).
pub const SEAL_KEY: &str = "dG9vbHBvcnQtcmVwbGljYS10ZXN0cy1zZWFsLWtleSE=";

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits (at most `limit`) for `ready`; panics with `what` otherwise.
pub fn wait_until(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A redis-server of the test's own.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    dir: tempfile::TempDir,
    persist: bool,
}

impl Redis {
    /// Starts one; with `persist`, every write is in its append-only file
    /// before it is acknowledged, so a restart loses nothing acknowledged.
    pub fn start(persist: bool) -> Redis {
        let mut redis = Redis {
            child: None,
            port: free_port(),
            dir: tempfile::tempdir().unwrap(),
            persist,
        };
        redis.restart();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Whether it answers PING.
    pub fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        let mut buf = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok() && stream.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
    }

    /// Sends one command in the inline protocol; the raw reply.
    pub fn command(&self, line: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
        stream.write_all(format!("{line}\r\n").as_bytes()).unwrap();
        let mut reply = Vec::new();
        let mut buf = [0u8; 65536];
        // Read until the server has nothing more for half a second.
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&reply).into_owned()
    }

    /// Stops it (SIGKILL: nothing is flushed that was not already).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop(&mut child);
        }
        wait_until(Duration::from_secs(5), "redis-server stops", || !self.answers());
    }

    /// Starts it again on the same port and folder.
    pub fn restart(&mut self) {
        let mut command = Command::new("redis-server");
        command
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string(), "--save", ""])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if self.persist {
            command.args(["--appendonly", "yes", "--appendfsync", "always"]);
        } else {
            command.args(["--appendonly", "no"]);
        }
        self.child = Some(
            command
                .spawn()
                .expect("start redis-server (Debian's redis-server package)"),
        );
        wait_until(Duration::from_secs(10), "redis-server answers", || self.answers());
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop(&mut child);
        }
    }
}

/// One `toolport serve` replica.
pub struct Replica {
    pub served: Served,
    pub addr: SocketAddr,
}

impl Replica {
    /// Starts `toolport serve ARGS` sharing the state at `redis_url`, with
    /// the test key, a short drain and these extra settings.
    pub fn start(redis_url: &str, args: &[&str], env: &[(&str, &str)]) -> Replica {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolport"));
        command
            .args(args)
            .env("TOOLPORT_STATE_URL", redis_url)
            .env("TOOLPORT_SEAL_KEYS", SEAL_KEY)
            .env("TOOLPORT_HTTP__DRAIN_DELAY_SECONDS", "1")
            .env("TOOLPORT_LOG", "warn");
        for (k, v) in env {
            command.env(k, v);
        }
        let (served, url) = spawn_serve(&mut command);
        let addr = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("an http URL ending in /mcp: {url}"))
            .parse()
            .unwrap();
        Replica { served, addr }
    }

    /// Sends a signal (`KILL`, `TERM`) to the process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.served.0.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Waits (at most `limit`) for the process to exit.
    pub fn exited_within(&mut self, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.served.0.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

/// nginx in front of the replicas: round-robin, no stickiness.
pub struct Nginx {
    child: Child,
    pub addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl Nginx {
    pub fn start(upstreams: &[SocketAddr]) -> Nginx {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let servers: String = upstreams.iter().map(|a| format!("    server {a};\n")).collect();
        let path = |name: &str| dir.path().join(name).display().to_string();
        let config = format!(
            r#"daemon off;
master_process off;
worker_processes 1;
pid {pid};
error_log {error} warn;
events {{ worker_connections 1024; }}
http {{
  log_format status '$status $upstream_addr $upstream_status $request_method';
  access_log {access} status;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  upstream toolport {{
{servers}    keepalive 16;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://toolport;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout non_idempotent;
    }}
  }}
}}
"#,
            pid = path("nginx.pid"),
            error = path("error.log"),
            access = path("access.log"),
            tmp = dir.path().display(),
        );
        let conf = dir.path().join("nginx.conf");
        std::fs::write(&conf, config).unwrap();
        let child = Command::new(nginx_binary())
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nginx (Debian's nginx package)");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        wait_until(Duration::from_secs(10), "nginx listens", || {
            TcpStream::connect(addr).is_ok()
        });
        Nginx { child, addr, dir }
    }

    /// The access log: one `status upstream upstream_status method` line per request.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default()
    }

    /// nginx's error log, for a failure's message.
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

fn nginx_binary() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| Path::exists(p))
        .unwrap_or_else(|| PathBuf::from("nginx"))
}

impl Drop for Nginx {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// Redis, the replicas and nginx.
pub struct Cluster {
    pub redis: Redis,
    pub replicas: Vec<Replica>,
    pub nginx: Nginx,
}

impl Cluster {
    /// `count` replicas of `toolport serve ARGS` with these settings.
    pub fn start(count: usize, persist: bool, args: &[&str], env: &[(&str, &str)]) -> Cluster {
        let redis = Redis::start(persist);
        let replicas: Vec<Replica> = (0..count).map(|_| Replica::start(&redis.url(), args, env)).collect();
        let nginx = Nginx::start(&replicas.iter().map(|r| r.addr).collect::<Vec<_>>());
        Cluster { redis, replicas, nginx }
    }
}

/// `GET path` on `addr`: the status and body, or why it failed.
pub fn get(addr: SocketAddr, path: &str) -> Result<(u16, String), String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut text = String::new();
    stream.read_to_string(&mut text).map_err(|e| e.to_string())?;
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status in {text:?}"))?;
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_owned();
    Ok((status, body))
}

/// The value of a Prometheus counter with exactly these labels, 0 if absent.
pub fn counter(metrics: &str, name: &str, labels: &str) -> f64 {
    let prefix = format!("{name}{{{labels}}} ");
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}
