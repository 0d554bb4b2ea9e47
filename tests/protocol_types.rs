//! The protocol's TypeScript declarations and docs agree with the request and event
//! declarations (`src/core/requests.rs`, `src/core/events.rs`).

use draftsmith::core::{typescript, EVENTS, REQUESTS};

const DECLARATIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/packages/draftsmith/protocol.d.ts"
);

/// The committed `protocol.d.ts` is what the request types generate. Run with
/// `DRAFTSMITH_WRITE_TS=1` to write it after changing a request.
#[test]
fn protocol_d_ts_is_generated_from_the_requests() {
    let generated = typescript();
    if std::env::var_os("DRAFTSMITH_WRITE_TS").is_some() {
        std::fs::write(DECLARATIONS, &generated).expect("write protocol.d.ts");
    }
    let committed = std::fs::read_to_string(DECLARATIONS).unwrap_or_default();
    assert!(
        committed == generated,
        "packages/draftsmith/protocol.d.ts is not what src/core/requests.rs generates; \
         regenerate it: DRAFTSMITH_WRITE_TS=1 cargo test --test protocol_types"
    );
}

/// Every request is in the generated union and the params map, once, in order.
#[test]
fn the_declarations_name_every_request() {
    let ts = typescript();
    let union: Vec<&str> = ts
        .lines()
        .filter_map(|l| l.trim().strip_prefix("| '"))
        .map(|l| l.trim_end_matches('\''))
        .collect();
    assert_eq!(union, REQUESTS);
    let params = ts
        .split("export interface RequestParams {")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("RequestParams");
    let keys: Vec<&str> = params
        .lines()
        .filter_map(|l| l.trim().split_once(':').map(|(k, _)| k))
        .filter(|k| !k.starts_with("/**"))
        .collect();
    assert_eq!(keys, REQUESTS);
}

/// `docs/protocol.md` describes exactly the requests the core serves.
#[test]
fn the_protocol_doc_lists_every_request() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
        .expect("docs/protocol.md");
    for name in REQUESTS {
        assert!(
            doc.contains(&format!("`{name}`")),
            "docs/protocol.md does not describe `{name}`"
        );
    }
}

/// Every event is in the generated `CoreEventMap`, once, in order.
#[test]
fn the_declarations_name_every_event() {
    let ts = typescript();
    let map = ts
        .split("export interface CoreEventMap {")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("CoreEventMap");
    let keys: Vec<&str> = map
        .lines()
        .filter_map(|l| l.trim().split_once(':').map(|(k, _)| k))
        .filter(|k| !k.starts_with("/**"))
        .collect();
    assert_eq!(keys, EVENTS);
}

/// `docs/protocol.md` describes every event the core emits.
#[test]
fn the_protocol_doc_lists_every_event() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md"))
        .expect("docs/protocol.md");
    let events = doc
        .split("## Events")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("an Events section");
    for name in EVENTS {
        assert!(
            events.contains(&format!("| `{name}` |")),
            "the events of docs/protocol.md do not describe `{name}`"
        );
    }
}
