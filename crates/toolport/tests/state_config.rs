//! `[state]`: the shared store's URL and the seal keys, from the file and
//! the environment; refusals that say what to do and never show a key or a
//! password; `MCP_TRANSPORT=streamable-http`.

use std::io::Write;
use std::process::Command;

use toolport::config::{Config, ConfigError, Transport};

/// base64 of 32 bytes of `byte`.
fn key(byte: u8) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

fn load(text: &str, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let path = std::env::temp_dir().join(format!(
        "toolport-state-config-{}-{}.toml",
        std::process::id(),
        text.len() + env.len() * 1000
    ));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let loaded = Config::load(Some(&path), env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let _ = std::fs::remove_file(&path);
    loaded
}

fn refusal(result: Result<Config, ConfigError>) -> String {
    match result {
        Err(e @ ConfigError::Invalid { .. }) => e.to_string(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_state_url_without_seal_keys_is_refused_with_what_to_do() {
    let message = refusal(load("", &[("TOOLPORT_STATE_URL", "redis://127.0.0.1:6379")]));
    assert!(message.starts_with("state.seal_keys = (none)"), "{message}");
    assert!(message.contains("TOOLPORT_SEAL_KEYS"), "{message}");
    assert!(message.contains("openssl rand -base64 32"), "{message}");
    let message = refusal(load("[state]\nurl = \"redis://redis:6379\"\n", &[]));
    assert!(message.contains("state.seal_keys"), "{message}");
}

#[test]
fn seal_keys_come_comma_separated_from_the_environment_and_the_first_seals() {
    let (old, new) = (key(1), key(2));
    let config = load(
        "",
        &[
            ("TOOLPORT_STATE_URL", "redis://:secret@127.0.0.1:6379/2"),
            ("TOOLPORT_SEAL_KEYS", &format!("{new}, {old}")),
        ],
    )
    .unwrap();
    assert_eq!(config.state.seal_keys.0, [new.clone(), old.clone()]);
    let ring = config.state.key_ring().expect("a key ring");
    let sealed = ring.seal(b"x");
    let only_new = load("", &[("TOOLPORT_SEAL_KEYS", &new)])
        .unwrap()
        .state
        .key_ring()
        .unwrap();
    let only_old = load("", &[("TOOLPORT_SEAL_KEYS", &old)])
        .unwrap()
        .state
        .key_ring()
        .unwrap();
    assert_eq!(only_new.open(&sealed).unwrap(), b"x", "the first key seals");
    assert!(only_old.open(&sealed).is_err());
    assert_eq!(ring.open(&only_old.seal(b"y")).unwrap(), b"y", "every key opens");
    assert_eq!(
        ring.sealing_key_id(),
        only_new.sealing_key_id(),
        "ids are the same on every replica"
    );

    // A list in the file works alike; the environment wins.
    let file = format!("[state]\nseal_keys = [\"{old}\"]\n");
    assert_eq!(load(&file, &[]).unwrap().state.seal_keys.0, std::slice::from_ref(&old));
    assert_eq!(
        load(&file, &[("TOOLPORT_SEAL_KEYS", &new)]).unwrap().state.seal_keys.0,
        [new]
    );
    // Seal keys without a URL: replicas without shared stores (stateless) share states.
    assert!(load(&file, &[]).unwrap().state.url.is_none());
}

#[test]
fn bad_seal_keys_and_urls_are_refused_without_showing_them() {
    let short = "c2hvcnQ="; // "short"
    let message = refusal(load("", &[("TOOLPORT_SEAL_KEYS", &format!("{},{short}", key(3)))]));
    assert!(
        message.starts_with("state.seal_keys = key 2 of 2 (not shown)"),
        "{message}"
    );
    assert!(
        message.contains("from the environment variable TOOLPORT_SEAL_KEYS"),
        "{message}"
    );
    assert!(!message.contains(short) && !message.contains(&key(3)), "{message}");
    let message = refusal(load("", &[("TOOLPORT_SEAL_KEYS", "not base64 at all!")]));
    assert!(!message.contains("not base64"), "{message}");
    let message = refusal(load("", &[("TOOLPORT_SEAL_KEYS", &format!("{0},{0}", key(4)))]));
    assert!(message.contains("each key once"), "{message}");

    let keys = key(5);
    for (url, expected) in [
        ("rediss://:pw@cache:6380", "TLS in a sidecar"),
        ("http://:pw@cache:6379", "a Redis URL"),
    ] {
        let message = refusal(load("", &[("TOOLPORT_STATE_URL", url), ("TOOLPORT_SEAL_KEYS", &keys)]));
        assert!(message.starts_with("state.url = "), "{message}");
        assert!(message.contains(expected), "{message}");
        assert!(!message.contains(":pw@"), "the password is not shown: {message}");
    }
}

#[test]
fn mcp_transport_streamable_http_is_accepted() {
    let config = load("", &[("MCP_TRANSPORT", "streamable-http")]).unwrap();
    assert_eq!(config.transport, Transport::Http);
    assert_eq!(
        load("transport = \"streamable-http\"\n", &[]).unwrap().transport,
        Transport::Http
    );
}

#[test]
fn config_check_hides_the_password_and_the_keys_and_serve_refuses_without_keys() {
    let path = std::env::temp_dir().join(format!("toolport-state-check-{}.toml", std::process::id()));
    std::fs::write(&path, "[state]\nurl = \"redis://admin:hunter2@cache:6379/0\"\n").unwrap();
    let keys = key(6);
    let check = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["config", "check"])
        .arg(&path)
        .env("TOOLPORT_SEAL_KEYS", &keys)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(stdout.contains("redis://admin:***@cache:6379/0"), "{stdout}");
    assert!(!stdout.contains("hunter2") && !stdout.contains(&keys), "{stdout}");

    let serve = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--config"])
        .arg(&path)
        .env_remove("TOOLPORT_SEAL_KEYS")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let stderr = String::from_utf8_lossy(&serve.stderr);
    assert_eq!(serve.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("configuration error: state.seal_keys"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}
