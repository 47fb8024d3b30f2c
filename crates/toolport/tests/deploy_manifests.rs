//! The Kubernetes manifests agree with the server: the ConfigMap's TOML is a
//! configuration `toolport serve` accepts (with the Secret's variables), and
//! the pods get longer to stop than the drain and the grace period take.
//! (`.ci/run` also validates every manifest against a pinned Kubernetes
//! version with PyPI `kubernetes-validate`.)

use std::path::PathBuf;

use toolport::config::{Config, Transport};

fn manifest(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy/kubernetes")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The block scalar under `key: |` (its lines, unindented).
fn block(yaml: &str, key: &str) -> String {
    let mut lines = yaml.lines().skip_while(|l| l.trim() != format!("{key}: |"));
    lines.next().expect("the key");
    let body: Vec<&str> = lines.take_while(|l| l.is_empty() || l.starts_with("    ")).collect();
    body.iter()
        .map(|l| l.strip_prefix("    ").unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn number(yaml: &str, key: &str) -> u64 {
    yaml.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{key} in the manifest"))
}

#[test]
fn the_configmap_is_a_configuration_serve_accepts_and_pods_stop_after_drain_and_grace() {
    let toml = block(&manifest("configmap.yaml"), "toolport.toml");
    let path = std::env::temp_dir().join(format!("toolport-deploy-{}.toml", std::process::id()));
    std::fs::write(&path, &toml).unwrap();
    let env = [
        ("TOOLPORT_STATE_URL", "redis://:pw@toolport-redis:6379/0"),
        ("TOOLPORT_SEAL_KEYS", "dG9vbHBvcnQtcmVwbGljYS10ZXN0cy1zZWFsLWtleSE="),
    ];
    let config = Config::load(Some(&path), env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let _ = std::fs::remove_file(&path);
    let config = config.unwrap_or_else(|e| panic!("the ConfigMap's toolport.toml: {e}\n{toml}"));
    assert_eq!(config.transport, Transport::Http);
    assert!(config.state.url.is_some() && config.state.key_ring().is_some());

    let deployment = manifest("deployment.yaml");
    let termination = number(&deployment, "terminationGracePeriodSeconds");
    let (drain, grace) = (config.http.drain_delay_seconds, config.http.shutdown_grace_seconds);
    assert!(
        termination > drain + grace,
        "terminationGracePeriodSeconds {termination} must exceed drain {drain} + grace {grace}"
    );
    for needed in [
        "path: /health",
        "path: /ready",
        "readOnlyRootFilesystem: true",
        "runAsNonRoot: true",
    ] {
        assert!(deployment.contains(needed), "the Deployment has {needed}");
    }
    // The Service spreads requests: no stickiness is needed.
    assert!(manifest("service.yaml").contains("sessionAffinity: None"));
}
