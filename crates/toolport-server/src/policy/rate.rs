//! Token-bucket rate limits, per principal and per tool, in the server's
//! [`RateLimiter`] (governor's GCRA in memory by default).

use std::sync::Arc;
use std::time::Duration;

use toolport_protocol::ErrorObject;

use super::layer::{CallFuture, CallLayer, Next, ToolCall};
use super::{ByName, RateConfig, overloaded};
use crate::activity::Activity;
use crate::error::ToolError;
use crate::state::{RateDecision, RateLimiter};

/// The rate limits of one server and where their buckets live.
#[derive(Debug)]
pub(crate) struct RateLimits {
    limiter: Arc<dyn RateLimiter>,
    per_principal: Option<RateConfig>,
    /// By tool name or pattern (`prefix*`): a call takes a token from its
    /// tool's bucket and from every pattern's it matches.
    per_tool: ByName<RateConfig>,
    /// Where refusals are counted for the people running the server.
    activity: Arc<Activity>,
}

impl RateLimits {
    pub(crate) fn new(
        limiter: Arc<dyn RateLimiter>,
        per_principal: Option<RateConfig>,
        per_tool: ByName<RateConfig>,
        activity: Arc<Activity>,
    ) -> Self {
        RateLimits {
            limiter,
            per_principal,
            per_tool,
            activity,
        }
    }

    /// Takes a token from the principal's bucket, if principals are limited.
    async fn check_principal(&self, principal: &str) -> Result<(), ErrorObject> {
        let Some(rate) = &self.per_principal else {
            return Ok(());
        };
        // Keys are namespaced: a principal named like a tool has its own bucket.
        let key = format!("principal\u{0}{principal}");
        self.check(&key, rate, || format!("principal {principal:?}")).await
    }

    /// Takes a token from the tool's bucket and each pattern's it matches.
    async fn check_tool(&self, tool: &str) -> Result<(), ErrorObject> {
        for (pattern, rate) in self.per_tool.matching(tool) {
            match pattern {
                None => {
                    let key = format!("tool\u{0}{tool}");
                    self.check(&key, rate, || format!("tool {tool}")).await?;
                }
                Some(prefix) => {
                    // A pattern's bucket is shared by every tool it matches.
                    let key = format!("tools\u{0}{prefix}*");
                    self.check(&key, rate, || format!("the tools {prefix}*")).await?;
                }
            }
        }
        Ok(())
    }

    async fn check(&self, key: &str, rate: &RateConfig, what: impl FnOnce() -> String) -> Result<(), ErrorObject> {
        match self.limiter.check(key, rate).await {
            Ok(RateDecision::Allowed) => Ok(()),
            Ok(RateDecision::RetryAfter(wait)) => {
                let what = what();
                let refusal = rejected(&what, wait);
                self.activity.record_rate_refusal(what);
                Err(refusal)
            }
            Err(e) => Err(e.to_error_object("the rate limit could not be checked")),
        }
    }
}

/// The cheapest refusal comes first: a call over its rates never takes a
/// gate's place or an idempotency key.
impl CallLayer for RateLimits {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        Box::pin(async move {
            self.check_principal(call.subject())
                .await
                .map_err(ToolError::Protocol)?;
            self.check_tool(call.name).await.map_err(ToolError::Protocol)?;
            next.run(call).await
        })
    }
}

fn rejected(what: &str, wait: Duration) -> ErrorObject {
    metrics::counter!("toolport_rejections_total", "reason" => "rate_limited").increment(1);
    overloaded(&format!("rate limit of {what} reached"), wait)
}
