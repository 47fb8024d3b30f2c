//! The filesystem pack through the server, as a 2026-07-28 client calls it:
//! the path-traversal corpus (`corpus/path_traversal.tsv`) refused by every
//! tool with a clear message, a symbolic link swapped in while reading, the
//! read tools, the write tools, resources with etags, and client roots that
//! narrow but never widen.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::Client;
use serde_json::json;
use toolport_packs::fs::{FsConfig, FsPack, RootConfig};
use toolport_server::Server;

const SECRET: &str = "TOP SECRET outside the root";

/// A root with files, links and a FIFO, beside a directory it must not reach.
struct Fixture {
    _temp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path().canonicalize().unwrap();
    let outside = base.join("outside");
    let root = base.join("root");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(root.join("sub/deeper/deepest")).unwrap();
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::write(root.join("hello.txt"), "hello\nworld\n").unwrap();
    fs::write(root.join("sub/nested.txt"), "nested").unwrap();
    fs::write(root.join("sub/deeper/deep.rs"), "fn main() {}").unwrap();
    fs::write(root.join("sub/deeper/deepest/bottom.rs"), "// bottom").unwrap();
    fs::write(root.join("utf8.txt"), "añb€c").unwrap();
    fs::write(root.join("binary.bin"), [0u8, 159, 146, 150]).unwrap();
    fs::write(root.join("pixel.png"), PNG).unwrap();
    symlink("../outside/secret.txt", root.join("link_out")).unwrap();
    symlink(outside.join("secret.txt"), root.join("link_abs")).unwrap();
    symlink("../outside", root.join("dir_out")).unwrap();
    symlink("../..", root.join("sub/link_up")).unwrap();
    symlink("hello.txt", root.join("link_in")).unwrap();
    symlink("loop2", root.join("loop")).unwrap();
    symlink("loop", root.join("loop2")).unwrap();
    fs::hard_link(outside.join("secret.txt"), root.join("hard_out")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    Fixture {
        _temp: temp,
        root,
        outside,
    }
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0x00, 0x02, 0x00, 0x00, 0x05, 0x00, 0x01, 0xe9, 0xfa, 0xdc, 0xd8, 0x00,
    0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

fn config(root: &Path, writable: bool) -> FsConfig {
    FsConfig {
        roots: vec![RootConfig {
            path: root.to_owned(),
            name: Some("work".into()),
            writable,
        }],
        watch: false,
        ..FsConfig::default()
    }
}

fn client_for(config: &FsConfig) -> Client {
    let pack = FsPack::from_config(config).unwrap();
    let server = pack.install(Server::builder("fs-test", "0")).build().unwrap();
    Client::new(server)
}

/// The corpus with its placeholders filled in.
fn corpus(f: &Fixture) -> Vec<(String, String)> {
    let text = include_str!("corpus/path_traversal.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (path, fragment) = line.split_once('\t').expect("path <TAB> fragment");
            let path = path
                .replace("{OUTSIDE}", &f.outside.display().to_string())
                .replace("{ROOT}", &f.root.display().to_string())
                .replace("{LONG_PATH}", &"a/".repeat(2500))
                .replace("{LONG_NAME}", &"n".repeat(300))
                .replace("\\0", "\0");
            (path, fragment.to_owned())
        })
        .collect()
}

#[tokio::test]
async fn every_traversal_in_the_corpus_is_refused_by_every_tool_with_a_clear_message() {
    let f = fixture();
    let client = client_for(&config(&f.root, true));
    let cases = corpus(&f);
    assert!(cases.len() >= 20, "the corpus has {} entries", cases.len());
    for (path, fragment) in &cases {
        let message = client.refused("read_file", json!({ "path": path })).await;
        assert!(
            message.contains(fragment.as_str()),
            "read_file {path:?}: {message:?} lacks {fragment:?}"
        );
        assert!(!message.contains(SECRET));
        if fragment == "does not exist" {
            // An encoded or backslashed `..` is just an odd file name: a
            // write creates that name inside the root, nothing outside.
            // (Or, when the odd name has a `/`, its parent does not exist.)
            let result = client
                .tool("write_file", json!({ "path": path, "content": "odd" }))
                .await;
            if result["isError"] == true {
                assert!(
                    result["content"][0]["text"]
                        .as_str()
                        .unwrap()
                        .contains("does not exist"),
                    "{result}"
                );
            } else {
                assert_eq!(fs::read_to_string(f.root.join(path)).unwrap(), "odd");
                fs::remove_file(f.root.join(path)).unwrap();
            }
            continue;
        }
        for (tool, args) in [
            ("read_media", json!({ "path": path })),
            ("list_directory", json!({ "path": format!("{path}/") })),
            ("directory_tree", json!({ "path": format!("{path}/") })),
            ("search_files", json!({ "path": format!("{path}/"), "pattern": "*" })),
            ("write_file", json!({ "path": path, "content": "pwned" })),
            (
                "edit_file",
                json!({ "path": path, "edits": [{"old_text": "TOP", "new_text": "pwned"}] }),
            ),
            ("create_directory", json!({ "path": format!("{path}/made") })),
            (
                "move_file",
                json!({ "source": "hello.txt", "destination": format!("{path}/moved") }),
            ),
            (
                "move_file",
                json!({ "source": format!("{path}/inner"), "destination": "moved-in" }),
            ),
        ] {
            let result = client.tool(tool, args.clone()).await;
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(!text.contains(SECRET), "{tool} {args}: {result}");
            assert_eq!(result["isError"], true, "{tool} {args} was not refused: {result}");
        }
    }
    // Nothing outside changed, nothing was created or moved.
    assert_eq!(fs::read_to_string(f.outside.join("secret.txt")).unwrap(), SECRET);
    assert_eq!(fs::read_dir(&f.outside).unwrap().count(), 1);
    assert!(f.root.join("hello.txt").is_file());
    assert!(!f.root.join("moved-in").exists());
}

#[tokio::test]
async fn resource_uris_that_escape_are_refused() {
    let f = fixture();
    let client = client_for(&config(&f.root, false));
    let root_uri = format!("file://{}", f.root.display());
    for (uri, fragment) in [
        (format!("{root_uri}/..%2Foutside%2Fsecret.txt"), "`..`"),
        (format!("{root_uri}/%2E%2E/outside/secret.txt"), "`..`"),
        (format!("{root_uri}/link_out"), "leads outside its root"),
        (format!("{root_uri}/dir_out/secret.txt"), "leads outside its root"),
        (format!("{root_uri}/hard_out"), "hard links"),
        (format!("{root_uri}/hello.txt%00.png"), "NUL byte"),
    ] {
        let error = client
            .request("resources/read", json!({ "uri": uri }))
            .await
            .unwrap_err();
        let message = error["message"].as_str().unwrap();
        assert_eq!(error["code"], -32602, "{uri}: {error}");
        assert!(message.contains(fragment), "{uri}: {message}");
    }
    let missing = client
        .request("resources/read", json!({ "uri": format!("{root_uri}/nope.txt") }))
        .await
        .unwrap_err();
    assert!(missing["message"].as_str().unwrap().contains("Resource not found"));
    // A file elsewhere on disk is not a resource of this server at all.
    let elsewhere = format!("file://{}/secret.txt", f.outside.display());
    assert!(
        client
            .request("resources/read", json!({ "uri": elsewhere }))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn a_symbolic_link_swapped_in_while_reading_never_leaks() {
    let f = fixture();
    let client = Arc::new(client_for(&config(&f.root, false)));
    let swap = f.root.join("swap");
    fs::write(&swap, "inside").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (root, outside, stop) = (f.root.clone(), f.outside.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // Atomic replacements: a regular file, then a link pointing out.
                fs::write(root.join("swap.file"), "inside").unwrap();
                fs::rename(root.join("swap.file"), root.join("swap")).unwrap();
                let _ = fs::remove_file(root.join("swap.link"));
                symlink(outside.join("secret.txt"), root.join("swap.link")).unwrap();
                fs::rename(root.join("swap.link"), root.join("swap")).unwrap();
                flips += 1;
            }
            flips
        })
    };
    // Read until both states were seen (the file, and the link pointing
    // out): only then did a read race the swap both ways. Bounded, so a
    // swapper that never gets to run fails the test instead of hanging it.
    let (mut read, mut outside, mut missing) = (0u32, 0u32, 0u32);
    for _ in 0..20_000 {
        let result = client.tool("read_file", json!({"path": "swap"})).await;
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(!text.contains(SECRET), "the secret leaked: {result}");
        if result["isError"] == true {
            if text.contains("leads outside its root") {
                outside += 1;
            } else {
                assert!(text.contains("does not exist"), "{text}");
                missing += 1;
            }
        } else {
            assert_eq!(text, "inside");
            read += 1;
        }
        if read >= 20 && outside >= 20 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = swapper.join().unwrap();
    assert!(
        flips > 0 && read >= 20 && outside >= 20,
        "the reads did not see both sides of the swap: flips {flips}, read {read}, refused as outside {outside}, missing {missing}"
    );
}

#[tokio::test]
async fn read_tools_return_text_ranges_media_listings_and_info() {
    let f = fixture();
    let client = client_for(&config(&f.root, false));

    let roots = client.ok("list_roots", json!({})).await;
    assert_eq!(roots["roots"][0]["name"], "work");
    assert_eq!(roots["roots"][0]["writable"], false);

    let whole = client.tool("read_file", json!({"path": "hello.txt"})).await;
    assert_eq!(whole["content"][0]["text"], "hello\nworld\n");
    let s = &whole["structuredContent"];
    assert_eq!((s["size"].clone(), s["truncated"].clone()), (json!(12), json!(false)));
    let etag = s["etag"].as_str().unwrap().to_owned();
    let range = client
        .ok("read_file", json!({"path": "hello.txt", "offset": 6, "length": 3}))
        .await;
    assert_eq!(
        (range["text"].clone(), range["truncated"].clone()),
        (json!("wor"), json!(true))
    );
    let same = client
        .ok("read_file", json!({"path": "hello.txt", "if_none_match": etag}))
        .await;
    assert_eq!((same["notModified"].clone(), same.get("text")), (json!(true), None));
    // A window ending inside "€" stops before it; the next starts there.
    let cut = client.ok("read_file", json!({"path": "utf8.txt", "length": 5})).await;
    assert_eq!((cut["text"].clone(), cut["length"].clone()), (json!("añb"), json!(4)));
    let rest = client.ok("read_file", json!({"path": "utf8.txt", "offset": 4})).await;
    assert_eq!(rest["text"], "€c");
    assert!(
        client
            .refused("read_file", json!({"path": "binary.bin"}))
            .await
            .contains("not UTF-8 text")
    );
    assert!(
        client
            .refused("read_file", json!({"path": "sub"}))
            .await
            .contains("is a directory")
    );
    assert!(
        client
            .refused("read_file", json!({"path": "hello.txt", "offset": 99}))
            .await
            .contains("past the end")
    );
    assert!(
        client
            .refused("read_file", json!({"path": "x", "root": "nope"}))
            .await
            .contains("no root named \"nope\"")
    );
    // A link that stays inside the root is followed.
    assert_eq!(
        client.ok("read_file", json!({"path": "link_in"})).await["text"],
        "hello\nworld\n"
    );

    let media = client.tool("read_media", json!({"path": "pixel.png"})).await;
    assert_eq!(media["content"][0]["type"], "image");
    assert_eq!(media["content"][0]["mimeType"], "image/png");
    assert!(
        client
            .refused("read_media", json!({"path": "hello.txt"}))
            .await
            .contains("not an image")
    );

    let listing = client.ok("list_directory", json!({"path": "."})).await;
    let kinds: Vec<(String, String)> = listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(kinds.contains(&("sub".into(), "directory".into())));
    assert!(kinds.contains(&("link_out".into(), "symlink".into())));
    assert!(kinds.contains(&("fifo".into(), "other".into())));

    let tree = client.ok("directory_tree", json!({"path": "sub", "depth": 2})).await;
    let deeper = tree["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "deeper")
        .unwrap();
    let deepest = deeper["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "deepest")
        .unwrap();
    assert!(deepest.get("children").is_none(), "depth 2 stops there: {tree}");
    let link_up = tree["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "link_up")
        .unwrap();
    assert_eq!(link_up["kind"], "symlink");
    assert!(link_up.get("children").is_none());

    let found = client.ok("search_files", json!({"pattern": "*.rs"})).await;
    assert_eq!(
        found["matches"],
        json!(["sub/deeper/deep.rs", "sub/deeper/deepest/bottom.rs"])
    );
    let found = client
        .ok(
            "search_files",
            json!({"pattern": "deeper/*.rs", "path": "sub", "exclude": ["**/deepest/**"]}),
        )
        .await;
    assert_eq!(found["matches"], json!(["sub/deeper/deep.rs"]));
    let capped = client
        .ok("search_files", json!({"pattern": "*", "max_results": 2}))
        .await;
    assert_eq!(
        (capped["matches"].as_array().unwrap().len(), capped["truncated"].clone()),
        (2, json!(true))
    );
    assert!(
        client
            .refused("search_files", json!({"pattern": "a[", "path": "."}))
            .await
            .contains("bad glob")
    );

    let info = client.ok("get_file_info", json!({"path": "hello.txt"})).await;
    assert_eq!(
        (info["kind"].clone(), info["size"].clone(), info["links"].clone()),
        (json!("file"), json!(12), json!(1))
    );
    assert!(info["modified"].as_str().unwrap().ends_with('Z'));
    let link = client.ok("get_file_info", json!({"path": "link_out"})).await;
    assert_eq!(link["kind"], "symlink", "a link is described, not followed: {link}");
}

#[tokio::test]
async fn write_tools_change_only_writable_roots_and_never_half_write() {
    let f = fixture();
    let read_only = client_for(&config(&f.root, false));
    let names = read_only.server.tools().names();
    assert!(
        !names.contains(&"write_file".to_owned()),
        "no write tools without a writable root: {names:?}"
    );

    // Two roots, one writable: writes under the read-only one are refused.
    let spare = f.root.join("sub");
    let mut both = config(&f.root, true);
    both.limits.max_write_bytes = 64;
    both.roots.push(RootConfig {
        path: spare,
        name: Some("ro".into()),
        writable: false,
    });
    let client = client_for(&both);
    let refused = client
        .refused("write_file", json!({"path": "x.txt", "root": "ro", "content": "a"}))
        .await;
    assert!(refused.contains("root \"ro\" is read-only"), "{refused}");
    assert!(!f.root.join("sub/x.txt").exists());

    let made = client
        .ok(
            "write_file",
            json!({"path": "draft.txt", "content": "one\ntwo\nthree\n"}),
        )
        .await;
    assert_eq!(
        (made["created"].clone(), made["bytes"].clone()),
        (json!(true), json!(14))
    );
    let draft = f.root.join("draft.txt");
    assert_eq!(fs::read_to_string(&draft).unwrap(), "one\ntwo\nthree\n");
    let etag = made["etag"].as_str().unwrap().to_owned();
    let exists = client
        .refused(
            "write_file",
            json!({"path": "draft.txt", "content": "x", "create_only": true}),
        )
        .await;
    assert!(exists.contains("already exists"), "{exists}");
    let stale = client
        .refused(
            "write_file",
            json!({"path": "draft.txt", "content": "x", "if_match": "\"old\""}),
        )
        .await;
    assert!(stale.contains("changed since it was read"), "{stale}");
    let too_big = client
        .refused("write_file", json!({"path": "big.txt", "content": "x".repeat(65)}))
        .await;
    assert!(too_big.contains("the limit for this tool is 64 bytes"), "{too_big}");
    assert_eq!(fs::read_to_string(&draft).unwrap(), "one\ntwo\nthree\n");
    let replaced = client
        .ok(
            "write_file",
            json!({"path": "draft.txt", "content": "one\ntwo\nthree\nfour\n", "if_match": etag}),
        )
        .await;
    assert_eq!(replaced["created"], false);

    let edit = json!([{"old_text": "two", "new_text": "TWO"}]);
    let dry = client
        .ok(
            "edit_file",
            json!({"path": "draft.txt", "edits": edit, "dry_run": true}),
        )
        .await;
    let diff = dry["diff"].as_str().unwrap();
    assert!(
        diff.contains("--- a/draft.txt") && diff.contains("-two\n") && diff.contains("+TWO\n"),
        "{diff}"
    );
    assert_eq!(dry["applied"], false);
    assert_eq!(fs::read_to_string(&draft).unwrap(), "one\ntwo\nthree\nfour\n");
    let done = client
        .ok("edit_file", json!({"path": "draft.txt", "edits": edit}))
        .await;
    assert_eq!(
        (done["applied"].clone(), done["diff"].clone()),
        (json!(true), dry["diff"].clone())
    );
    assert_eq!(fs::read_to_string(&draft).unwrap(), "one\nTWO\nthree\nfour\n");
    let ambiguous = client
        .refused(
            "edit_file",
            json!({"path": "draft.txt", "edits": [{"old_text": "o", "new_text": "0"}]}),
        )
        .await;
    assert!(ambiguous.contains("occurs 2 times"), "{ambiguous}");
    assert_eq!(fs::read_to_string(&draft).unwrap(), "one\nTWO\nthree\nfour\n");

    let dir = client.ok("create_directory", json!({"path": "notes/2025"})).await;
    assert_eq!(dir["created"], true);
    assert_eq!(
        client.ok("create_directory", json!({"path": "notes/2025"})).await["created"],
        false
    );
    client
        .ok(
            "write_file",
            json!({"path": "notes/2025/today.md", "content": "# Today"}),
        )
        .await;
    let moved = client
        .ok(
            "move_file",
            json!({"source": "draft.txt", "destination": "notes/draft.txt"}),
        )
        .await;
    assert_eq!(moved["destination"], "notes/draft.txt");
    assert!(!draft.exists() && f.root.join("notes/draft.txt").is_file());
    let taken = client
        .refused(
            "move_file",
            json!({"source": "hello.txt", "destination": "notes/draft.txt"}),
        )
        .await;
    assert!(taken.contains("already exists"), "{taken}");

    // Files with two names and links are not written through.
    fs::write(f.root.join("h1"), "h").unwrap();
    fs::hard_link(f.root.join("h1"), f.root.join("h2")).unwrap();
    assert!(
        client
            .refused("write_file", json!({"path": "h1", "content": "x"}))
            .await
            .contains("hard links")
    );
    assert!(
        client
            .refused("write_file", json!({"path": "link_in", "content": "x"}))
            .await
            .contains("symbolic link")
    );
    assert_eq!(fs::read_to_string(f.root.join("hello.txt")).unwrap(), "hello\nworld\n");

    // No temporary file is left anywhere.
    let found = client.ok("search_files", json!({"pattern": "*toolport-tmp*"})).await;
    assert_eq!(found["matches"], json!([]));
}

#[tokio::test]
async fn file_resources_carry_etags_cache_hints_and_answer_revalidation() {
    let f = fixture();
    let client = client_for(&config(&f.root, false));
    let listed = client.request("resources/list", json!({})).await.unwrap();
    let uris: Vec<&str> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    let hello = format!("file://{}/hello.txt", f.root.display());
    assert!(uris.contains(&hello.as_str()), "{uris:?}");
    assert!(!uris.iter().any(|u| u.ends_with("/sub")), "directories are not listed");
    let templates = client.request("resources/templates/list", json!({})).await.unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        format!("file://{}/{{+path}}", f.root.display())
    );

    let read = client.request("resources/read", json!({"uri": hello})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "hello\nworld\n");
    assert_eq!(
        (read["ttlMs"].clone(), read["cacheScope"].clone()),
        (json!(2000), json!("private"))
    );
    let etag = read["contents"][0]["_meta"]["dev.toolport/etag"].clone();
    assert!(etag.is_string());
    let again = client
        .request(
            "resources/read",
            json!({"uri": hello, "_meta": {"dev.toolport/ifNoneMatch": etag}}),
        )
        .await
        .unwrap();
    assert_eq!(again["contents"][0]["_meta"]["dev.toolport/notModified"], true);
    assert_eq!(again["contents"][0]["text"], "");
    // Through the template: a nested file, and binary content as a blob.
    let nested = format!("file://{}/sub/nested.txt", f.root.display());
    let read = client.request("resources/read", json!({"uri": nested})).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "nested");
    let png = format!("file://{}/pixel.png", f.root.display());
    let read = client.request("resources/read", json!({"uri": png})).await.unwrap();
    assert_eq!(read["contents"][0]["mimeType"], "image/png");
    assert!(read["contents"][0]["blob"].is_string());
    // A change gives a new etag, and the full contents again.
    fs::write(f.root.join("hello.txt"), "changed").unwrap();
    let changed = client
        .request(
            "resources/read",
            json!({"uri": hello, "_meta": {"dev.toolport/ifNoneMatch": etag}}),
        )
        .await
        .unwrap();
    assert_eq!(changed["contents"][0]["text"], "changed");
    assert_ne!(changed["contents"][0]["_meta"]["dev.toolport/etag"], etag);
}

#[tokio::test]
async fn client_roots_narrow_access_but_never_widen_it() {
    let f = fixture();
    let mut client = client_for(&config(&f.root, false));
    client.capabilities = json!({"roots": {}});
    let sub = format!("file://{}/sub", f.root.display());
    let outside = format!("file://{}", f.outside.display());
    // 2026-07-28: the server asks for the roots (MRTR), the client answers on a retry.
    let call = |path: &str| json!({"name": "list_directory", "arguments": {"path": path}});
    let first = client.request("tools/call", call("sub")).await.unwrap();
    assert_eq!(first["resultType"], "input_required", "{first}");
    let (key, asked) = first["inputRequests"].as_object().unwrap().iter().next().unwrap();
    assert_eq!(asked["method"], "roots/list");
    let answer = json!({"roots": [{"uri": sub, "name": "sub"}, {"uri": outside, "name": "elsewhere"}]});
    let retry = |path: &str| {
        let mut params = call(path);
        params["inputResponses"] = json!({ key.as_str(): answer.clone() });
        params["requestState"] = first["requestState"].clone();
        params
    };
    let inside = client.request("tools/call", retry("sub")).await.unwrap();
    assert_ne!(inside["isError"], true, "{inside}");
    assert_eq!(inside["structuredContent"]["path"], "sub");
    // The requestState is bound to the arguments: other paths ask again.
    let mut wider = call(".");
    wider["inputResponses"] = json!({ key.as_str(): answer.clone() });
    let wider = client.request("tools/call", wider).await.unwrap();
    assert_eq!(wider["isError"], true, "{wider}");
    assert!(
        wider["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("outside the roots this client allows")
    );
    // A client root outside every configured root grants nothing.
    let mut only_outside = call("../outside");
    only_outside["arguments"]["path"] = json!(".");
    only_outside["inputResponses"] = json!({ key.as_str(): {"roots": [{"uri": outside}]} });
    let nothing = client.request("tools/call", only_outside).await.unwrap();
    assert!(
        nothing["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("outside the roots this client allows")
    );
}
