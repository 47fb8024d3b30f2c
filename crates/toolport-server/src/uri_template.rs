//! Matching URIs against RFC 6570 templates, the subset MCP servers use:
//! literal text, `{var}` (one path segment: no `/`, `?` or `#`) and `{+var}`
//! (reserved expansion: anything).

use std::collections::BTreeMap;

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

impl UriTemplate {
    /// Parses a template. Fails on unclosed braces, empty names and operators
    /// other than `+`.
    pub fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| format!("unclosed '{{' in {template:?}"))?
                + open;
            let expr = &rest[open + 1..close];
            let (name, reserved) = match expr.strip_prefix('+') {
                Some(name) => (name, true),
                None => (expr, false),
            };
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!("unsupported expression {{{expr}}} in {template:?}"));
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err(format!("two variables without text between them in {template:?}"));
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &rest[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriTemplate { parts })
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables of `uri`, when it matches.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut vars = BTreeMap::new();
        match_parts(&self.parts, uri, &mut vars).then_some(vars)
    }
}

fn match_parts(parts: &[Part], input: &str, vars: &mut BTreeMap<String, String>) -> bool {
    match parts.split_first() {
        None => input.is_empty(),
        Some((Part::Literal(lit), rest)) => input
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars)),
        Some((Part::Var { name, reserved }, rest)) => {
            // Try the longest value first, then shorter ones; templates are
            // short, so backtracking stays cheap.
            let allowed = |c: char| *reserved || !matches!(c, '/' | '?' | '#');
            let limit = input
                .char_indices()
                .find(|&(_, c)| !allowed(c))
                .map_or(input.len(), |(i, _)| i);
            // A variable matches at least one character.
            let mut ends: Vec<usize> = input[..limit].char_indices().map(|(i, _)| i).skip(1).collect();
            ends.push(limit);
            for end in ends.into_iter().rev().filter(|&end| end > 0) {
                if match_parts(rest, &input[end..], vars) {
                    vars.insert(name.clone(), percent_decode(&input[..end]));
                    return true;
                }
            }
            false
        }
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
        {
            let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
            out.push(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn matches_simple_and_reserved_variables() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(t.matches("test://template/42/data"), Some(vars(&[("id", "42")])));
        assert_eq!(t.matches("test://template/4/2/data"), None);
        assert_eq!(t.matches("test://template//data"), None);
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(t.matches("file:///a/b%20c.txt"), Some(vars(&[("path", "a/b c.txt")])));
        assert_eq!(t.matches("file:///%é%4"), Some(vars(&[("path", "%é%4")])));
        let t = UriTemplate::parse("weather://{city}/{day}").unwrap();
        assert_eq!(
            t.matches("weather://paris/monday"),
            Some(vars(&[("city", "paris"), ("day", "monday")]))
        );
        assert_eq!(t.variables().collect::<Vec<_>>(), ["city", "day"]);
    }

    #[test]
    fn rejects_what_it_cannot_match() {
        for bad in ["x://{", "x://{}", "x://{?q}", "x://{a}{b}", "x://{a b}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
