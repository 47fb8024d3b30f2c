//! What a server asks of the client in an [`InputRequiredResult`], and that
//! result itself.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::elicitation::ElicitRequestParams;
use crate::meta::Meta;
use crate::result::{ResultType, mcp_result};
use crate::sampling::CreateMessageRequestParams;

/// A request the server needs the client to fulfil before it can answer.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// Ask the user.
    Elicit(ElicitRequestParams),
    /// Ask the model.
    Sample(CreateMessageRequestParams),
    /// Ask for the client's roots.
    ListRoots(Option<RootsParams>),
}

/// Params of an embedded `roots/list` request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RootsParams {
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl InputRequest {
    /// The JSON-RPC method this request stands for.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => crate::elicitation::CREATE,
            InputRequest::Sample(_) => crate::sampling::CREATE_MESSAGE,
            InputRequest::ListRoots(_) => crate::roots::LIST,
        }
    }

    /// The params as JSON (`None` for a bare `roots/list`).
    pub fn params(&self) -> Option<Value> {
        let value = match self {
            InputRequest::Elicit(p) => serde_json::to_value(p),
            InputRequest::Sample(p) => serde_json::to_value(p),
            InputRequest::ListRoots(None) => return None,
            InputRequest::ListRoots(Some(p)) => serde_json::to_value(p),
        };
        // Our own param types always serialize.
        Some(value.expect("params serialize"))
    }

    /// Reads a request from its method and params.
    pub fn from_parts(method: &str, params: Option<Value>) -> Result<Self, String> {
        let parse = |p: Option<Value>| p.ok_or_else(|| format!("{method} needs params"));
        match method {
            crate::elicitation::CREATE => serde_json::from_value(parse(params)?).map(InputRequest::Elicit),
            crate::sampling::CREATE_MESSAGE => serde_json::from_value(parse(params)?).map(InputRequest::Sample),
            crate::roots::LIST => params
                .map(serde_json::from_value)
                .transpose()
                .map(InputRequest::ListRoots),
            other => return Err(format!("{other:?} is not an input request")),
        }
        .map_err(|e| e.to_string())
    }
}

#[derive(Serialize, Deserialize)]
struct InputRequestWire {
    method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    params: Option<Value>,
}

impl Serialize for InputRequest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        InputRequestWire {
            method: self.method().to_owned(),
            params: self.params(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = InputRequestWire::deserialize(d)?;
        InputRequest::from_parts(&wire.method, wire.params).map_err(serde::de::Error::custom)
    }
}

/// Server-assigned key to request.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The result that asks the client for input and a retry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// What the client must fulfil.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to echo on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Always `input_required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

mcp_result!(InputRequiredResult);
