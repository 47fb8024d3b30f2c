//! Open routing: methods beyond the core protocol, registered on the builder
//! and advertised under `capabilities.extensions` (`basic/extensions`).
//!
//! An extension is an identifier (`io.modelcontextprotocol/tasks`,
//! `com.example/search`), the settings object clients see in the server's
//! capabilities, and the methods it adds. Its methods are served in both
//! eras, over every transport, after the same era and version checks as the
//! core methods; their handlers get the same [`RequestContext`] a tool gets.
//!
//! ```
//! use serde_json::json;
//! use toolport_server::{Extension, Server};
//!
//! let jobs = Extension::new("com.example/jobs")
//!     .settings(json!({ "maxJobs": 4 }))
//!     .method("jobs/count", |_cx, _params| async move { Ok(json!({ "count": 0 })) });
//! let server = Server::builder("jobs", "1.0.0").extension(jobs).build().expect("valid definitions");
//! assert!(server.capabilities().extensions.unwrap().contains_key("com.example/jobs"));
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use toolport_protocol::ErrorObject;
use toolport_protocol::meta::Meta;
use toolport_protocol::result::{McpResult, ResultType};

use crate::context::RequestContext;
use crate::registry::DefinitionError;
use crate::tool::BoxFuture;

/// What an extension method answers: a result object (the server adds what
/// the request's era needs, such as `resultType`; anything but an object is
/// answered as an internal error), or a JSON-RPC error.
pub type MethodResult = Result<Value, ErrorObject>;

/// The handler of one extension method.
pub trait MethodHandler: Send + Sync + 'static {
    /// Answers one request with its params (`_meta` already read and removed).
    fn call(&self, cx: RequestContext, params: Map<String, Value>) -> BoxFuture<MethodResult>;
}

impl<F, Fut> MethodHandler for F
where
    F: Fn(RequestContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MethodResult> + Send + 'static,
{
    fn call(&self, cx: RequestContext, params: Map<String, Value>) -> BoxFuture<MethodResult> {
        Box::pin(self(cx, params))
    }
}

/// One extension: its identifier, its advertised settings and its methods.
pub struct Extension {
    id: String,
    settings: Map<String, Value>,
    methods: Vec<(String, Arc<dyn MethodHandler>)>,
}

impl fmt::Debug for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extension")
            .field("id", &self.id)
            .field("methods", &self.methods.iter().map(|(m, _)| m).collect::<Vec<_>>())
            .finish()
    }
}

impl Extension {
    /// An extension with this identifier (`vendor-prefix/name`), no settings
    /// and no methods yet.
    pub fn new(id: impl Into<String>) -> Self {
        Extension {
            id: id.into(),
            settings: Map::new(),
            methods: Vec::new(),
        }
    }

    /// The settings object advertised under `capabilities.extensions[id]`;
    /// anything but an object is advertised as `{}`.
    pub fn settings(mut self, settings: Value) -> Self {
        self.settings = match settings {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        self
    }

    /// Adds a method this extension answers.
    pub fn method(mut self, name: impl Into<String>, handler: impl MethodHandler) -> Self {
        self.methods.push((name.into(), Arc::new(handler)));
        self
    }

    /// The identifier.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Every registered extension, and their methods by name.
#[derive(Default)]
pub(crate) struct Extensions {
    /// `capabilities.extensions`, or `None` when there are none.
    advertised: Option<Map<String, Value>>,
    methods: HashMap<String, Arc<dyn MethodHandler>>,
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("advertised", &self.advertised)
            .field("methods", &self.methods.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Extensions {
    /// Collects the extensions, refusing an identifier without a vendor
    /// prefix, an identifier or a method registered twice, and a method the
    /// core protocol already defines.
    pub(crate) fn new(extensions: Vec<Extension>, core_methods: &[&str]) -> Result<Self, DefinitionError> {
        let mut all = Extensions::default();
        for extension in extensions {
            let valid_id = extension
                .id
                .split_once('/')
                .is_some_and(|(prefix, name)| !prefix.is_empty() && !name.is_empty());
            if !valid_id {
                return Err(DefinitionError(format!(
                    "extension identifier {:?} must be `vendor-prefix/name`",
                    extension.id
                )));
            }
            let advertised = all.advertised.get_or_insert_with(Map::new);
            if advertised
                .insert(extension.id.clone(), Value::Object(extension.settings))
                .is_some()
            {
                return Err(DefinitionError(format!(
                    "extension {:?} is registered twice",
                    extension.id
                )));
            }
            for (method, handler) in extension.methods {
                if method.is_empty() || core_methods.contains(&method.as_str()) {
                    return Err(DefinitionError(format!(
                        "extension {:?} cannot define the method {method:?}: the protocol defines it",
                        extension.id
                    )));
                }
                if all.methods.insert(method.clone(), handler).is_some() {
                    return Err(DefinitionError(format!(
                        "method {method:?} is defined by two extensions"
                    )));
                }
            }
        }
        Ok(all)
    }

    /// `capabilities.extensions`.
    pub(crate) fn advertised(&self) -> Option<Map<String, Value>> {
        self.advertised.clone()
    }

    /// The handler of an extension method.
    pub(crate) fn method(&self, name: &str) -> Option<&Arc<dyn MethodHandler>> {
        self.methods.get(name)
    }
}

/// An extension method's result object with the fields every result shares
/// taken out, so the server shapes it for the request's era like any other.
#[derive(Debug, Serialize)]
pub(crate) struct ExtensionResult {
    #[serde(flatten)]
    fields: Map<String, Value>,
    #[serde(rename = "resultType", skip_serializing_if = "Option::is_none")]
    result_type: Option<ResultType>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Meta>,
}

impl From<Map<String, Value>> for ExtensionResult {
    fn from(mut fields: Map<String, Value>) -> Self {
        // An extension may name its own result type (a task, say); the
        // handshake era has none, and `finish` leaves it out there.
        let result_type = fields.remove("resultType").and_then(|t| serde_json::from_value(t).ok());
        let meta = match fields.remove("_meta") {
            Some(Value::Object(meta)) => Some(meta),
            _ => None,
        };
        ExtensionResult {
            fields,
            result_type,
            meta,
        }
    }
}

impl McpResult for ExtensionResult {
    fn result_type_mut(&mut self) -> &mut Option<ResultType> {
        &mut self.result_type
    }
    fn meta_mut(&mut self) -> &mut Option<Meta> {
        &mut self.meta
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn answer(_: RequestContext, _: Map<String, Value>) -> BoxFuture<MethodResult> {
        Box::pin(async { Ok(json!({})) })
    }

    #[test]
    fn identifiers_and_methods_are_checked_once_at_build() {
        let ok = Extensions::new(
            vec![
                Extension::new("com.example/a")
                    .settings(json!({"x": 1}))
                    .method("a/run", answer),
            ],
            &["tools/call"],
        )
        .unwrap();
        assert_eq!(
            ok.advertised(),
            Some(json!({"com.example/a": {"x": 1}}).as_object().unwrap().clone())
        );
        assert!(ok.method("a/run").is_some());
        assert!(ok.method("tools/call").is_none());

        let refused = |extensions: Vec<Extension>| Extensions::new(extensions, &["tools/call"]).unwrap_err().0;
        assert!(refused(vec![Extension::new("noprefix")]).contains("vendor-prefix/name"));
        assert!(refused(vec![Extension::new("/x")]).contains("vendor-prefix/name"));
        assert!(refused(vec![Extension::new("a/b"), Extension::new("a/b")]).contains("twice"));
        assert!(refused(vec![Extension::new("a/b").method("tools/call", answer)]).contains("protocol defines it"));
        assert!(
            refused(vec![
                Extension::new("a/b").method("m", answer),
                Extension::new("a/c").method("m", answer)
            ])
            .contains("two extensions")
        );
    }

    #[test]
    fn no_extensions_advertise_nothing() {
        assert_eq!(Extensions::new(Vec::new(), &[]).unwrap().advertised(), None);
    }
}
