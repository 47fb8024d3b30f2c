//! Progress and cancellation notifications (`basic/utilities/progress`,
//! `basic/utilities/cancellation`).

use serde::{Deserialize, Serialize};

use crate::jsonrpc::RequestId;
use crate::meta::Meta;

/// Method of [`ProgressNotificationParams`].
pub const PROGRESS: &str = "notifications/progress";
/// Method of [`CancelledNotificationParams`].
pub const CANCELLED: &str = "notifications/cancelled";

/// The token a request offers for progress notifications.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

/// `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    #[serde(serialize_with = "whole_number")]
    pub progress: f64,
    /// The total, when known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "optional_whole_number"
    )]
    pub total: Option<f64>,
    /// What is happening now (2025-03-26 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel. Optional in 2025-11-25 (tasks), required otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Writes `50.0` as `50`: progress is usually counted in whole steps, and an
/// integer reads better on the wire and in logs.
fn whole_number<S: serde::Serializer>(n: &f64, s: S) -> Result<S::Ok, S::Error> {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        s.serialize_i64(*n as i64)
    } else {
        s.serialize_f64(*n)
    }
}

fn optional_whole_number<S: serde::Serializer>(n: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match n {
        Some(n) => whole_number(n, s),
        None => s.serialize_none(),
    }
}
