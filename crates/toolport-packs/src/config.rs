//! Both packs' settings and the one-call setup `toolport serve` uses.

use serde::Deserialize;
use toolport_server::{Server, ServerBuilder};

use crate::fs::{FsConfig, FsError, FsPack, FsWatcher};
use crate::sql::{SqlConfig, SqlError, SqlPack};

/// Settings of both packs; every field has a safe default, so `{}` (or
/// `PacksConfig::default()`) serves the current directory read-only and the
/// demo SQLite database.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PacksConfig {
    /// The filesystem pack (leave it out with [`PacksConfig::enable_fs`]).
    pub fs: FsConfig,
    /// The SQL pack.
    pub sql: SqlConfig,
    /// Serve the filesystem pack (default on).
    pub enable_fs: bool,
    /// Serve the SQL pack (default on).
    pub enable_sql: bool,
}

impl Default for PacksConfig {
    fn default() -> Self {
        PacksConfig {
            fs: FsConfig::default(),
            sql: SqlConfig::default(),
            enable_fs: true,
            enable_sql: true,
        }
    }
}

/// Why the packs could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PacksError {
    /// The filesystem pack.
    #[error("filesystem pack: {0}")]
    Fs(#[from] FsError),
    /// The SQL pack.
    #[error("SQL pack: {0}")]
    Sql(#[from] SqlError),
}

/// Both packs, opened and connected.
#[derive(Debug, Clone)]
pub struct Packs {
    /// The filesystem pack, when enabled.
    pub fs: Option<FsPack>,
    /// The SQL pack, when enabled.
    pub sql: Option<SqlPack>,
}

/// What must stay alive while the server serves (the file watcher).
#[derive(Debug)]
pub struct PacksRuntime {
    /// The file watcher, when the filesystem pack watches.
    pub watcher: Option<FsWatcher>,
}

impl Packs {
    /// Opens the roots and connects to the database.
    pub async fn open(config: &PacksConfig) -> Result<Packs, PacksError> {
        let fs = if config.enable_fs {
            Some(FsPack::from_config(&config.fs)?)
        } else {
            None
        };
        let sql = if config.enable_sql {
            Some(SqlPack::connect(&config.sql).await?)
        } else {
            None
        };
        Ok(Packs { fs, sql })
    }

    /// Adds both packs' tools, resources and prompts.
    pub fn install(&self, mut builder: ServerBuilder) -> ServerBuilder {
        if let Some(fs) = &self.fs {
            builder = fs.clone().install(builder);
        }
        if let Some(sql) = &self.sql {
            builder = sql.clone().install(builder);
        }
        builder
    }

    /// Starts what runs beside the server (the file watcher).
    pub fn start(&self, server: &Server) -> Result<PacksRuntime, PacksError> {
        let watcher = match &self.fs {
            Some(fs) => Some(fs.watch(server)?),
            None => None,
        };
        Ok(PacksRuntime { watcher })
    }

    /// A few lines for people: what is served.
    pub fn summary(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(fs) = &self.fs {
            for (name, path, writable) in fs.roots() {
                let mode = if writable { "read-write" } else { "read-only" };
                lines.push(format!("files: root {name:?} = {} ({mode})", path.display()));
            }
        }
        if let Some(sql) = &self.sql {
            let names: Vec<&str> = sql.tables().iter().map(|t| t.name.as_str()).collect();
            lines.push(format!(
                "sql: {} database, read-only; tables: {}",
                sql.database_kind(),
                names.join(", ")
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_config_enables_both_packs_on_safe_defaults() {
        let config: PacksConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(config, PacksConfig::default());
        assert!(config.enable_fs && config.enable_sql);
        assert_eq!(config.fs.roots, [crate::RootConfig::read_only(".")]);
        assert_eq!(config.sql.database, None);
        let custom: PacksConfig = serde_json::from_str(
            r#"{"fs": {"roots": [{"path": "/srv", "writable": true}]}, "sql": {"max_rows": 10}, "enable_sql": false}"#,
        )
        .unwrap();
        assert!(custom.fs.roots[0].writable && !custom.enable_sql && custom.sql.max_rows == 10);
        assert!(
            serde_json::from_str::<PacksConfig>(r#"{"fs": {"rots": []}}"#).is_err(),
            "typos are errors"
        );
    }
}
