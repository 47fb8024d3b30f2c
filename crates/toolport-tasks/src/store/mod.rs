//! Where task records live, behind one async trait: SQLite in the data
//! directory by default ([`SqliteStore`]), PostgreSQL when configured
//! ([`PostgresStore`]). A store knows rows, not rules: the engine decides
//! every change and the store writes it only if the version it was based on
//! is still the stored one (compare and swap). Both run the same statements
//! (`columns.rs`) and pass the shared suite (`suite`, feature
//! `store-suite`).

mod columns;
mod postgres;
mod sqlite;

use std::fmt::Debug;

use async_trait::async_trait;

use crate::error::StoreError;
use crate::id::TaskId;
use crate::record::{Millis, TaskRecord};

pub use postgres::PostgresStore;
pub use sqlite::{SQLITE_FILE_NAME, SqliteStore};

/// Where a page of a principal's list continues: after the task created at
/// `created_at` with id `id`, in newest-first order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPosition {
    /// The creation time of the last task already shown.
    pub created_at: Millis,
    /// Its id, which breaks ties between tasks created in the same
    /// millisecond.
    pub id: TaskId,
}

/// Durable storage of task records.
///
/// Every method that reads on a requester's behalf takes the owner, so a
/// store never hands one principal's task to another. The methods without
/// an owner serve the engine's own recovery and expiry.
#[async_trait]
pub trait TaskStore: Send + Sync + Debug {
    /// Stores a new task; it is durable when this returns. Fails if the id
    /// exists.
    async fn insert(&self, task: &TaskRecord) -> Result<(), StoreError>;

    /// The task `id` if `owner` owns it.
    async fn get(&self, owner: &str, id: &TaskId) -> Result<Option<TaskRecord>, StoreError>;

    /// Up to `limit` of `owner`'s tasks, newest first (by creation time,
    /// then id, both descending), starting after `after`.
    async fn list(
        &self,
        owner: &str,
        after: Option<&ListPosition>,
        limit: usize,
    ) -> Result<Vec<TaskRecord>, StoreError>;

    /// Replaces the stored task with `task` (its changeable fields: status,
    /// message, input requests, result, error, version, lease, metadata,
    /// update time) if the stored version is `expected_version` and the
    /// stored status is not terminal. Returns whether it did; it is durable
    /// when this returns `true`.
    async fn swap(&self, task: &TaskRecord, expected_version: u64) -> Result<bool, StoreError>;

    /// Replaces only the stored task's metadata and version with `task`'s
    /// if the stored version is `expected_version`, whatever its status.
    /// Returns whether it did.
    async fn annotate(&self, task: &TaskRecord, expected_version: u64) -> Result<bool, StoreError>;

    /// Up to `limit` tasks, of any owner, that are not terminal and whose
    /// lease ran out before `now`, the longest-expired first.
    async fn expired_leases(&self, now: Millis, limit: usize) -> Result<Vec<TaskRecord>, StoreError>;

    /// Deletes up to `limit` tasks, of any owner, whose time to live ran out
    /// before `now`; returns them as they were.
    async fn delete_expired(&self, now: Millis, limit: usize) -> Result<Vec<TaskRecord>, StoreError>;
}
