//! Reading a request body within the configured size limit.

use bytes::Bytes;

use crate::reply::{self, HttpResponse};

/// Reads a request body of at most `max` bytes; more is answered 413, a
/// body that breaks off 400.
pub(crate) async fn read_limited(body: hyper::body::Incoming, max: usize) -> Result<Bytes, Box<HttpResponse>> {
    use http_body_util::{BodyExt, Limited};
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            let why = format!("Payload Too Large: the body exceeds {max} bytes");
            let error = toolport_protocol::ErrorObject::invalid_request(why);
            Err(Box::new(reply::error(http::StatusCode::PAYLOAD_TOO_LARGE, None, error)))
        }
        Err(e) => Err(Box::new(reply::bad_request(
            None,
            format!("could not read the body: {e}"),
        ))),
    }
}
