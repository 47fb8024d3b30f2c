//! The JSON-RPC 2.0 envelope: requests, notifications, responses and error objects.
//!
//! MCP carries every message in this envelope
//! (<https://www.jsonrpc.org/specification>, MCP `basic/index`). Decoding
//! classifies every failure the way the specification asks an answer to be
//! shaped: bytes that are not JSON are a parse error (-32700), JSON that is not a
//! message is an invalid request (-32600), and the id is recovered whenever the
//! input carried one so the sender can match the error to its request.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::{ErrorCode, ErrorObject};

/// The only JSON-RPC version MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string or an integer, never `null` (MCP `basic/index#requests`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for anything but a string or an integer.
    pub fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            _ => None,
        }
    }
}

/// A request: it expects exactly one response with the same id.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Unique among the sender's outstanding requests.
    pub id: RequestId,
    /// The method name, for example `tools/call`.
    pub method: String,
    /// The parameters; MCP always uses an object when present.
    pub params: Option<Value>,
}

/// A notification: no id, no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, for example `notifications/progress`.
    pub method: String,
    /// The parameters; MCP always uses an object when present.
    pub params: Option<Value>,
}

/// A successful response. The result is kept as raw JSON so a handler's typed
/// result is serialized once, straight into the outgoing bytes.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result object, already encoded.
    pub result: Box<RawValue>,
}

/// An error response. The id is absent only when it could not be read from the
/// request (a parse error, for example).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers, when known.
    pub id: Option<RequestId>,
    /// What went wrong.
    pub error: ErrorObject,
}

/// Any JSON-RPC message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A successful response.
    Response(Response),
    /// An error response.
    Error(ErrorResponse),
}

/// What one unit of input (a stdio line, an HTTP body) decoded into.
#[derive(Debug)]
pub enum Frame {
    /// A single message.
    Single(Message),
    /// A JSON array of messages (allowed by MCP 2025-03-26 only). Each element
    /// is decoded on its own, so one bad element does not spoil the rest.
    Batch(Vec<Result<Message, ErrorResponse>>),
}

impl Request {
    /// Builds a request.
    pub fn new(id: impl Into<RequestId>, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            id: id.into(),
            method: method.into(),
            params,
        }
    }
}

impl Notification {
    /// Builds a notification.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification {
            method: method.into(),
            params,
        }
    }
}

impl Response {
    /// Builds a response by serializing `result`.
    ///
    /// ```
    /// use toolport_protocol::jsonrpc::{RequestId, Response};
    /// let r = Response::new(RequestId::Number(1), &serde_json::json!({"resultType": "complete"})).unwrap();
    /// assert_eq!(r.result.get(), r#"{"resultType":"complete"}"#);
    /// ```
    pub fn new<T: Serialize + ?Sized>(id: RequestId, result: &T) -> serde_json::Result<Self> {
        Ok(Response {
            id,
            result: serde_json::value::to_raw_value(result)?,
        })
    }
}

impl ErrorResponse {
    /// Builds an error response.
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        ErrorResponse { id, error }
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}
impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}
impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}
impl From<ErrorResponse> for Message {
    fn from(e: ErrorResponse) -> Self {
        Message::Error(e)
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Request", 4)?;
        st.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("method", &self.method)?;
        if let Some(p) = &self.params {
            st.serialize_field("params", p)?;
        }
        st.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Notification", 3)?;
        st.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        st.serialize_field("method", &self.method)?;
        if let Some(p) = &self.params {
            st.serialize_field("params", p)?;
        }
        st.end()
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Response", 3)?;
        st.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("result", &self.result)?;
        st.end()
    }
}

impl Serialize for ErrorResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("ErrorResponse", 3)?;
        st.serialize_field("jsonrpc", JSONRPC_VERSION)?;
        // JSON-RPC 2.0 asks for `"id": null` when the id could not be determined.
        st.serialize_field("id", &self.id)?;
        st.serialize_field("error", &self.error)?;
        st.end()
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(m) => m.serialize(s),
            Message::Notification(m) => m.serialize(s),
            Message::Response(m) => m.serialize(s),
            Message::Error(m) => m.serialize(s),
        }
    }
}

/// Encodes a message as compact JSON. Compact JSON never contains a raw newline,
/// which is what makes newline-delimited framing (stdio) safe.
pub fn encode(message: &Message) -> Vec<u8> {
    if let Message::Response(response) = message {
        return encode_response(&response.id, &response.result);
    }
    // Serializing our own types into a Vec cannot fail: every map key is a string.
    serde_json::to_vec(message).expect("messages always serialize")
}

/// Encodes a successful response: the envelope written around the result,
/// which is already JSON, into a buffer sized for both. The answer to every
/// request goes through here.
///
/// ```
/// use toolport_protocol::jsonrpc::{RequestId, encode_response};
/// let result = serde_json::value::RawValue::from_string(r#"{"tools":[]}"#.into()).unwrap();
/// let bytes = encode_response(&RequestId::Number(7), &result);
/// assert_eq!(bytes, br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#);
/// ```
pub fn encode_response(id: &RequestId, result: &RawValue) -> Vec<u8> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    const RESULT: &[u8] = br#","result":"#;
    let result = result.get().as_bytes();
    // Room for any integer id (at most 20 digits and a sign); a long string id grows the buffer.
    const ID: usize = 24;
    let mut out = Vec::with_capacity(HEAD.len() + ID + RESULT.len() + result.len() + 1);
    out.extend_from_slice(HEAD);
    // Writing a number or an escaped string into a Vec cannot fail.
    serde_json::to_writer(&mut out, id).expect("a request id always serializes");
    out.extend_from_slice(RESULT);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

/// The envelope as it arrives, before it is classified.
#[derive(Deserialize)]
struct RawMessage {
    jsonrpc: Option<String>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<String>,
    params: Option<Value>,
    result: Option<Box<RawValue>>,
    error: Option<Value>,
}

/// Keeps `"id": null` apart from a missing id: `Some(Value::Null)` versus `None`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Decodes one unit of input into a message or a batch.
///
/// The error, when there is one, is ready to be sent back as it is.
///
/// ```
/// use toolport_protocol::jsonrpc::{decode, Frame, Message};
/// let frame = decode(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#).unwrap();
/// assert!(matches!(frame, Frame::Single(Message::Request(r)) if r.method == "tools/list"));
/// let err = decode(b"{not json").unwrap_err();
/// assert_eq!(err.error.code, -32700);
/// ```
pub fn decode(bytes: &[u8]) -> Result<Frame, ErrorResponse> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return decode_batch(bytes);
    }
    match serde_json::from_slice::<RawMessage>(bytes) {
        Ok(raw) => classify(raw).map(Frame::Single),
        Err(e) => Err(decode_failure(bytes, &e)),
    }
}

fn decode_batch(bytes: &[u8]) -> Result<Frame, ErrorResponse> {
    let items: Vec<Value> = match serde_json::from_slice(bytes) {
        Ok(items) => items,
        Err(e) => return Err(decode_failure(bytes, &e)),
    };
    if items.is_empty() {
        return Err(ErrorResponse::new(
            None,
            ErrorObject::new(ErrorCode::INVALID_REQUEST, "Invalid Request: an empty batch"),
        ));
    }
    let messages = items
        .into_iter()
        .map(|item| {
            let id = item.get("id").and_then(RequestId::from_value);
            match RawMessage::deserialize(item) {
                Ok(raw) => classify(raw),
                Err(e) => Err(invalid(id, &format!("batch element is not a message: {e}"))),
            }
        })
        .collect();
    Ok(Frame::Batch(messages))
}

/// Builds the answer for input serde could not read as a message.
fn decode_failure(bytes: &[u8], e: &serde_json::Error) -> ErrorResponse {
    if e.is_syntax() || e.is_eof() || e.is_io() {
        return ErrorResponse::new(
            None,
            ErrorObject::new(ErrorCode::PARSE_ERROR, format!("Parse error: {e}")),
        );
    }
    // Valid JSON of the wrong shape: recover the id if there is one.
    let id = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v.get("id").and_then(RequestId::from_value));
    invalid(id, &format!("not a JSON-RPC 2.0 message: {e}"))
}

fn invalid(id: Option<RequestId>, why: &str) -> ErrorResponse {
    ErrorResponse::new(
        id,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, format!("Invalid Request: {why}")),
    )
}

fn classify(raw: RawMessage) -> Result<Message, ErrorResponse> {
    let id = match &raw.id {
        None | Some(Value::Null) => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => return Err(invalid(None, "`id` must be a string or an integer")),
        },
    };
    if raw.jsonrpc.as_deref() != Some(JSONRPC_VERSION) {
        return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
    }
    if let Some(params) = &raw.params
        && !params.is_object()
        && !params.is_array()
    {
        return Err(invalid(id, "`params` must be an object"));
    }
    match (raw.method, raw.result, raw.error) {
        (Some(method), None, None) => match (raw.id, id) {
            (None, _) => Ok(Message::Notification(Notification {
                method,
                params: raw.params,
            })),
            (Some(_), Some(id)) => Ok(Message::Request(Request {
                id,
                method,
                params: raw.params,
            })),
            (Some(_), None) => Err(invalid(None, "a request `id` must not be null")),
        },
        (None, Some(result), None) => match id {
            Some(id) => Ok(Message::Response(Response { id, result })),
            None => Err(invalid(None, "a response needs the `id` of its request")),
        },
        (None, None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
            Ok(error) => Ok(Message::Error(ErrorResponse { id, error })),
            Err(e) => Err(invalid(id, &format!("malformed `error` object: {e}"))),
        },
        (None, None, None) => Err(invalid(id, "no `method`, `result` or `error`")),
        _ => Err(invalid(
            id,
            "a message has exactly one of `method`, `result` and `error`",
        )),
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawMessage::deserialize(d)?;
        classify(raw).map_err(|e| de::Error::custom(e.error.message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(input: &str) -> ErrorResponse {
        decode(input.as_bytes()).expect_err(input)
    }

    #[test]
    fn classifies_every_kind_of_message() {
        let cases = [
            (r#"{"jsonrpc":"2.0","id":"a","method":"m"}"#, "request"),
            (r#"{"jsonrpc":"2.0","method":"m","params":{}}"#, "notification"),
            (r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, "response"),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#,
                "error",
            ),
        ];
        for (input, kind) in cases {
            let Ok(Frame::Single(m)) = decode(input.as_bytes()) else {
                panic!("{input}")
            };
            let got = match m {
                Message::Request(_) => "request",
                Message::Notification(_) => "notification",
                Message::Response(_) => "response",
                Message::Error(_) => "error",
            };
            assert_eq!(got, kind, "{input}");
            // Encoding gives back the same JSON.
            let again: Value = serde_json::from_slice(&encode(&match decode(input.as_bytes()).unwrap() {
                Frame::Single(m) => m,
                Frame::Batch(_) => unreachable!(),
            }))
            .unwrap();
            assert_eq!(again, serde_json::from_str::<Value>(input).unwrap());
        }
    }

    #[test]
    fn responses_are_written_as_serde_writes_them() {
        let ids = [
            RequestId::Number(0),
            RequestId::Number(-9_007_199_254_740_993),
            RequestId::String(String::new()),
            RequestId::String("quote \" back\\slash \n newline \u{1} ctl é".into()),
        ];
        for id in ids {
            for result in [
                r#"{}"#,
                r#"{"content":[{"type":"text","text":"a\"b"}]}"#,
                "null",
                "[1,2]",
            ] {
                let response = Response {
                    id: id.clone(),
                    result: RawValue::from_string(result.to_owned()).unwrap(),
                };
                let by_serde = serde_json::to_vec(&response).unwrap();
                assert_eq!(encode(&Message::Response(response)), by_serde, "{id} {result}");
            }
        }
    }

    #[test]
    fn bad_input_gets_the_right_code_and_keeps_the_id() {
        assert_eq!(err("{\"jsonrpc\":").error.code, ErrorCode::PARSE_ERROR);
        assert_eq!(err("").error.code, ErrorCode::PARSE_ERROR);
        assert_eq!(err("\u{1}").error.code, ErrorCode::PARSE_ERROR);
        let e = err(r#"{"jsonrpc":"1.0","id":5,"method":"m"}"#);
        assert_eq!(
            (e.error.code, e.id),
            (ErrorCode::INVALID_REQUEST, Some(RequestId::Number(5)))
        );
        let e = err(r#"{"jsonrpc":"2.0","id":"x","method":7}"#);
        assert_eq!(
            (e.error.code, e.id),
            (ErrorCode::INVALID_REQUEST, Some(RequestId::from("x")))
        );
        for input in [
            r#"42"#,
            r#""text""#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"s"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#,
            r#"{"id":1,"method":"m"}"#,
            "[]",
        ] {
            assert_eq!(err(input).error.code, ErrorCode::INVALID_REQUEST, "{input}");
        }
    }

    #[test]
    fn batches_decode_element_by_element() {
        let Ok(Frame::Batch(items)) =
            decode(br#"[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"n"}]"#)
        else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert!(matches!(items[0], Ok(Message::Request(_))));
        assert_eq!(items[1].as_ref().unwrap_err().error.code, ErrorCode::INVALID_REQUEST);
        assert!(matches!(items[2], Ok(Message::Notification(_))));
        assert_eq!(err("[1, ").error.code, ErrorCode::PARSE_ERROR);
    }

    #[test]
    fn error_responses_without_id_say_null() {
        let e = ErrorResponse::new(None, ErrorObject::new(ErrorCode::PARSE_ERROR, "Parse error"));
        assert_eq!(
            String::from_utf8(encode(&e.into())).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        );
    }
}
