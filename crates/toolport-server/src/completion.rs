//! Completion of prompt arguments and resource template variables
//! (`server/utilities/completion`).

use std::collections::BTreeMap;
use std::sync::Arc;

/// Suggests values for one argument: `(typed so far, other arguments) → values`.
pub type Completer = Arc<dyn Fn(&str, &BTreeMap<String, String>) -> Vec<String> + Send + Sync>;

/// Most values one completion returns (the spec's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// A completer over a fixed list: the values starting with what was typed,
/// ignoring case.
pub fn from_list<I, S>(values: I) -> Completer
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let values: Vec<String> = values.into_iter().map(Into::into).collect();
    Arc::new(move |typed, _| {
        let typed = typed.to_lowercase();
        values
            .iter()
            .filter(|v| v.to_lowercase().starts_with(&typed))
            .cloned()
            .collect()
    })
}
