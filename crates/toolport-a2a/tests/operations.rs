//! The operations' guarantees: one winner per step, the same events in the
//! same order for every subscriber, tasks that outlive their process, push
//! notifications delivered in order with retries, and a signed card.

mod common;

use std::sync::Arc;

use common::{asker, engine_in, serve, service};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use toolport_a2a::{
    A2aClient, A2aError, A2aService, Agent, Artifact, Binding, Caller, CardConfig, CardSigner, Message, Part,
    PushPolicy, SendMessageConfiguration, SendMessageRequest, StreamResponse, TaskBook, TaskContext, TaskState,
    agent_fn,
};

/// An agent that reports `steps` progress updates, each after the test
/// releases a permit, then completes.
fn stepper(steps: usize, permits: Arc<Semaphore>) -> Arc<dyn Agent> {
    Arc::new(agent_fn("steps", "steps when told", move |cx: TaskContext| {
        let permits = permits.clone();
        async move {
            for step in 1..=steps {
                permits.acquire().await.expect("open").forget();
                cx.progress(format!("step {step}")).await?;
            }
            cx.artifact(Artifact::new("done", vec![Part::text("all steps")]))
                .await?;
            Ok(())
        }
    }))
}

/// An agent that works until cancelled.
fn forever() -> Arc<dyn Agent> {
    Arc::new(agent_fn("forever", "never ends", |cx: TaskContext| async move {
        cx.cancelled().await;
        Ok(())
    }))
}

fn request(text: &str, return_immediately: bool) -> SendMessageRequest {
    let mut request = SendMessageRequest::new(Message::user(vec![Part::text(text)]));
    request.configuration = Some(SendMessageConfiguration {
        return_immediately,
        ..SendMessageConfiguration::default()
    });
    request
}

fn task_of(answer: StreamResponse) -> toolport_a2a::Task {
    match answer {
        StreamResponse::Task(task) => task,
        other => panic!("a task, not {other:?}"),
    }
}

async fn until_state(service: &A2aService, caller: &Caller, id: &str, state: TaskState) -> toolport_a2a::Task {
    let mut watch = match service.subscribe(caller, id).await {
        Ok(watch) => watch,
        // Already ended: nothing more to wait for.
        Err(A2aError::UnsupportedOperation(_)) => return service.get(caller, id, None).await.unwrap(),
        Err(e) => panic!("{e:?}"),
    };
    while let Some(item) = watch.recv().await {
        if item.state() == Some(state) {
            return service.get(caller, id, None).await.unwrap();
        }
    }
    service.get(caller, id, None).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_cancels_of_one_task_have_one_winner() {
    let (service, _dir) = service(forever(), None).await;
    let caller = Caller::new(None, None);
    let task = task_of(service.send(&caller, request("go", true)).await.unwrap());
    until_state(&service, &caller, &task.id, TaskState::Working).await;
    let cancels = (0..50).map(|_| {
        let (service, caller, id) = (service.clone(), caller.clone(), task.id.clone());
        tokio::spawn(async move { service.cancel(&caller, &id).await })
    });
    let mut won = 0;
    for outcome in futures_join(cancels).await {
        match outcome {
            Ok(task) => {
                assert_eq!(task.status.state, TaskState::Canceled);
                won += 1;
            }
            Err(A2aError::TaskNotCancelable(_)) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1);
    let got = service.get(&caller, &task.id, None).await.unwrap();
    assert_eq!(got.status.state, TaskState::Canceled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_answers_to_one_question_have_one_winner() {
    let (service, _dir) = service(asker(), None).await;
    let caller = Caller::new(None, None);
    let asked = task_of(service.send(&caller, request("start", false)).await.unwrap());
    assert_eq!(asked.status.state, TaskState::InputRequired);
    let answers = (0..50).map(|i| {
        let (service, caller) = (service.clone(), caller.clone());
        let mut answer = request(&format!("answer {i}"), true);
        answer.message.task_id = Some(asked.id.clone());
        tokio::spawn(async move { service.send(&caller, answer).await })
    });
    let mut won = 0;
    for outcome in futures_join(answers).await {
        match outcome {
            Ok(_) => won += 1,
            Err(A2aError::UnsupportedOperation(_)) => {}
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(won, 1, "exactly one answer is taken");
    let done = until_state(&service, &caller, &asked.id, TaskState::Completed).await;
    let history = done.history.unwrap();
    assert_eq!(history.len(), 3, "the question, its one answer: {history:?}");
    let winner = history[2].text();
    assert_eq!(
        done.artifacts.unwrap()[0].parts[0].text.as_deref(),
        Some(winner.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_subscriber_gets_the_same_events_in_the_same_order() {
    let permits = Arc::new(Semaphore::new(0));
    let agent = serve(stepper(20, permits.clone()), None, 64 * 1024).await;
    let (client, _) = A2aClient::discover(&agent.base(), Some(Binding::Rest)).await.unwrap();
    let task = task_of(client.send(request("go", true)).await.unwrap());
    let (jsonrpc, _) = A2aClient::discover(&agent.base(), Some(Binding::JsonRpc))
        .await
        .unwrap();
    let mut streams = vec![
        client.subscribe(&task.id).await.unwrap(),
        jsonrpc.subscribe(&task.id).await.unwrap(),
        client.subscribe(&task.id).await.unwrap(),
    ];
    permits.add_permits(20);
    let mut seen = Vec::new();
    for stream in &mut streams {
        let mut items = Vec::new();
        while let Some(item) = stream.next().await {
            items.push(item.unwrap());
        }
        seen.push(items);
    }
    for items in &seen {
        assert!(matches!(items[0], StreamResponse::Task(_)), "the task first");
        assert_eq!(items.last().unwrap().state(), Some(TaskState::Completed));
    }
    // After the first item (the task as each found it), the same events.
    let tail = |items: &Vec<StreamResponse>| -> Vec<String> {
        items[1..]
            .iter()
            .map(|i| match i {
                StreamResponse::StatusUpdate(u) => {
                    format!(
                        "{:?} {}",
                        u.status.state,
                        u.status.message.as_ref().map(Message::text).unwrap_or_default()
                    )
                }
                StreamResponse::ArtifactUpdate(a) => format!("artifact {}", a.artifact.parts[0].text.clone().unwrap()),
                other => format!("{other:?}"),
            })
            .filter(|e| !e.starts_with("Working "))
            .collect()
    };
    let expected: Vec<String> = (1..=20)
        .map(|s| format!("Working step {s}"))
        .chain(["artifact all steps".to_owned(), "Completed ".to_owned()])
        .collect();
    let full: Vec<String> = seen[0][1..]
        .iter()
        .filter_map(|i| match i {
            StreamResponse::StatusUpdate(u) => Some(format!(
                "{:?} {}",
                u.status.state,
                u.status.message.as_ref().map(Message::text).unwrap_or_default()
            )),
            StreamResponse::ArtifactUpdate(a) => {
                Some(format!("artifact {}", a.artifact.parts[0].text.clone().unwrap()))
            }
            _ => None,
        })
        .filter(|e| e != "Working ")
        .collect();
    assert_eq!(full, expected);
    assert_eq!(tail(&seen[0]), tail(&seen[1]));
    assert_eq!(tail(&seen[1]), tail(&seen[2]));
}

#[tokio::test]
async fn tasks_and_their_history_outlive_the_service() {
    let dir = tempfile::tempdir().unwrap();
    let caller = Caller::new(None, None);
    let card = || CardConfig::new("t", "t");
    let (done_id, asked_id) = {
        let engine = engine_in(dir.path()).await;
        let service = A2aService::new(asker(), TaskBook::new(engine), card(), None);
        let asked = task_of(service.send(&caller, request("first", false)).await.unwrap());
        let mut answer = request("the answer", false);
        answer.message.task_id = Some(asked.id.clone());
        let done = task_of(service.send(&caller, answer).await.unwrap());
        assert_eq!(done.status.state, TaskState::Completed);
        let waiting = task_of(service.send(&caller, request("second", false)).await.unwrap());
        (done.id, waiting.id)
    };
    // A new process over the same store.
    let engine = engine_in(dir.path()).await;
    let service = A2aService::new(asker(), TaskBook::new(engine), card(), None);
    let done = service.get(&caller, &done_id, None).await.unwrap();
    assert_eq!(done.status.state, TaskState::Completed);
    let texts: Vec<String> = done.history.unwrap().iter().map(Message::text).collect();
    assert_eq!(texts, ["first", "which one?", "the answer"]);
    assert_eq!(done.artifacts.unwrap()[0].parts[0].text.as_deref(), Some("the answer"));
    // The waiting one still waits, and its answer is taken after the restart.
    let waiting = service.get(&caller, &asked_id, Some(1)).await.unwrap();
    assert_eq!(waiting.status.state, TaskState::InputRequired);
    assert_eq!(waiting.history.unwrap().len(), 1, "historyLength 1");
    let mut answer = request("after restart", false);
    answer.message.task_id = Some(asked_id.clone());
    let finished = task_of(service.send(&caller, answer).await.unwrap());
    assert_eq!(finished.status.state, TaskState::Completed);
}

#[tokio::test]
async fn the_card_is_signed_over_its_canonical_form() {
    const PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVjxwN0jj9CZWgtbd
ksutVhot/5Sf/a4v3IhJw+kl/UmhRANCAASc+ZNB/pnDZkhiKu9UCkz8CxaO5Vvm
V1AP0ylOggomMXy6mbhIVKLJ6UHYLo/radt3iHvAZm7d9bgh6jLlx1nh
-----END PRIVATE KEY-----
";
    const PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEnPmTQf6Zw2ZIYirvVApM/AsWjuVb
5ldQD9MpToIKJjF8upm4SFSiyelB2C6P62nbd4h7wGZu3fW4Ieoy5cdZ4Q==
-----END PUBLIC KEY-----
";
    let mut card = CardConfig::new("signed", "a signed card");
    card.signer = Some(CardSigner::from_pem(PRIVATE.as_bytes(), "ES256", "card-1").unwrap());
    let dir = tempfile::tempdir().unwrap();
    let signed = A2aService::new(forever(), TaskBook::new(engine_in(dir.path()).await), card, None);
    let served = common::serve_service(signed, 64 * 1024).await;
    let card = A2aClient::card(&served.base()).await.unwrap();
    let signature = &card.signatures[0];
    let header: Value = serde_json::from_slice(&base64_url(&signature.protected)).unwrap();
    assert_eq!(header, json!({"alg": "ES256", "typ": "JOSE", "kid": "card-1"}));
    let payload = toolport_a2a::canonical_payload(&card).unwrap();
    let input = format!("{}.{}", signature.protected, encode_url(payload.as_bytes()));
    let key = jsonwebtoken::DecodingKey::from_ec_pem(PUBLIC.as_bytes()).unwrap();
    let verified = jsonwebtoken::crypto::verify(
        &signature.signature,
        input.as_bytes(),
        &key,
        jsonwebtoken::Algorithm::ES256,
    );
    assert!(verified.unwrap(), "the signature verifies over the card as served");
    // A changed card does not verify.
    let mut tampered = card.clone();
    tampered.name = "someone else".into();
    let payload = toolport_a2a::canonical_payload(&tampered).unwrap();
    let input = format!("{}.{}", signature.protected, encode_url(payload.as_bytes()));
    let verified = jsonwebtoken::crypto::verify(
        &signature.signature,
        input.as_bytes(),
        &key,
        jsonwebtoken::Algorithm::ES256,
    );
    assert!(!verified.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_arrive_in_order_with_credentials_and_are_retried_not_redirected() {
    let receiver = Receiver::start().await;
    let policy = PushPolicy {
        allow_private: true,
        backoff: std::time::Duration::from_millis(10),
        ..PushPolicy::default()
    };
    let permits = Arc::new(Semaphore::new(0));
    let (service, _dir) = service(stepper(3, permits.clone()), Some(policy)).await;
    let caller = Caller::new(None, None);
    let mut sent = request("go", true);
    sent.configuration.as_mut().unwrap().task_push_notification_config = Some(toolport_a2a::PushConfig {
        url: format!("http://{}/hook", receiver.addr),
        token: Some("tok".into()),
        authentication: Some(toolport_a2a::types::AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("cred".into()),
        }),
        ..toolport_a2a::PushConfig::default()
    });
    let task = task_of(service.send(&caller, sent).await.unwrap());
    // A second webhook that redirects: never followed.
    let redirect = toolport_a2a::PushConfig {
        task_id: task.id.clone(),
        url: format!("http://{}/redirect", receiver.addr),
        ..toolport_a2a::PushConfig::default()
    };
    service.create_push(&caller, redirect).await.unwrap();
    permits.add_permits(3);
    let got = receiver.until_completed().await;
    let states: Vec<String> = got
        .iter()
        .filter(|(path, ..)| path == "/hook")
        .filter_map(|(_, _, _, body)| {
            body.pointer("/statusUpdate/status/state")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    let mut deduplicated = states.clone();
    deduplicated.dedup();
    assert_eq!(deduplicated.first().map(String::as_str), Some("TASK_STATE_WORKING"));
    assert_eq!(deduplicated.last().map(String::as_str), Some("TASK_STATE_COMPLETED"));
    // The first delivery failed (500) and was tried again: it arrived twice.
    let hooked: Vec<&Value> = got.iter().filter(|g| g.0 == "/hook").map(|g| &g.3).collect();
    assert_eq!(hooked[0], hooked[1], "the failed delivery was retried");
    assert_ne!(hooked[1], hooked[2]);
    for (path, token, authorization, _) in got.iter().filter(|g| g.0 == "/hook") {
        assert_eq!(
            (path.as_str(), token.as_str(), authorization.as_str()),
            ("/hook", "tok", "Bearer cred")
        );
    }
    assert!(got.iter().all(|g| g.0 != "/redirected"), "a redirect is not followed");
    assert!(got.iter().any(|g| g.0 == "/redirect"));
}

/// A webhook receiver: `/hook` fails its first delivery with 500, then
/// takes every one; `/redirect` answers 302 to `/redirected`.
struct Receiver {
    addr: std::net::SocketAddr,
    seen: tokio::sync::mpsc::UnboundedReceiver<(String, String, String, Value)>,
}

impl Receiver {
    async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, seen) = tokio::sync::mpsc::unbounded_channel();
        let failed_once = Arc::new(std::sync::atomic::AtomicBool::new(false));
        tokio::spawn(async move {
            loop {
                let (tcp, _) = listener.accept().await.unwrap();
                let (tx, failed_once) = (tx.clone(), failed_once.clone());
                let service = hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let (tx, failed_once) = (tx.clone(), failed_once.clone());
                    async move {
                        use http_body_util::BodyExt;
                        let path = request.uri().path().to_owned();
                        let header = |name: &str| {
                            request
                                .headers()
                                .get(name)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned()
                        };
                        let (token, authorization) = (header("x-a2a-notification-token"), header("authorization"));
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        let _ = tx.send((path.clone(), token, authorization, body));
                        let mut response = http::Response::new(http_body_util::Full::new(bytes::Bytes::new()));
                        if path == "/redirect" {
                            *response.status_mut() = http::StatusCode::FOUND;
                            response
                                .headers_mut()
                                .insert("location", "/redirected".parse().unwrap());
                        } else if !failed_once.swap(true, std::sync::atomic::Ordering::SeqCst) {
                            *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
                        }
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tcp), service),
                );
            }
        });
        Receiver { addr, seen }
    }

    /// Everything received until `/hook` got the completed state.
    async fn until_completed(mut self) -> Vec<(String, String, String, Value)> {
        let mut got = Vec::new();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
        while let Ok(Some(item)) = tokio::time::timeout_at(deadline, self.seen.recv()).await {
            let done = item.0 == "/hook"
                && item.3.pointer("/statusUpdate/status/state") == Some(&json!("TASK_STATE_COMPLETED"));
            got.push(item);
            if done {
                return got;
            }
        }
        panic!("no completed push within 15 s: {got:?}");
    }
}

async fn futures_join<T: Send + 'static>(handles: impl Iterator<Item = tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

fn base64_url(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).unwrap()
}

fn encode_url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}
