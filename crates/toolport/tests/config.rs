//! Configuration: a TOML file, environment overrides, and a clear message
//! naming the key, the value and what was expected for every bad setting.

use std::io::Write;
use std::process::Command;

use toolport::config::{Config, ConfigError, LogFormat, Transport};

fn load(text: &str, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let mut file = tempfile();
    file.1.write_all(text.as_bytes()).unwrap();
    Config::load(Some(&file.0), env.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn tempfile() -> (std::path::PathBuf, std::fs::File) {
    let path = std::env::temp_dir().join(format!("toolport-config-{}-{}.toml", std::process::id(), rand_suffix()));
    let file = std::fs::File::create(&path).unwrap();
    (path, file)
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

fn invalid(text: &str, env: &[(&str, &str)]) -> (String, String, String, String) {
    match load(text, env) {
        Err(ConfigError::Invalid {
            key,
            value,
            expected,
            origin,
        }) => (key, value, expected, origin),
        other => panic!("expected an invalid setting, got {other:?}"),
    }
}

#[test]
fn a_file_and_the_environment_make_the_configuration() {
    let config = load(
        r#"
        transport = "http"
        [http]
        bind = "127.0.0.1:9100"
        sessions = false
        [limits]
        max_concurrent = 8
        [limits.tools.search]
        deadline_ms = 1500
        rate = { per_second = 2.5, burst = 5 }
        [log]
        format = "json"
        [oauth]
        scopes = ["mcp:tools"]
        [oauth.tool_scopes]
        delete_file = ["files:write"]
        "#,
        &[
            ("MAX_CONCURRENT_TOOLS", "16"),
            ("SESSION_TIMEOUT_SECONDS", "42"),
            ("MCP_TRANSPORT", "stdio"),
            ("TOOLPORT_HTTP__ALLOWED_ORIGINS", r#"["https://app.example"]"#),
            ("TOOLPORT_LIMITS__TOOLS__SEARCH__MAX_CONCURRENT", "3"),
            ("TOOLPORT_LOG", "debug"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SERVICE_NAME", "tools-eu"),
            ("OAUTH_ISSUER", "https://auth.example.com"),
            ("UNRELATED", "x"),
        ],
    )
    .unwrap();
    assert_eq!(config.telemetry.otlp_endpoint.as_deref(), Some("http://127.0.0.1:4318"));
    assert_eq!(config.telemetry.service_name, "tools-eu");
    assert_eq!(config.oauth.issuer.as_deref(), Some("https://auth.example.com"));
    assert_eq!(config.oauth.tool_scopes["delete_file"], ["files:write"]);
    assert_eq!(config.transport, Transport::Stdio);
    assert_eq!(config.limits.max_concurrent, 16, "the environment wins over the file");
    assert_eq!(config.http.session_timeout_seconds, 42);
    assert_eq!(config.http.allowed_origins, ["https://app.example"]);
    let search = &config.limits.tools["search"];
    assert_eq!((search.deadline_ms, search.max_concurrent), (Some(1500), Some(3)));
    assert_eq!(search.rate.as_ref().unwrap().burst, 5);
    assert_eq!(config.log.format, LogFormat::Json);
    let http = config.http_config();
    assert_eq!(http.bind.port(), 9100);
    assert!(!http.sessions);
    // No file at all: the defaults, which are safe (loopback).
    let defaults = Config::load(None, Vec::new()).unwrap();
    assert_eq!(defaults.http_config().bind.to_string(), "127.0.0.1:8080");
}

#[test]
fn every_bad_setting_names_its_key_value_and_what_was_expected() {
    /// A file, its environment, and the key, value and expectation the error must name.
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, &'a str, &'a str);
    let cases: &[Case<'_>] = &[
        (
            "[limits]\nmax_concurrent = \"lots\"",
            &[],
            "limits.max_concurrent",
            "\"lots\"",
            "a whole number",
        ),
        (
            "[http]\nbind = \"localhost\"",
            &[],
            "http.bind",
            "\"localhost\"",
            "an address and port",
        ),
        ("[http]\npath = \"mcp\"", &[], "http.path", "\"mcp\"", "starting with /"),
        (
            "[http]\nsession_timeout_seconds = 0",
            &[],
            "http.session_timeout_seconds",
            "0",
            "at least 1 second",
        ),
        (
            "[limits.tools.search]\nmax_concurrent = 0",
            &[],
            "limits.tools.search.max_concurrent",
            "0",
            "at least 1",
        ),
        (
            "[limits]\nrate_per_principal = { per_second = 0, burst = 1 }",
            &[],
            "limits.rate_per_principal.per_second",
            "0",
            "above 0",
        ),
        (
            "transport = \"carrier-pigeon\"",
            &[],
            "transport",
            "\"carrier-pigeon\"",
            "`http`",
        ),
        ("[log]\nformat = \"xml\"", &[], "log.format", "\"xml\"", "`json`"),
        ("[limits]\nqueue = -1", &[], "limits.queue", "-1", "0 or more"),
        (
            "",
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")],
            "telemetry.otlp_endpoint",
            "\"collector:4318\"",
            "an OTLP/HTTP collector URL",
        ),
        (
            "[telemetry]\notlp_endpoint = \"http://\"",
            &[],
            "telemetry.otlp_endpoint",
            "\"http://\"",
            "an OTLP/HTTP collector URL",
        ),
        (
            "",
            &[("OAUTH_ISSUER", "auth.example.com")],
            "oauth.issuer",
            "\"auth.example.com\"",
            "an https:// URL",
        ),
        (
            "[oauth]\nscopes = [\"mcp:tools\"]",
            &[],
            "oauth.issuer",
            "\"\"",
            "the other oauth keys need it",
        ),
        (
            "[oauth]\nissuer = \"https://as\"\njwks_uri = \"https://as/jwks\"\njwks_file = \"k.json\"",
            &[],
            "oauth.jwks_file",
            "\"both\"",
            "not both",
        ),
        (
            "[oauth]\nissuer = \"https://as\"\n[oauth.tool_scopes]\ndelete = []",
            &[],
            "oauth.tool_scopes.delete",
            "\"\"",
            "one or more scope names",
        ),
        (
            "",
            &[("MAX_CONCURRENT_TOOLS", "abc")],
            "limits.max_concurrent",
            "\"abc\"",
            "a whole number",
        ),
    ];
    for (text, env, key, value, expected) in cases {
        let (k, v, e, _) = invalid(text, env);
        assert_eq!((k.as_str(), v.as_str()), (*key, *value), "{text}");
        assert!(e.contains(expected), "{text}: expected {e:?} to mention {expected:?}");
    }
    let (_, _, _, origin) = invalid("", &[("MAX_CONCURRENT_TOOLS", "abc")]);
    assert_eq!(origin, "from the environment variable MAX_CONCURRENT_TOOLS");
    // Unknown keys are refused, not ignored.
    let (key, _, expected, _) = invalid("[htp]\nbind = \"x\"", &[]);
    assert_eq!(key, "htp");
    assert!(expected.contains("one of `transport`, `http`"), "{expected}");
    assert!(matches!(load("[http\nbind=", &[]), Err(ConfigError::Syntax { .. })));
    assert!(matches!(
        Config::load(Some(std::path::Path::new("/nonexistent/toolport.toml")), Vec::new()),
        Err(ConfigError::Unreadable { .. })
    ));
}

#[test]
fn config_check_and_serve_refuse_a_bad_file_with_the_message() {
    let mut file = tempfile();
    file.1.write_all(b"[limits]\nmax_concurrent = \"lots\"\n").unwrap();
    let check = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["config", "check"])
        .arg(&file.0)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(stderr.contains("limits.max_concurrent = \"lots\""), "{stderr}");
    let serve = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--config"])
        .arg(&file.0)
        .output()
        .unwrap();
    assert_eq!(
        serve.status.code(),
        Some(2),
        "serve must not start with a bad configuration"
    );
    assert!(String::from_utf8_lossy(&serve.stderr).contains("configuration error: limits.max_concurrent"));
    let mut good = tempfile();
    good.1.write_all(b"[limits]\nmax_concurrent = 4\n").unwrap();
    let check = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["config", "check"])
        .arg(&good.0)
        .output()
        .unwrap();
    assert!(check.status.success());
    assert!(String::from_utf8_lossy(&check.stdout).contains("max_concurrent = 4"));
}

#[test]
fn serve_refuses_bad_oauth_flags_naming_the_key() {
    for (flags, needle) in [
        (
            &["--oauth-issuer", "auth.example.com"][..],
            "oauth.issuer = \"auth.example.com\" (from the command line)",
        ),
        (&["--oauth-tool-scope", "delete_file"][..], "--oauth-tool-scope"),
    ] {
        let serve = Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .args(flags)
            .env_remove("OAUTH_ISSUER")
            .output()
            .unwrap();
        assert_eq!(serve.status.code(), Some(2), "{flags:?}");
        let stderr = String::from_utf8_lossy(&serve.stderr);
        assert!(
            stderr.contains("configuration error") && stderr.contains(needle),
            "{stderr}"
        );
    }
}
