//! The `[tasks]` configuration: where durable tasks live and how they are
//! kept (docs/tasks.md).
//!
//! ```toml
//! [tasks]
//! # SQLite in the data directory unless a PostgreSQL URL is given.
//! data_dir = "/var/lib/toolport"
//! # database = "postgres://toolport:secret@db:5432/toolport"
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use toolport_tasks::{EngineConfig, PostgresStore, SqliteStore, SystemClock, TaskEngine, TaskStore};

/// Durable tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TasksSection {
    /// Whether tools that support tasks run as tasks at all.
    pub enabled: bool,
    /// Where the SQLite store (`tasks.sqlite3`) lives; default
    /// `$TOOLPORT_DATA_DIR`, else `$XDG_DATA_HOME/toolport`, else
    /// `~/.local/share/toolport`.
    pub data_dir: Option<PathBuf>,
    /// A `postgres://` URL: tasks live there instead (shared by replicas).
    /// Never logged.
    pub database: Option<String>,
    /// PostgreSQL connections.
    pub pool_size: usize,
    /// How long a task's process may go silent before recovery takes the
    /// task: a killed server's tasks end at most this long (plus one
    /// maintenance round) after it died.
    pub lease_seconds: u64,
    /// How often recovery and expiry run.
    pub maintenance_seconds: u64,
    /// How long a task and its result are kept when the client asks for no
    /// time to live.
    pub default_ttl_seconds: u64,
    /// The longest time to live granted.
    pub max_ttl_seconds: u64,
    /// The polling interval suggested to clients.
    pub poll_interval_ms: u64,
}

impl Default for TasksSection {
    fn default() -> Self {
        TasksSection {
            enabled: true,
            data_dir: None,
            database: None,
            pool_size: 8,
            lease_seconds: 30,
            maintenance_seconds: 10,
            default_ttl_seconds: 24 * 3600,
            max_ttl_seconds: 7 * 24 * 3600,
            poll_interval_ms: 1000,
        }
    }
}

impl TasksSection {
    /// Checks what the types cannot: `(key, value, expected)` of the first
    /// bad setting.
    pub fn validate(&self) -> Result<(), (String, String, String)> {
        let bad = |key: &str, value: String, expected: &str| Err((format!("tasks.{key}"), value, expected.to_owned()));
        if let Some(url) = &self.database
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            // The value may hold a password: show only its scheme.
            let scheme = url.split_once(':').map_or("(none)", |(s, _)| s);
            return bad(
                "database",
                format!("a URL with the scheme {scheme:?}"),
                "a postgres:// URL (leave it out for SQLite in the data directory)",
            );
        }
        if self.pool_size == 0 {
            return bad("pool_size", "0".into(), "at least 1");
        }
        if self.lease_seconds == 0 {
            return bad("lease_seconds", "0".into(), "at least 1 second");
        }
        if self.maintenance_seconds == 0 {
            return bad("maintenance_seconds", "0".into(), "at least 1 second");
        }
        if self.max_ttl_seconds < self.default_ttl_seconds {
            return bad(
                "max_ttl_seconds",
                self.max_ttl_seconds.to_string(),
                "at least default_ttl_seconds",
            );
        }
        if self.poll_interval_ms == 0 {
            return bad("poll_interval_ms", "0".into(), "at least 1 ms");
        }
        Ok(())
    }

    /// The data directory this section names or implies: `data_dir`, else
    /// the one every part of Toolport shares (`$TOOLPORT_DATA_DIR`, else
    /// `$XDG_DATA_HOME/toolport`, else `~/.local/share/toolport`).
    pub fn data_dir(&self) -> PathBuf {
        match &self.data_dir {
            Some(dir) => dir.clone(),
            None => toolport_packs::default_data_dir(),
        }
    }

    /// Opens the store and the engine; `None` when tasks are disabled. The
    /// second value says where tasks live, for the start-up banner (never
    /// the database URL).
    pub async fn open(&self) -> Result<Option<(TaskEngine, String)>> {
        if !self.enabled {
            return Ok(None);
        }
        let (store, place): (Arc<dyn TaskStore>, String) = match &self.database {
            Some(url) => {
                let store = PostgresStore::connect(url, self.pool_size)
                    .await
                    .context("tasks.database: cannot open the PostgreSQL task store")?;
                (Arc::new(store), "PostgreSQL (tasks.database)".to_owned())
            }
            None => {
                let dir = self.data_dir();
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("tasks.data_dir: cannot create {}", dir.display()))?;
                let store = SqliteStore::open_in(&dir)
                    .await
                    .with_context(|| format!("tasks.data_dir: cannot open the task store in {}", dir.display()))?;
                let place = store.path().display().to_string();
                (Arc::new(store), place)
            }
        };
        let config = EngineConfig {
            lease: Duration::from_secs(self.lease_seconds),
            default_poll_interval_ms: self.poll_interval_ms,
            default_ttl_ms: Some(self.default_ttl_seconds.saturating_mul(1000)),
            max_ttl_ms: self.max_ttl_seconds.saturating_mul(1000),
            ..EngineConfig::default()
        };
        Ok(Some((
            TaskEngine::with_config(store, config, Arc::new(SystemClock)),
            place,
        )))
    }

    /// How often maintenance runs.
    pub fn maintenance_every(&self) -> Duration {
        Duration::from_secs(self.maintenance_seconds)
    }
}
