//! Resources and resource templates as plain async functions.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use toolport_protocol::content::ResourceContents;
use toolport_protocol::resources::{Resource, ResourceTemplate};

use crate::cache::CacheHints;
use crate::completion::Completer;
use crate::context::RequestContext;
use crate::error::ResourceError;
use crate::tool::BoxFuture;
use crate::uri_template::UriTemplate;

/// What a resource handler is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    /// The URI being read.
    pub uri: String,
    /// For a template: its variables, decoded.
    pub variables: BTreeMap<String, String>,
}

type ErasedResourceFn = Arc<
    dyn Fn(RequestContext, ResourceRequest) -> BoxFuture<Result<Vec<ResourceContents>, ResourceError>> + Send + Sync,
>;

fn erase<F, Fut, O>(handler: F) -> ErasedResourceFn
where
    F: Fn(RequestContext, ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    O: IntoContents,
{
    let handler = Arc::new(handler);
    Arc::new(move |cx, request| {
        let handler = handler.clone();
        Box::pin(async move { handler(cx, request).await.into_contents() })
    })
}

/// A fixed resource, ready to register.
#[derive(Clone)]
pub struct ResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) handler: ErasedResourceFn,
    pub(crate) cache: Option<CacheHints>,
}

impl fmt::Debug for ResourceEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEntry")
            .field("uri", &self.resource.uri)
            .finish_non_exhaustive()
    }
}

impl ResourceEntry {
    /// A resource served by `handler`.
    ///
    /// ```
    /// use toolport_protocol::content::ResourceContents;
    /// use toolport_protocol::resources::Resource;
    /// use toolport_server::ResourceEntry;
    ///
    /// let readme = ResourceEntry::new(Resource::new("docs://readme", "readme"), |_cx, req| async move {
    ///     vec![ResourceContents::text(req.uri, Some("text/plain"), "Hello")]
    /// });
    /// # let _ = readme;
    /// ```
    pub fn new<F, Fut, O>(resource: Resource, handler: F) -> Self
    where
        F: Fn(RequestContext, ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = O> + Send + 'static,
        O: IntoContents,
    {
        ResourceEntry {
            resource,
            handler: erase(handler),
            cache: None,
        }
    }

    /// Cache hints for reads of this resource (2026-07-28), in place of the
    /// server's `read_cache`.
    pub fn cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self
    }

    /// The definition `resources/list` shows.
    pub fn definition(&self) -> &Resource {
        &self.resource
    }
}

/// A resource template, ready to register.
#[derive(Clone)]
pub struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) matcher: UriTemplate,
    pub(crate) handler: ErasedResourceFn,
    pub(crate) completers: BTreeMap<String, Completer>,
    pub(crate) cache: Option<CacheHints>,
    pub(crate) error: Option<String>,
}

impl fmt::Debug for TemplateEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TemplateEntry")
            .field("uri_template", &self.template.uri_template)
            .finish_non_exhaustive()
    }
}

impl TemplateEntry {
    /// A template served by `handler`, which gets the matched variables.
    pub fn new<F, Fut, O>(template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(RequestContext, ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = O> + Send + 'static,
        O: IntoContents,
    {
        let (matcher, error) = match UriTemplate::parse(&template.uri_template) {
            Ok(m) => (m, None),
            Err(e) => (UriTemplate::parse("").expect("empty template parses"), Some(e)),
        };
        TemplateEntry {
            template,
            matcher,
            handler: erase(handler),
            completers: BTreeMap::new(),
            cache: None,
            error,
        }
    }

    /// Cache hints for reads of every resource this template matches
    /// (2026-07-28), in place of the server's `read_cache`.
    pub fn cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self
    }

    /// Completes the variable `name` with `completer`.
    pub fn complete(mut self, name: &str, completer: Completer) -> Self {
        self.completers.insert(name.to_owned(), completer);
        self
    }

    /// The definition `resources/templates/list` shows.
    pub fn definition(&self) -> &ResourceTemplate {
        &self.template
    }
}

/// What a resource handler may return.
pub trait IntoContents: Send + 'static {
    /// The contents.
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError>;
}

impl IntoContents for ResourceContents {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self)
    }
}

impl<T: IntoContents, E: Into<ResourceError> + Send + 'static> IntoContents for Result<T, E> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        self.map_err(Into::into)?.into_contents()
    }
}
