//! The JSON-RPC binding (§9): one POST endpoint, PascalCase methods,
//! streaming methods answered with server-sent events of JSON-RPC
//! responses.

use http::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolport_http::MountBody;

use crate::agent::Caller;
use crate::error::A2aError;
use crate::service::A2aService;
use crate::sse::{self, Reply, value};
use crate::types::ListTasksQuery;
use crate::types::{PushConfig, SendMessageRequest};

const JSON: &str = "application/json";

/// Answers one JSON-RPC request body (the version and content type were
/// checked by the caller; `refused` carries what they found wrong).
pub(crate) async fn answer(
    service: &A2aService,
    caller: &Caller,
    base: &str,
    body: &[u8],
    refused: Option<A2aError>,
) -> http::Response<MountBody> {
    let request: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => return error(Value::Null, &A2aError::Parse(format!("the body is not JSON: {e}"))),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    if !matches!(id, Value::Null | Value::String(_) | Value::Number(_)) {
        return error(
            Value::Null,
            &A2aError::InvalidRequest("id must be a string, a number or null".into()),
        );
    }
    let method = match (&request, request.get("jsonrpc"), request.get("method")) {
        (Value::Object(_), Some(Value::String(v)), Some(Value::String(m))) if v == "2.0" => m.clone(),
        (Value::Array(_), ..) => {
            return error(
                Value::Null,
                &A2aError::InvalidRequest("batches are not supported; send one request per POST".into()),
            );
        }
        _ => {
            return error(
                id,
                &A2aError::InvalidRequest(
                    "a JSON-RPC 2.0 request needs \"jsonrpc\": \"2.0\" and a string \"method\"".into(),
                ),
            );
        }
    };
    if let Some(refusal) = refused {
        return error(id, &refusal);
    }
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    match call(service, caller, base, &method, params).await {
        Ok(Reply::Value(result)) => sse::json(
            StatusCode::OK,
            JSON,
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        ),
        Ok(Reply::Stream(items)) => sse::events(items, move |item| json!({"jsonrpc": "2.0", "id": id, "result": item})),
        Err(e) => error(id, &e),
    }
}

async fn call(
    service: &A2aService,
    caller: &Caller,
    base: &str,
    method: &str,
    params: Value,
) -> Result<Reply, A2aError> {
    match method {
        "SendMessage" => value(service.send(caller, decode::<SendMessageRequest>(params)?).await?),
        "SendStreamingMessage" => Ok(Reply::Stream(
            service
                .send_streaming(caller, decode::<SendMessageRequest>(params)?)
                .await?,
        )),
        "GetTask" => {
            let p: TaskParams = decode(params)?;
            value(service.get(caller, &p.id, p.history_length).await?)
        }
        "ListTasks" => value(service.list(caller, decode::<ListTasksQuery>(params)?).await?),
        "CancelTask" => value(service.cancel(caller, &decode::<TaskParams>(params)?.id).await?),
        "SubscribeToTask" => Ok(Reply::Stream(
            service.subscribe(caller, &decode::<TaskParams>(params)?.id).await?,
        )),
        "CreateTaskPushNotificationConfig" => value(service.create_push(caller, push_config(params)?).await?),
        "GetTaskPushNotificationConfig" => {
            let p: ConfigParams = decode(params)?;
            value(service.get_push(caller, &p.task_id, &p.id).await?)
        }
        "ListTaskPushNotificationConfigs" => {
            let p: ConfigParams = decode(params)?;
            let configs = service.list_push(caller, &p.task_id).await?;
            value(json!({"configs": configs, "nextPageToken": ""}))
        }
        "DeleteTaskPushNotificationConfig" => {
            let p: ConfigParams = decode(params)?;
            service.delete_push(caller, &p.task_id, &p.id).await?;
            value(json!({}))
        }
        "GetExtendedAgentCard" => value(service.extended_card(caller, base)?),
        other => Err(A2aError::MethodNotFound(format!(
            "method {other:?} not found; A2A 1.0 methods are PascalCase (SendMessage, GetTask, ...)"
        ))),
    }
}

/// `{id, historyLength}` of the task methods.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskParams {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) history_length: Option<i32>,
}

/// `{taskId, id}` of the push configuration methods.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConfigParams {
    pub(crate) task_id: String,
    #[serde(default)]
    pub(crate) id: String,
}

/// A push configuration as sent: the configuration itself, or (as some
/// clients send it) `{taskId, config}`.
pub(crate) fn push_config(params: Value) -> Result<PushConfig, A2aError> {
    let mut params = params;
    if let Some(Value::Object(inner)) = params
        .get("config")
        .or_else(|| params.get("pushNotificationConfig"))
        .cloned()
    {
        let task_id = params.get("taskId").cloned();
        params = Value::Object(inner);
        if let (Some(task_id), Value::Object(map)) = (task_id, &mut params) {
            map.entry("taskId").or_insert(task_id);
        }
    }
    decode(params)
}

pub(crate) fn decode<T: DeserializeOwned>(params: Value) -> Result<T, A2aError> {
    serde_json::from_value(params).map_err(|e| A2aError::InvalidParams(format!("invalid params: {e}")))
}

fn error(id: Value, error: &A2aError) -> http::Response<MountBody> {
    sse::json(
        StatusCode::OK,
        JSON,
        &json!({"jsonrpc": "2.0", "id": id, "error": error.to_jsonrpc()}),
    )
}
