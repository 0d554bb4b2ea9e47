//! The headless core (`draftsmith::headless`, `cargo run --example core`): the worker protocol
//! as JSON lines, the store file kept between runs, and the real example binary.
#![cfg(not(target_arch = "wasm32"))]

use std::io::{BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;

use draftsmith::headless::{run_cli, Headless};
use draftsmith::store::{MemoryStore, Table};
use draftsmith::{ManualClock, SequentialIds};
use serde_json::{json, Value};

/// Serve `input` and give the output as JSON values, one a line.
fn serve(headless: &Headless, input: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    headless
        .serve_lines(Cursor::new(input), &mut out)
        .expect("serve");
    parse_lines(&out)
}

fn parse_lines(out: &[u8]) -> Vec<Value> {
    let text = String::from_utf8(out.to_vec()).expect("utf-8 output");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "output ends mid-line: {text}"
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn lines(requests: &[Value]) -> Vec<u8> {
    let mut text = String::new();
    for r in requests {
        text.push_str(&r.to_string());
        text.push('\n');
    }
    text.into_bytes()
}

fn deterministic() -> Headless {
    Headless::new(
        MemoryStore::new(),
        None,
        Rc::new(ManualClock::new(1_000)),
        Rc::new(SequentialIds::new("id")),
    )
    .expect("headless")
}

fn response(out: &[Value], id: Value) -> &Value {
    out.iter()
        .find(|v| v["kind"] == "response" && v["id"] == id)
        .unwrap_or_else(|| panic!("no response {id} in {out:#?}"))
}

fn position(out: &[Value], pred: impl Fn(&Value) -> bool) -> usize {
    out.iter()
        .position(pred)
        .unwrap_or_else(|| panic!("not found in {out:#?}"))
}

fn create(name: &str, text: &str) -> Value {
    json!({"type": "create_project", "params": {"name": name, "chapters": [{"title": "One", "text": text}]}})
}

fn with_id(id: u64, mut request: Value) -> Value {
    request["id"] = json!(id);
    request
}

fn append(text: &str) -> Value {
    json!({"type": "execute", "params": {"tool": "append_to_manuscript", "args": {"text": text}}})
}

/// A fresh folder for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("example-core-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn requests_get_their_events_then_their_response_as_json_lines() {
    let core = deterministic();
    let out = serve(
        &core,
        &lines(&[
            json!({"id": 1, "type": "hello"}),
            with_id(2, create("Lighthouse", "It was dark.")),
            with_id(3, append("Then the lamp.")),
            json!({"id": "four", "type": "get_chapter"}),
        ]),
    );
    let hello = response(&out, json!(1));
    assert_eq!(hello["ok"], true);
    assert_eq!(hello["result"]["name"], "draftsmith");
    assert!(hello["result"]["capabilities"]
        .as_array()
        .expect("capabilities")
        .contains(&json!("execute")));

    let created = response(&out, json!(2));
    assert_eq!(created["result"]["name"], "Lighthouse");

    let executed = response(&out, json!(3));
    assert_eq!(executed["ok"], true, "{executed}");
    assert_eq!(executed["result"]["status"], "success");

    // The edit and saved events of `execute` come after the previous response and before
    // its own, in the order the core emitted them.
    let after_create = position(&out, |v| v["kind"] == "response" && v["id"] == 2);
    let edit = position(&out, |v| v["kind"] == "event" && v["type"] == "edit");
    let saved = out
        .iter()
        .rposition(|v| v["kind"] == "event" && v["type"] == "saved")
        .expect("saved");
    let execute_response = position(&out, |v| v["kind"] == "response" && v["id"] == 3);
    assert!(after_create < edit && edit < saved && saved < execute_response);
    assert_eq!(out[edit]["data"]["origin"], "user");
    assert!(out[edit]["data"]["changeset"]
        .to_string()
        .contains("Then the lamp."));

    let chapter = response(&out, json!("four"));
    assert_eq!(
        chapter["result"]["text"], "It was dark.\n\nThen the lamp.",
        "{chapter}"
    );
    // Nothing after the last response.
    assert_eq!(out.last(), Some(chapter));
}

#[test]
fn blank_and_malformed_lines_do_not_stop_the_core() {
    let core = deterministic();
    let mut input = b"\n   \n\r\nnot json\n{\"id\": 7}\n[1,2]\n".to_vec();
    input.extend_from_slice(b"{\"id\": 8, \"type\": \"hello\"}\r\n");
    input.extend_from_slice(b"{\"id\": 9, \"type\": \"he\xffllo\"}\n");
    input.extend_from_slice(b"{\"id\": 10, \"type\": \"no_such_request\"}\n");
    // The last line has no newline.
    input.extend_from_slice(b"{\"id\": 11, \"type\": \"hello\"}");
    let out = serve(&core, &input);
    assert_eq!(out.len(), 7, "one response per non-blank line: {out:#?}");
    for v in &out[0..3] {
        assert_eq!(v["kind"], "response");
        assert_eq!(v["ok"], false);
        assert_eq!(v["error"]["code"], "malformed", "{v}");
    }
    assert_eq!(out[0]["id"], Value::Null);
    // A readable id is echoed even when the rest is wrong.
    assert_eq!(out[1]["id"], 7);
    assert!(out[1]["error"]["message"]
        .as_str()
        .expect("message")
        .contains("type"));
    assert_eq!(out[3]["id"], 8);
    assert_eq!(out[3]["ok"], true, "a CRLF line is served");
    assert_eq!(out[4]["error"]["code"], "malformed");
    assert_eq!(out[4]["id"], Value::Null);
    let message = out[4]["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("line 8") && message.contains("not UTF-8"),
        "{message}"
    );
    assert_eq!(out[5]["error"]["code"], "unknown_request");
    assert_eq!(out[6]["id"], 11);
    assert_eq!(out[6]["ok"], true);
}

/// `len` bytes of `x` then a newline, without holding them all.
struct LongLine {
    left: usize,
}

impl Read for LongLine {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let n = buf.len().min(self.left);
        buf[..n].fill(b'x');
        self.left -= n;
        if self.left == 0 {
            buf[n - 1] = b'\n';
        }
        Ok(n)
    }
}

#[test]
fn an_over_long_line_is_refused_and_skipped() {
    let core = deterministic();
    let too_long = draftsmith::protocol::MAX_MESSAGE_BYTES + 1000;
    let input = LongLine { left: too_long + 1 }
        .chain(Cursor::new(b"{\"id\": 2, \"type\": \"hello\"}\n".to_vec()));
    let mut out = Vec::new();
    core.serve_lines(BufReader::new(input), &mut out)
        .expect("serve");
    let out = parse_lines(&out);
    assert_eq!(out.len(), 2, "{out:#?}");
    assert_eq!(out[0]["error"]["code"], "malformed");
    let message = out[0]["error"]["message"].as_str().expect("message");
    assert!(message.contains(&format!("{too_long} bytes")), "{message}");
    assert_eq!(out[1]["id"], 2);
    assert_eq!(out[1]["ok"], true);
}

#[test]
fn run_answers_no_model() {
    let core = deterministic();
    let out = serve(
        &core,
        &lines(&[
            with_id(1, create("P", "Text.")),
            json!({"id": 2, "type": "run", "params": {"prompt": "Tighten chapter 1."}}),
        ]),
    );
    assert_eq!(response(&out, json!(2))["error"]["code"], "no_model");
}

#[test]
fn a_panic_is_reported_and_a_fresh_core_serves_the_same_store() {
    let core = deterministic();
    let out = serve(
        &core,
        &lines(&[
            with_id(1, create("Kept", "Still here.")),
            json!({"id": 2, "type": "debug_panic", "params": {"message": "boom"}}),
            json!({"id": 3, "type": "list_projects"}),
        ]),
    );
    let panic = position(&out, |v| v["type"] == "panic");
    assert_eq!(out[panic]["data"]["message"], "boom");
    let failed = response(&out, json!(2));
    assert_eq!(failed["error"]["code"], "internal");
    assert!(failed["error"]["message"]
        .as_str()
        .expect("message")
        .contains("boom"));
    let ready = position(&out, |v| v["type"] == "ready");
    assert_eq!(out[ready]["data"]["instance"], 2);
    let listed = response(&out, json!(3));
    assert_eq!(listed["ok"], true);
    assert!(listed["result"].to_string().contains("Kept"), "{listed}");
}

fn project_id(out: &[Value], request: u64) -> String {
    response(out, json!(request))["result"]["id"]
        .as_str()
        .expect("project id")
        .to_string()
}

#[test]
fn the_store_file_keeps_projects_between_runs() {
    let dir = scratch("round-trip");
    let file = dir.join("novel.json");

    // First run: nothing is written for requests that change nothing.
    let first = Headless::open(Some(file.clone())).expect("open");
    let out = serve(&first, &lines(&[json!({"id": 1, "type": "hello"})]));
    assert_eq!(out.len(), 1);
    assert!(!file.exists(), "a read-only request wrote the store file");
    let out = serve(
        &first,
        &lines(&[
            with_id(2, create("Lighthouse", "It was dark.")),
            with_id(3, append("Then the lamp.")),
        ]),
    );
    let lighthouse = project_id(&out, 2);
    drop(first);
    let saved: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("store file")).expect("json");
    assert_eq!(saved["format"], "draftsmith-memory-store");
    // The chapter's checkpoint, and the change after it.
    assert!(saved["tables"]["chapters"]
        .to_string()
        .contains("It was dark."));
    assert!(saved["tables"]["changes"]
        .to_string()
        .contains("\\n\\nThen the lamp."));
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["novel.json".to_string()]);

    // Second run on the same file: the project and its text are there; a new project
    // does not collide with the first run's ids.
    let second = Headless::open(Some(file.clone())).expect("reopen");
    let out = serve(
        &second,
        &lines(&[
            json!({"id": 1, "type": "list_projects"}),
            json!({"id": 2, "type": "open_project", "params": {"id": lighthouse}}),
            json!({"id": 3, "type": "get_chapter"}),
            json!({"id": 4, "type": "history"}),
            with_id(5, create("Harbour", "Boats.")),
        ]),
    );
    let listed = response(&out, json!(1))["result"].to_string();
    assert!(listed.contains("Lighthouse"), "{listed}");
    assert_eq!(
        response(&out, json!(3))["result"]["text"],
        "It was dark.\n\nThen the lamp."
    );
    assert_eq!(
        response(&out, json!(4))["result"]["canUndo"],
        true,
        "{}",
        response(&out, json!(4))
    );
    let harbour = project_id(&out, 5);
    assert_ne!(harbour, lighthouse);
    let harbour_chapter = response(&out, json!(5))["result"]["chapters"][0]["id"].clone();
    drop(second);

    // Third run: both projects, with distinct chapter ids too.
    let third = Headless::open(Some(file.clone())).expect("reopen again");
    assert_eq!(third.store().len(Table::Projects), 2);
    let out = serve(
        &third,
        &lines(&[
            json!({"id": 1, "type": "open_project", "params": {"id": lighthouse}}),
            json!({"id": 2, "type": "undo"}),
            json!({"id": 3, "type": "get_chapter"}),
        ]),
    );
    let lighthouse_chapter = response(&out, json!(3))["result"]["id"].clone();
    assert_ne!(lighthouse_chapter, harbour_chapter);
    assert_eq!(response(&out, json!(3))["result"]["text"], "It was dark.");
    drop(third);
    let fourth = Headless::open(Some(file)).expect("reopen after undo");
    let out = serve(
        &fourth,
        &lines(&[
            json!({"id": 1, "type": "open_project", "params": {"id": lighthouse}}),
            json!({"id": 2, "type": "get_chapter"}),
        ]),
    );
    assert_eq!(
        response(&out, json!(2))["result"]["text"],
        "It was dark.",
        "the undo was kept"
    );
}

#[test]
fn an_unwritable_store_file_is_reported_and_the_data_kept_in_memory() {
    let dir = scratch("unwritable");
    let file = dir.join("missing-folder").join("novel.json");
    let core = Headless::open(Some(file.clone())).expect("open");
    let out = serve(
        &core,
        &lines(&[
            with_id(1, create("P", "Text.")),
            json!({"id": 2, "type": "get_chapter"}),
        ]),
    );
    let error = position(&out, |v| v["type"] == "storage_error");
    let created = position(&out, |v| v["id"] == 1);
    assert!(error < created, "the storage error precedes the response");
    assert_eq!(out[error]["data"]["code"], "storage_failed");
    assert!(out[error]["data"]["message"]
        .as_str()
        .expect("message")
        .contains("novel.json"));
    assert_eq!(out[created]["ok"], true);
    assert_eq!(response(&out, json!(2))["result"]["text"], "Text.");
    // Every later request tries again (and says so while it fails); once the folder
    // exists, the next request writes the file.
    let retry = response(&out, json!(2));
    assert!(
        out.iter().filter(|v| v["type"] == "storage_error").count() == 2,
        "{retry}"
    );
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    let out = serve(&core, &lines(&[with_id(3, append("More."))]));
    assert!(out.iter().all(|v| v["type"] != "storage_error"), "{out:#?}");
    let saved = std::fs::read_to_string(&file).expect("written now");
    assert!(saved.contains("\"text\": \"Text.\""), "{saved}");
    assert!(saved.contains("\\n\\nMore."), "{saved}");
}

fn cli(args: &[&str], input: &[u8]) -> (u8, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = run_cli(
        args.iter().map(|a| a.to_string()),
        Cursor::new(input.to_vec()),
        &mut out,
        &mut err,
    );
    (
        status,
        String::from_utf8(out).expect("utf-8"),
        String::from_utf8(err).expect("utf-8"),
    )
}

#[test]
fn a_malformed_store_file_is_an_error_and_is_left_unchanged() {
    let dir = scratch("malformed");
    let cases: [(&str, &[u8], &str); 4] = [
        ("truncated.json", b"{\"format\": \"draftsmith-memory-store\", \"ver", "not valid JSON"),
        ("other.json", b"{\"projects\": []}", "'format' must be"),
        (
            "badrecord.json",
            b"{\"format\": \"draftsmith-memory-store\", \"version\": 1, \"tables\": {\"chapters\": [{\"text\": \"x\"}]}}",
            "non-empty string 'id'",
        ),
        ("binary.json", b"\xff\xfe\x00garbage", "not valid JSON"),
    ];
    for (name, content, expected) in cases {
        let file = dir.join(name);
        std::fs::write(&file, content).expect("write");
        let path = file.to_str().expect("path");
        let (status, out, err) = cli(
            &["--store", path],
            b"{\"id\":1,\"type\":\"create_project\",\"params\":{\"name\":\"P\"}}\n",
        );
        assert_eq!(status, 2, "{name}: {err}");
        assert!(out.is_empty(), "{name}: served requests anyway: {out}");
        assert!(
            err.contains(name) && err.contains(expected) && err.contains("left unchanged"),
            "{name}: {err}"
        );
        assert_eq!(
            std::fs::read(&file).expect("read"),
            content,
            "{name} changed"
        );
    }
    // A folder where the file should be cannot be read.
    let (status, _, err) = cli(&["--store", dir.to_str().expect("dir")], b"");
    assert_eq!(status, 2);
    assert!(err.contains("could not read the store file"), "{err}");
}

#[test]
fn an_empty_store_file_is_an_empty_store() {
    let dir = scratch("empty");
    let file = dir.join("new.json");
    std::fs::write(&file, b"\n").expect("write");
    let path = format!("--store={}", file.display());
    let (status, out, err) = cli(
        &[&path],
        b"{\"id\":1,\"type\":\"create_project\",\"params\":{\"name\":\"Fresh\"}}\n",
    );
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("\"ok\":true"), "{out}");
    assert!(std::fs::read_to_string(&file)
        .expect("read")
        .contains("Fresh"));
}

#[test]
fn the_command_line_has_help_and_refuses_unknown_arguments() {
    let (status, out, _) = cli(&["--help"], b"");
    assert_eq!(status, 0);
    assert!(
        out.contains("--store FILE.json") && out.contains("no_model"),
        "{out}"
    );
    for bad in [
        &["--stor", "x.json"][..],
        &["--store"][..],
        &["--store="][..],
        &["--store", "a.json", "--store", "b.json"][..],
    ] {
        let (status, out, err) = cli(bad, b"{\"id\":1,\"type\":\"hello\"}\n");
        assert_eq!(status, 2, "{bad:?}");
        assert!(out.is_empty(), "{bad:?}");
        assert!(err.contains("usage:"), "{bad:?}: {err}");
    }
    // No arguments: an in-memory store, served to the end of the input.
    let (status, out, _) = cli(&[], b"{\"id\":1,\"type\":\"hello\"}\n");
    assert_eq!(status, 0);
    assert_eq!(out.lines().count(), 1);
}

/// The real example binary, `target/<profile>/examples/core`. `cargo test` builds examples,
/// but `cargo test --test example_core` alone does not, and an earlier build may be stale:
/// so this asks cargo to bring it up to date (a no-op when it is).
fn example_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let target_dir = profile_dir.parent().expect("target dir");
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--quiet",
            "--example",
            "core",
            "--profile",
            profile,
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo build --example core");
    assert!(status.success(), "cargo build --example core failed");
    profile_dir
        .join("examples")
        .join(format!("core{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn the_example_binary_answers_hello_and_execute_on_stdin() {
    let binary = example_binary();
    let mut child = Command::new(&binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {}: {e}", binary.display()));
    let input = lines(&[
        json!({"id": 1, "type": "hello"}),
        with_id(2, create("Pipe", "It was dark.")),
        with_id(3, append("Then light.")),
    ]);
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&input).expect("write stdin");
        // Dropping stdin ends the input: the core ends cleanly.
    }
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
    let out = parse_lines(&output.stdout);
    let hello = response(&out, json!(1));
    assert_eq!(hello["ok"], true);
    assert_eq!(hello["result"]["name"], "draftsmith");
    let executed = response(&out, json!(3));
    assert_eq!(executed["ok"], true, "{executed}");
    assert_eq!(executed["result"]["status"], "success");
    assert!(out
        .iter()
        .any(|v| v["kind"] == "event" && v["type"] == "edit"));
}
