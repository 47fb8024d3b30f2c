//! Reading one source file: its child modules and the paths it names.

use crate::graph::Reference;

/// What the reader keeps of source text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token {
    /// A keyword or name (`r#type` as `type`, `$crate` as `$` then `crate`).
    Ident(String),
    /// `::`
    PathSep,
    /// Any other single character but whitespace.
    Punct(char),
}

/// What one file contributes: its `mod x;` children, inline modules, and its paths.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub(crate) child_files: Vec<String>,
    pub(crate) inline_modules: Vec<Vec<String>>,
    pub(crate) refs: Vec<Reference>,
}

/// Splits source into identifiers, `::` and punctuation with their lines, dropping
/// comments, literals and whitespace.
pub(crate) fn lex(source: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line) = (0, 1);
    let is_ident = |c: char| c == '_' || c.is_alphanumeric();
    // Advances over chars[from..to], counting the newlines inside literals and comments.
    let skip = |from: usize, to: usize, line: &mut usize| {
        *line += chars[from..to.min(chars.len())].iter().filter(|&&c| c == '\n').count();
        to
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < chars.len() && depth > 0 {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 1;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            i = skip(i, j, &mut line);
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            i = skip(i, j + 1, &mut line);
        } else if c == '\'' {
            if next == Some('\\') {
                // The escaped char may itself be a quote: `'\''`.
                let rest = chars.get(i + 3..).unwrap_or(&[]);
                i = rest.iter().position(|&c| c == '\'').map_or(chars.len(), |p| i + 4 + p);
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1; // a lifetime or label: its name lexes as an identifier
            }
        } else if is_ident(c) && !c.is_ascii_digit() {
            let end = chars[i..]
                .iter()
                .position(|&c| !is_ident(c))
                .map_or(chars.len(), |p| i + p);
            let word: String = chars[i..end].iter().collect();
            let hashes = chars[end..].iter().take_while(|&&c| c == '#').count();
            let raw_string = matches!(word.as_str(), "r" | "br" | "cr") && chars.get(end + hashes) == Some(&'"');
            if raw_string {
                let closing: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                let body: String = chars[end + hashes + 1..].iter().collect();
                let len = body
                    .find(&closing)
                    .map_or(body.chars().count(), |p| body[..p].chars().count());
                i = skip(i, end + hashes + 1 + len + closing.len(), &mut line);
            } else if word == "r" && hashes == 1 {
                i = end + 1; // a raw identifier: `r#type` lexes as `type`
            } else {
                tokens.push((Token::Ident(word), line));
                i = end;
            }
        } else if c.is_ascii_digit() {
            i = chars[i..]
                .iter()
                .position(|&c| !is_ident(c))
                .map_or(chars.len(), |p| i + p);
        } else if c == ':' && next == Some(':') {
            tokens.push((Token::PathSep, line));
            i += 2;
        } else {
            if c == '\n' {
                line += 1;
            } else if !c.is_whitespace() {
                tokens.push((Token::Punct(c), line));
            }
            i += 1;
        }
    }
    tokens
}

/// Removes every item under `#[cfg(test)]`: the attribute, any attributes after it,
/// and the item up to its `;` or through its braced body.
pub(crate) fn drop_test_items(tokens: Vec<(Token, usize)>) -> Vec<(Token, usize)> {
    let is = |t: &Token, c: char| *t == Token::Punct(c);
    let cfg_test = [
        Token::Punct('#'),
        Token::Punct('['),
        Token::Ident("cfg".into()),
        Token::Punct('('),
        Token::Ident("test".into()),
        Token::Punct(')'),
        Token::Punct(']'),
    ];
    let mut kept = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let here: Vec<&Token> = tokens[i..].iter().take(cfg_test.len()).map(|(t, _)| t).collect();
        if here.len() < cfg_test.len() || here.iter().zip(&cfg_test).any(|(a, b)| *a != b) {
            kept.push(tokens[i].clone());
            i += 1;
            continue;
        }
        let mut depth = 0usize;
        i += cfg_test.len();
        while i < tokens.len() {
            let t = &tokens[i].0;
            i += 1;
            if is(t, '(') || is(t, '[') || is(t, '{') {
                depth += 1;
            } else if is(t, ')') || is(t, ']') || is(t, '}') {
                depth = depth.saturating_sub(1);
                // A braced item body closing at the top ends the item; `#[..]` ends at
                // depth 0 too but is followed by more of the item.
                if depth == 0 && is(t, '}') {
                    break;
                }
            } else if depth == 0 && is(t, ';') {
                break;
            }
        }
    }
    kept
}

/// Reads one file of module `module`; `shown` names the file in references.
pub(crate) fn scan_source(source: &str, module: &[String], shown: &str) -> Scan {
    let tokens = drop_test_items(lex(source));
    let ident = |i: usize| match tokens.get(i) {
        Some((Token::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let tok = |i: usize| tokens.get(i).map(|(t, _)| t);
    let mut scan = Scan::default();
    // Inline modules open: (path, brace depth outside them).
    let mut inline: Vec<(Vec<String>, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let current = inline.last().map_or(module.to_vec(), |(path, _)| path.clone());
        let line = tokens[i].1;
        match (&tokens[i].0, ident(i + 1)) {
            (Token::Ident(kw), Some(name)) if kw == "mod" => {
                if tok(i + 2) == Some(&Token::Punct(';')) {
                    scan.child_files.push(name.to_string());
                } else if tok(i + 2) == Some(&Token::Punct('{')) {
                    let path = [current.as_slice(), &[name.to_string()]].concat();
                    scan.inline_modules.push(path.clone());
                    inline.push((path, depth));
                    depth += 1;
                }
                i += 3;
                continue;
            }
            (Token::Ident(kw), _) if kw == "use" && tok(i + 1) != Some(&Token::Punct('<')) => {
                let mut leaves = Vec::new();
                i += 1;
                use_tree(&tokens, &mut i, Vec::new(), &mut leaves);
                for (path, imported_as, line) in leaves {
                    let from = current.clone();
                    scan.refs.push(Reference {
                        from,
                        path,
                        file: shown.into(),
                        line,
                        imported_as,
                    });
                }
                continue;
            }
            (Token::Ident(first), _) if tok(i + 1) == Some(&Token::PathSep) => {
                let after_path = i > 0 && matches!(tok(i - 1), Some(Token::PathSep | Token::Punct('.')));
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while tok(j) == Some(&Token::PathSep) {
                    let Some(segment) = ident(j + 1) else { break };
                    path.push(segment.to_string());
                    j += 2;
                }
                if !after_path {
                    let from = current.clone();
                    scan.refs.push(Reference {
                        from,
                        path,
                        file: shown.into(),
                        line,
                        imported_as: None,
                    });
                }
                i = j;
                continue;
            }
            (Token::Punct('{'), _) => depth += 1,
            (Token::Punct('}'), _) => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, outside)| *outside == depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

/// One leaf of a use tree: its path, the name it brings in (none for a glob), its line.
pub(crate) type UseLeaf = (Vec<String>, Option<String>, usize);

/// Expands one use tree starting at `tokens[*i]` into its leaf paths with their lines,
/// leaving `*i` after it. `use a::{b, c::{self, D}}` gives `a::b`, `a::c`, `a::c::D`.
pub(crate) fn use_tree(tokens: &[(Token, usize)], i: &mut usize, prefix: Vec<String>, leaves: &mut Vec<UseLeaf>) {
    let mut path = prefix;
    while let Some((token, line)) = tokens.get(*i) {
        match token {
            Token::PathSep => path.push("::".into()), // a leading `::`: another crate
            Token::Ident(s) => {
                if s != "self" || path.is_empty() {
                    path.push(s.clone());
                }
                let mut name = path.last().cloned();
                if matches!(tokens.get(*i + 1), Some((Token::Ident(kw), _)) if kw == "as") {
                    *i += 2;
                    name = match tokens.get(*i) {
                        Some((Token::Ident(alias), _)) => Some(alias.clone()),
                        _ => None,
                    };
                }
                if tokens.get(*i + 1).map(|(t, _)| t) != Some(&Token::PathSep) {
                    *i += 1;
                    leaves.push((path, name, *line));
                    return;
                }
                *i += 2;
                continue;
            }
            Token::Punct('*') => {
                *i += 1;
                leaves.push((path, None, *line));
                return;
            }
            Token::Punct('{') => {
                *i += 1;
                while let Some((token, _)) = tokens.get(*i) {
                    let before = *i;
                    match token {
                        Token::Punct('}') => {
                            *i += 1;
                            return;
                        }
                        Token::Punct(',') => *i += 1,
                        _ => use_tree(tokens, i, path.clone(), leaves),
                    }
                    if *i == before {
                        *i += 1; // unexpected token: never stall
                    }
                }
                return;
            }
            _ => return,
        }
        *i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(source: &str) -> Vec<(String, usize)> {
        let module = vec!["m".to_string()];
        scan_source(source, &module, "m.rs")
            .refs
            .into_iter()
            .map(|r| (r.path.join("::"), r.line))
            .collect()
    }

    #[test]
    fn comments_literals_and_test_items_name_nothing() {
        let source = r####"
// use crate::commented;
/// Doc: crate::documented::X
/* block /* nested crate::nested */ crate::blocked */
const A: &str = "crate::quoted::X \" crate::still_quoted";
const B: &str = r#"crate::raw "quoted" ::x"#;
const C: char = '"';
const D: char = '\'';
fn e<'a>(x: &'a str) -> &'a str { x }
#[cfg(test)]
mod tests {
    use crate::tested;
    fn f() { crate::tested::g(); }
}
#[cfg(test)]
use crate::test_only;
use crate::real::Thing;
"####;
        assert_eq!(paths(source), vec![("crate::real::Thing".to_string(), 17)]);
    }

    #[test]
    fn use_trees_expand_to_their_leaves() {
        let source = "use crate::{a::X, b::{self, Y as Z}, c::*};\npub(crate) use super::d;\nuse ::e::F;";
        let scan = scan_source(source, &["m".to_string()], "m.rs");
        let leaves: Vec<(String, Option<String>)> = scan
            .refs
            .iter()
            .map(|r| (r.path.join("::"), r.imported_as.clone()))
            .collect();
        let expected = [
            ("crate::a::X", Some("X")),
            ("crate::b", Some("b")),
            ("crate::b::Y", Some("Z")),
            ("crate::c", None),
            ("super::d", Some("d")),
            ("::::e::F", Some("F")),
        ];
        let expected: Vec<(String, Option<String>)> = expected
            .iter()
            .map(|(p, n)| (p.to_string(), n.map(String::from)))
            .collect();
        assert_eq!(leaves, expected);
    }

    #[test]
    fn paths_in_code_are_read_but_not_method_turbofish_or_inner_segments() {
        let source = "fn f() {\n    crate::a::run();\n    let x = y.collect::<Vec<_>>();\n    super::b::C.go();\n    Self::new();\n}";
        let found = paths(source);
        assert_eq!(
            found,
            vec![
                ("crate::a::run".to_string(), 2),
                ("super::b::C".to_string(), 4),
                ("Self::new".to_string(), 5)
            ]
        );
    }

    #[test]
    fn modules_are_declared_as_files_or_inline() {
        let source = "mod child;\npub mod keys {\n    use super::Meta;\n}\nuse crate::after;";
        let scan = scan_source(source, &["meta".to_string()], "meta.rs");
        assert_eq!(scan.child_files, vec!["child".to_string()]);
        assert_eq!(scan.inline_modules, vec![vec!["meta".to_string(), "keys".to_string()]]);
        let from: Vec<String> = scan.refs.iter().map(|r| r.from.join("::")).collect();
        assert_eq!(from, vec!["meta::keys", "meta"]);
    }
}
