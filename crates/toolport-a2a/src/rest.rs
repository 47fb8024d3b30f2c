//! The HTTP+JSON binding (§11): resource paths under the interface URL,
//! errors as `google.rpc.Status` bodies with the §5.4 HTTP statuses.

use http::{Method, StatusCode};
use serde_json::{Map, Value, json};
use toolport_http::MountBody;

use crate::agent::Caller;
use crate::error::A2aError;
use crate::jsonrpc::{decode, push_config};
use crate::service::A2aService;
use crate::sse::{self, Reply, value};
use crate::types::ListTasksQuery;
use crate::types::SendMessageRequest;

const A2A_JSON: &str = "application/a2a+json";

/// One request to the binding: `path` is below the binding's URL.
pub(crate) struct RestRequest<'a> {
    pub(crate) caller: &'a Caller,
    /// Where the client reached the agent (for the extended card).
    pub(crate) base: &'a str,
    pub(crate) method: &'a Method,
    pub(crate) path: &'a str,
    pub(crate) query: Option<&'a str>,
    pub(crate) body: &'a [u8],
}

/// Answers one request.
pub(crate) async fn answer(service: &A2aService, request: RestRequest<'_>) -> http::Response<MountBody> {
    match route(service, request).await {
        Ok(Reply::Value(value)) => sse::json(StatusCode::OK, A2A_JSON, &value),
        Ok(Reply::Stream(items)) => sse::events(items, |item| serde_json::to_value(item).unwrap_or_default()),
        Err(e) => error(&e),
    }
}

/// The answer to an error.
pub(crate) fn error(error: &A2aError) -> http::Response<MountBody> {
    sse::json(error.status(), A2A_JSON, &error.to_rest())
}

async fn route(service: &A2aService, request: RestRequest<'_>) -> Result<Reply, A2aError> {
    let RestRequest {
        caller,
        base,
        method,
        path,
        query,
        body,
    } = request;
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let query = query_params(query);
    match (method, segments.as_slice()) {
        (&Method::POST, ["message:send"]) => value(service.send(caller, body_of::<SendMessageRequest>(body)?).await?),
        (&Method::POST, ["message:stream"]) => Ok(Reply::Stream(service.send_streaming(caller, body_of(body)?).await?)),
        (&Method::GET, ["tasks"]) => value(
            service
                .list(caller, decode::<ListTasksQuery>(Value::Object(query))?)
                .await?,
        ),
        (&Method::GET, ["extendedAgentCard"]) => value(service.extended_card(caller, base)?),
        (_, ["tasks", task]) => match (method, task.split_once(':')) {
            (&Method::GET, None) => {
                let history = match query.get("historyLength") {
                    Some(n) => Some(decode::<i32>(n.clone())?),
                    None => None,
                };
                value(service.get(caller, task, history).await?)
            }
            (&Method::POST, Some((id, "cancel"))) => value(service.cancel(caller, id).await?),
            (&Method::POST | &Method::GET, Some((id, "subscribe"))) => {
                Ok(Reply::Stream(service.subscribe(caller, id).await?))
            }
            _ => Err(not_found(method, path)),
        },
        (&Method::POST, ["tasks", task, "pushNotificationConfigs"]) => {
            let mut params = body_of::<Value>(body)?;
            if let Value::Object(map) = &mut params {
                map.insert("taskId".into(), json!(task));
            }
            let mut config = push_config(params)?;
            config.task_id = (*task).to_owned();
            value(service.create_push(caller, config).await?)
        }
        (&Method::GET, ["tasks", task, "pushNotificationConfigs"]) => {
            let configs = service.list_push(caller, task).await?;
            value(json!({"configs": configs, "nextPageToken": ""}))
        }
        (&Method::GET, ["tasks", task, "pushNotificationConfigs", id]) => {
            value(service.get_push(caller, task, id).await?)
        }
        (&Method::DELETE, ["tasks", task, "pushNotificationConfigs", id]) => {
            service.delete_push(caller, task, id).await?;
            value(json!({}))
        }
        _ => Err(not_found(method, path)),
    }
}

fn not_found(method: &Method, path: &str) -> A2aError {
    A2aError::MethodNotFound(format!("no A2A operation is {method} {path}"))
}

fn body_of<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, A2aError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| A2aError::Parse(format!("the body is not JSON: {e}")))?;
    decode(value)
}

/// The query string as JSON: numbers and booleans where they parse as such
/// (`pageSize=2`, `includeArtifacts=true`), text otherwise.
fn query_params(query: Option<&str>) -> Map<String, Value> {
    let mut params = Map::new();
    for (key, raw) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if key.eq_ignore_ascii_case("A2A-Version") {
            continue;
        }
        let value = match raw.as_ref() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            text => match text.parse::<i64>() {
                Ok(n) if key != "pageToken" && key != "contextId" => json!(n),
                _ => Value::String(text.to_owned()),
            },
        };
        params.insert(key.into_owned(), value);
    }
    params
}

#[cfg(test)]
mod tests {
    use super::query_params;
    use serde_json::json;

    #[test]
    fn query_strings_become_typed_params() {
        let params = query_params(Some(
            "pageSize=2&includeArtifacts=true&pageToken=123&status=TASK_STATE_WORKING&A2A-Version=1.0",
        ));
        assert_eq!(
            serde_json::Value::Object(params),
            json!({"pageSize": 2, "includeArtifacts": true, "pageToken": "123", "status": "TASK_STATE_WORKING"})
        );
    }
}
