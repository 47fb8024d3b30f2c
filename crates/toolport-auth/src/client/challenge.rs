//! Reading `WWW-Authenticate` (RFC 9110 §11.6.1, RFC 6750 §3): the Bearer
//! challenge's parameters, quoted or not, among other challenges.

use std::collections::BTreeMap;

/// The parameters of a Bearer challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// Parameter names (lower-cased) and values (unquoted).
    pub params: BTreeMap<String, String>,
}

impl BearerChallenge {
    /// Finds the Bearer challenge in a `WWW-Authenticate` value; `None` when
    /// there is none.
    pub fn parse(header: &str) -> Option<BearerChallenge> {
        let tokens = tokenize(header);
        let mut challenge: Option<BearerChallenge> = None;
        let mut in_bearer = false;
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                Token::Word(word) if matches!(tokens.get(i + 1), Some(Token::Equals)) => {
                    // name=value inside the current challenge
                    let value = match tokens.get(i + 2) {
                        Some(Token::Word(v) | Token::Quoted(v)) => v.clone(),
                        _ => String::new(),
                    };
                    if in_bearer && let Some(c) = challenge.as_mut() {
                        c.params.entry(word.to_ascii_lowercase()).or_insert(value);
                    }
                    i += 3;
                    continue;
                }
                Token::Word(scheme) => {
                    // a new challenge starts with its scheme
                    // A DPoP challenge (RFC 9449 §7.1) has the same parameters.
                    in_bearer = (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop"))
                        && challenge.is_none();
                    if in_bearer {
                        challenge = Some(BearerChallenge::default());
                    }
                }
                _ => {}
            }
            i += 1;
        }
        challenge
    }

    /// A parameter's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// The `scope` parameter as a list.
    pub fn scopes(&self) -> Vec<String> {
        self.get("scope")
            .map(|s| s.split_ascii_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Comma,
}

fn tokenize(input: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut chars = input.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' => {
                chars.next();
            }
            ',' => {
                chars.next();
                tokens.push(Token::Comma);
            }
            '=' => {
                chars.next();
                tokens.push(Token::Equals);
            }
            '"' => {
                chars.next();
                let mut value = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(escaped) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => break,
                        other => value.push(other),
                    }
                }
                tokens.push(Token::Quoted(value));
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if matches!(c, ' ' | '\t' | ',' | '"')
                        || (c == '=' && !word.is_empty() && !is_token68_tail(&mut chars.clone()))
                    {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    tokens
}

/// Whether the `=` at the cursor ends a token68 (`abc==`) rather than
/// separating a parameter name from its value.
fn is_token68_tail(rest: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    while rest.peek() == Some(&'=') {
        rest.next();
    }
    matches!(rest.peek(), None | Some(' ' | ',' | '\t'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parameters_are_read_quoted_or_not() {
        let c = BearerChallenge::parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://x.example/.well-known/oauth-protected-resource/mcp", error_description="needs \"write\"""#,
        )
        .unwrap();
        assert_eq!(c.get("error"), Some("insufficient_scope"));
        assert_eq!(c.scopes(), ["files:read", "files:write"]);
        assert_eq!(c.get("error_description"), Some(r#"needs "write""#));
        assert_eq!(
            c.get("resource_metadata"),
            Some("https://x.example/.well-known/oauth-protected-resource/mcp")
        );
        let plain = BearerChallenge::parse("Bearer realm=mcp, scope=a").unwrap();
        assert_eq!((plain.get("realm"), plain.get("scope")), (Some("mcp"), Some("a")));
    }

    #[test]
    fn other_challenges_are_skipped() {
        let c = BearerChallenge::parse(r#"Basic realm="x", Negotiate abc==, Bearer scope="s""#).unwrap();
        assert_eq!(c.scopes(), ["s"]);
        assert_eq!(c.get("realm"), None);
        assert!(BearerChallenge::parse(r#"Basic realm="x""#).is_none());
        assert_eq!(BearerChallenge::parse("Bearer").unwrap().params.len(), 0);
        assert_eq!(
            BearerChallenge::parse("bearer scope=\"unterminated").unwrap().scopes(),
            ["unterminated"]
        );
    }
}
